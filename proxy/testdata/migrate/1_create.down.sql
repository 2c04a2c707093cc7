DROP TABLE t_dict;
DROP TABLE t_order;
DROP TABLE migrate_users;
