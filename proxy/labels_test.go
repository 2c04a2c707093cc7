package proxy

import (
	"context"
	"slices"
	"testing"
)

// TestColumnLabelsAreTheClientsText checks that every column is labelled
// with the expression as the client wrote it, as MySQL labels it, whether
// the statement reaches a backend unchanged, with the proxy's own values
// written in, through the information_schema substitution, or rewritten
// for a data node.
func TestColumnLabelsAreTheClientsText(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	c := e.conn(t)
	ctx := context.Background()
	tests := []struct {
		give string
		want []string
	}{
		{"SELECT @@max_allowed_packet, @@tx_isolation, @@SESSION.sql_mode", []string{"@@max_allowed_packet", "@@tx_isolation", "@@SESSION.sql_mode"}},
		{"SELECT DATABASE(), @@port, @@max_allowed_packet", []string{"DATABASE()", "@@port", "@@max_allowed_packet"}},
		{"SELECT COUNT(*) FROM information_schema.TABLES", []string{"COUNT(*)"}},
		{"SELECT COUNT(*), @@port, TABLE_NAME FROM information_schema.TABLES GROUP BY TABLE_NAME", []string{"COUNT(*)", "@@port", "TABLE_NAME"}},
		{"SELECT @@max_allowed_packet, COUNT(*), MAX(v)  FROM t_plain", []string{"@@max_allowed_packet", "COUNT(*)", "MAX(v)"}},
		{"SELECT @@SESSION.sql_mode, COUNT(*) FROM sharding_db.t_plain", []string{"@@SESSION.sql_mode", "COUNT(*)"}},
		{"SELECT @@port, COUNT(*), 1 +  1 FROM t_order WHERE user_id = 1 AND order_id = 1", []string{"@@port", "COUNT(*)", "1 +  1"}},
		{"SELECT @@port, COUNT(*) FROM t_order", []string{"@@port", "COUNT(*)"}},
	}
	for _, tt := range tests {
		rows, err := c.QueryContext(ctx, tt.give)
		if err != nil {
			t.Errorf("%s: %v", tt.give, err)
			continue
		}
		got, err := rows.Columns()
		rows.Close()
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s: columns %q, %v; want %q", tt.give, got, err, tt.want)
		}
	}
}

// TestLiteralLabelsDifferential: in a SELECT without tables that mixes the
// proxy's own values (@@in_transaction, DATABASE(), ...) with literals, a
// string literal's column is labelled by its value and NULL as NULL, as
// MariaDB labels them; the proxy labelled them by their text ('abc' with
// its quotes).
func TestLiteralLabelsDifferential(t *testing.T) {
	e := startEnv(t, envOptions{})
	proxy := e.open(t)
	direct := e.backends[0].Open(t, "ds_0")
	for _, q := range []string{
		"SELECT 'still in tx', @@in_transaction",
		"SELECT 'a', DATABASE() AS d, NULL, null, @@autocommit",
		`SELECT "dq", _utf8mb4'cs', @@version_comment`,
		"SELECT 'it''s', 'x' 'y', N'n', LAST_INSERT_ID()",
		"SELECT 1.50, -2, 0x41, ROW_COUNT(), CONNECTION_ID() > 0",
	} {
		got, gotCols := showRows(t, proxy, q, nil)
		_, wantCols := showRows(t, direct, q, nil)
		if !slices.Equal(gotCols, wantCols) || len(got) != 1 {
			t.Errorf("%s: columns %q, MariaDB %q", q, gotCols, wantCols)
		}
	}
}
