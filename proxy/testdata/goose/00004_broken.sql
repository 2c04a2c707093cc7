-- Its second INSERT is a duplicate key: goose runs the migration in a
-- transaction, so the first one is rolled back with it and the version
-- stays at 3.
-- +goose Up
INSERT INTO t_dict (id, label) VALUES (4, 'lost');
INSERT INTO t_dict (id, label) VALUES (1, 'again');

-- +goose Down
DELETE FROM t_dict WHERE id = 4;
