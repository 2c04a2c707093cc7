-- A table without rules, the sharded orders (their key generated) and
-- the broadcast dictionary.
-- +goose Up
CREATE TABLE goose_users (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(32) NOT NULL,
  UNIQUE KEY uq_goose_users_name (name)
);
CREATE TABLE t_order (
  order_id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  user_id BIGINT NOT NULL,
  status VARCHAR(16) NOT NULL DEFAULT 'new',
  amount INT NOT NULL
);
CREATE TABLE t_dict (id INT NOT NULL PRIMARY KEY, label VARCHAR(32) NOT NULL);
INSERT INTO t_dict (id, label) VALUES (1, 'new'), (2, 'paid'), (3, 'sent');

-- +goose Down
DROP TABLE t_dict;
DROP TABLE t_order;
DROP TABLE goose_users;
