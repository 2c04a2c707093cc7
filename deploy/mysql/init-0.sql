-- Run once by the mysql:8.0 image on mysql-0's first start (docker-entrypoint-initdb.d):
-- the data sources' databases, their physical tables and the account
-- shardflake logs in with (deploy/rules.compose.yaml names all three).
CREATE USER IF NOT EXISTS 'shardflake'@'%' IDENTIFIED BY 'shardflake-secret';

CREATE DATABASE IF NOT EXISTS ds_0 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;
GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, CREATE TEMPORARY TABLES, LOCK TABLES, CREATE VIEW, SHOW VIEW ON ds_0.* TO 'shardflake'@'%';
CREATE TABLE IF NOT EXISTS ds_0.t_order_0 (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32) NOT NULL, PRIMARY KEY (order_id));
CREATE TABLE IF NOT EXISTS ds_0.t_order_1 (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32) NOT NULL, PRIMARY KEY (order_id));
CREATE TABLE IF NOT EXISTS ds_0.t_order_2 (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32) NOT NULL, PRIMARY KEY (order_id));
CREATE TABLE IF NOT EXISTS ds_0.t_order_3 (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32) NOT NULL, PRIMARY KEY (order_id));
CREATE TABLE IF NOT EXISTS ds_0.t_order_item_0 (item_id BIGINT NOT NULL, order_id BIGINT NOT NULL, user_id INT NOT NULL, product VARCHAR(64) NOT NULL, quantity INT NOT NULL, PRIMARY KEY (item_id));
CREATE TABLE IF NOT EXISTS ds_0.t_order_item_1 (item_id BIGINT NOT NULL, order_id BIGINT NOT NULL, user_id INT NOT NULL, product VARCHAR(64) NOT NULL, quantity INT NOT NULL, PRIMARY KEY (item_id));
CREATE TABLE IF NOT EXISTS ds_0.t_order_item_2 (item_id BIGINT NOT NULL, order_id BIGINT NOT NULL, user_id INT NOT NULL, product VARCHAR(64) NOT NULL, quantity INT NOT NULL, PRIMARY KEY (item_id));
CREATE TABLE IF NOT EXISTS ds_0.t_order_item_3 (item_id BIGINT NOT NULL, order_id BIGINT NOT NULL, user_id INT NOT NULL, product VARCHAR(64) NOT NULL, quantity INT NOT NULL, PRIMARY KEY (item_id));
CREATE TABLE IF NOT EXISTS ds_0.t_dict (code VARCHAR(32) NOT NULL, label VARCHAR(64) NOT NULL, PRIMARY KEY (code));

CREATE DATABASE IF NOT EXISTS ds_1 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci;
GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, CREATE TEMPORARY TABLES, LOCK TABLES, CREATE VIEW, SHOW VIEW ON ds_1.* TO 'shardflake'@'%';
CREATE TABLE IF NOT EXISTS ds_1.t_order_0 (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32) NOT NULL, PRIMARY KEY (order_id));
CREATE TABLE IF NOT EXISTS ds_1.t_order_1 (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32) NOT NULL, PRIMARY KEY (order_id));
CREATE TABLE IF NOT EXISTS ds_1.t_order_2 (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32) NOT NULL, PRIMARY KEY (order_id));
CREATE TABLE IF NOT EXISTS ds_1.t_order_3 (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32) NOT NULL, PRIMARY KEY (order_id));
CREATE TABLE IF NOT EXISTS ds_1.t_order_item_0 (item_id BIGINT NOT NULL, order_id BIGINT NOT NULL, user_id INT NOT NULL, product VARCHAR(64) NOT NULL, quantity INT NOT NULL, PRIMARY KEY (item_id));
CREATE TABLE IF NOT EXISTS ds_1.t_order_item_1 (item_id BIGINT NOT NULL, order_id BIGINT NOT NULL, user_id INT NOT NULL, product VARCHAR(64) NOT NULL, quantity INT NOT NULL, PRIMARY KEY (item_id));
CREATE TABLE IF NOT EXISTS ds_1.t_order_item_2 (item_id BIGINT NOT NULL, order_id BIGINT NOT NULL, user_id INT NOT NULL, product VARCHAR(64) NOT NULL, quantity INT NOT NULL, PRIMARY KEY (item_id));
CREATE TABLE IF NOT EXISTS ds_1.t_order_item_3 (item_id BIGINT NOT NULL, order_id BIGINT NOT NULL, user_id INT NOT NULL, product VARCHAR(64) NOT NULL, quantity INT NOT NULL, PRIMARY KEY (item_id));
CREATE TABLE IF NOT EXISTS ds_1.t_dict (code VARCHAR(32) NOT NULL, label VARCHAR(64) NOT NULL, PRIMARY KEY (code));

FLUSH PRIVILEGES;
