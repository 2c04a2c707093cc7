-- The second statement names a column that does not exist: the
-- migration stops half done and leaves the version dirty.
ALTER TABLE t_order ADD COLUMN shipped DATETIME NULL;
ALTER TABLE t_order ADD INDEX idx_order_missing (no_such_column);
