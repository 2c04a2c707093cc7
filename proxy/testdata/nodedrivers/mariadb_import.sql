-- Read by mariadb_app.js with importFile: statements the connector splits
-- and sends pipelined.
INSERT INTO t_order (user_id, status, amount) VALUES (60, 'imported-a', 1.50);
INSERT INTO t_order (user_id, status, amount) VALUES (60, 'imported-b', 2.50), (60, 'imported-c', 3.50);
UPDATE t_order SET amount = amount * 2 WHERE user_id = 60 AND status <> 'imported-a';
