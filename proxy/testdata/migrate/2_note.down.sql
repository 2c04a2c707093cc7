CREATE INDEX idx_order_user ON t_order (user_id);
DROP INDEX idx_order_status ON t_order;
ALTER TABLE t_order DROP COLUMN note;
