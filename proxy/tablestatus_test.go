package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"testing"
)

// statusRows runs a SHOW TABLE STATUS and returns Name -> column -> value.
func statusRows(t *testing.T, c *sql.Conn, q string) (map[string]map[string]string, []string, error) {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), q)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	out := map[string]map[string]string{}
	var names []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for i, c := range cols {
			m[c] = vals[i].String
		}
		out[m["Name"]] = m
		names = append(names, m["Name"])
	}
	return out, names, rows.Err()
}

// TestShowTableStatusListsLogicalTables: SHOW TABLE STATUS (what GUI
// clients list tables with) shows the logical tables, a sharded one with
// its size summed over its data nodes.
func TestShowTableStatusListsLogicalTables(t *testing.T) {
	// Fresh databases: the test lists every table a data source holds.
	e := startEnv(t, envOptions{databases: "lst"})
	createTables(t, e)
	c := e.conn(t)
	mustExec(t, c, "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'a'), (2, 0, 'b'), (3, 1, 'c'), (4, 1, 'd'), (5, 1, 'e')")
	mustExec(t, c, "INSERT INTO t_dict (code, label) VALUES ('a', 'x'), ('b', 'y')")
	// The data nodes' own figures, with fresh statistics.
	var wantRows, wantData int64
	for i := range e.backends {
		for j := range 2 {
			db := e.backend(t, i)
			if _, err := db.Exec(fmt.Sprintf("ANALYZE TABLE t_order_%d", j)); err != nil {
				t.Fatal(err)
			}
			var rows, data int64
			q := fmt.Sprintf("SELECT TABLE_ROWS, DATA_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 't_order_%d'", j)
			if err := db.QueryRow(q).Scan(&rows, &data); err != nil {
				t.Fatal(err)
			}
			wantRows += rows
			wantData += data
		}
	}

	got, names, err := statusRows(t, c, "SHOW TABLE STATUS")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(names, []string{"t_dict", "t_order", "t_plain"}) {
		t.Errorf("SHOW TABLE STATUS lists %q, want the logical tables t_dict, t_order, t_plain", names)
	}
	o := got["t_order"]
	if o["Rows"] != fmt.Sprint(wantRows) || o["Data_length"] != fmt.Sprint(wantData) || o["Engine"] != "InnoDB" {
		t.Errorf("t_order: Rows %s Data_length %s Engine %s, want %d %d InnoDB (summed over its data nodes)", o["Rows"], o["Data_length"], o["Engine"], wantRows, wantData)
	}

	tests := []struct {
		give     string
		want     []string
		wantCode uint16
	}{
		{"SHOW TABLE STATUS LIKE 't_order'", []string{"t_order"}, 0},
		{"SHOW TABLE STATUS FROM sharding_db LIKE 't_%'", []string{"t_dict", "t_order", "t_plain"}, 0},
		{"SHOW TABLE STATUS IN sharding_db WHERE Name = 't_dict' OR `Rows` > 1000000", []string{"t_dict"}, 0},
		{"SHOW TABLE STATUS WHERE Engine = 'InnoDB' AND Name LIKE 't_o%'", []string{"t_order"}, 0},
		{"SHOW TABLE STATUS LIKE 't_order_0'", nil, 0},
		{"SHOW TABLE STATUS FROM ds_0", nil, 1049},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			_, names, err := statusRows(t, c, tt.give)
			if tt.wantCode != 0 {
				if errCode(err) != tt.wantCode {
					t.Errorf("got %v, want %d", err, tt.wantCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(names, tt.want) {
				t.Errorf("got %q, want %q", names, tt.want)
			}
		})
	}

	var rows, data int64
	if err := c.QueryRowContext(context.Background(), "SELECT TABLE_ROWS, DATA_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sharding_db' AND TABLE_NAME = 't_order'").Scan(&rows, &data); err != nil {
		t.Fatal(err)
	}
	if rows != wantRows || data != wantData {
		t.Errorf("information_schema.TABLES t_order: TABLE_ROWS %d DATA_LENGTH %d, want %d %d", rows, data, wantRows, wantData)
	}
}
