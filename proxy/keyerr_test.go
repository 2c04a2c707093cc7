package proxy

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestGeneratedKeyTooWideForItsColumn: the proxy refuses to create an INT
// key column for a Snowflake generator (1063); a generated Snowflake key
// that does not fit an INT key column created behind its back gets
// MariaDB's 1264 with a message that says the key was generated and the
// column must be BIGINT.
func TestGeneratedKeyTooWideForItsColumn(t *testing.T) {
	e := startEnv(t, envOptions{})
	db := e.open(t)
	if _, err := db.Exec("DROP TABLE IF EXISTS t_order"); err != nil {
		t.Fatal(err)
	}
	const narrow = "(order_id INTEGER NOT NULL AUTO_INCREMENT, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))"
	_, err := db.Exec("CREATE TABLE t_order " + narrow)
	if me := mysqlErr(err); me == nil || me.Number != 1063 || !strings.Contains(me.Message, "use BIGINT") {
		t.Fatalf("CREATE TABLE with an INT key column for a Snowflake generator: %v, want 1063", err)
	}
	// Physical tables created directly on the data sources.
	for ds := 0; ds < 2; ds++ {
		for tb := 0; tb < 2; tb++ {
			if _, err := e.backend(t, ds).Exec(fmt.Sprintf("CREATE TABLE t_order_%d %s", tb, narrow)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, q := range []string{
		"INSERT INTO t_order (user_id, status) VALUES (1, 'a')",
		"INSERT INTO t_order (user_id, status) VALUES (1, 'a'), (2, 'b')",
	} {
		_, err := db.ExecContext(context.Background(), q)
		me := mysqlErr(err)
		if me == nil || me.Number != 1264 || string(me.SQLState[:]) != "22003" {
			t.Fatalf("%s: got %v, want 1264 (22003)", q, err)
		}
		for _, want := range []string{"Out of range value for column 'order_id'", "Snowflake", "BIGINT"} {
			if !strings.Contains(me.Message, want) {
				t.Errorf("%s: message %q does not say %q", q, me.Message, want)
			}
		}
	}
	// A value the client gave is its own business: MariaDB's message.
	_, err = db.Exec("INSERT INTO t_order (order_id, user_id) VALUES (99999999999, 1)")
	if me := mysqlErr(err); me == nil || me.Number != 1264 || strings.Contains(me.Message, "Snowflake") {
		t.Errorf("a given key out of range: got %v, want MariaDB's own 1264", err)
	}
}
