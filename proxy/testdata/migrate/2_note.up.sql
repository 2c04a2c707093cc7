ALTER TABLE t_order ADD COLUMN note VARCHAR(64) NULL;
CREATE INDEX idx_order_status ON t_order (status, amount);
DROP INDEX idx_order_user ON t_order;
