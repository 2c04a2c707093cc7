-- +goose Up
ALTER TABLE t_order ADD COLUMN note VARCHAR(64) NULL;
CREATE INDEX idx_order_user_status ON t_order (user_id, status);

-- +goose Down
DROP INDEX idx_order_user_status ON t_order;
ALTER TABLE t_order DROP COLUMN note;
