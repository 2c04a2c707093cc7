-- A trigger on the table without rules: its body has semicolons, so it
-- is one statement between StatementBegin and StatementEnd.
-- +goose Up
-- +goose StatementBegin
CREATE TRIGGER goose_users_lower BEFORE INSERT ON goose_users FOR EACH ROW
BEGIN
  SET NEW.name = LOWER(TRIM(NEW.name));
  IF NEW.name = '' THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'empty name';
  END IF;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER goose_users_lower;
