package proxy

import (
	"testing"
)

func TestSmoke(t *testing.T) {
	e := startEnv(t, envOptions{})
	db := e.open(t)
	var v string
	if err := db.QueryRow("SELECT @@version_comment").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != versionComment {
		t.Errorf("got %q", v)
	}
	var n int
	if err := db.QueryRow("SELECT 1 + 1").Scan(&n); err != nil || n != 2 {
		t.Fatalf("SELECT 1+1: %d %v", n, err)
	}
	if _, err := db.Exec("CREATE TABLE IF NOT EXISTS smoke (id INT PRIMARY KEY, v VARCHAR(10))"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("REPLACE INTO smoke VALUES (1, 'x'), (2, 'y')"); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query("SELECT id, v FROM smoke WHERE id > ? ORDER BY id", 0)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int
		var s string
		rows.Scan(&id, &s)
		t.Log(id, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}
