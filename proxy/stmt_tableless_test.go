package proxy

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// describeField prints what a client reads of a column definition, the
// schema left out (the proxy's logical schema is not the data source's).
func describeField(f *mysql.Field) string {
	return fmt.Sprintf("name=%q org_name=%q table=%q org_table=%q charset=%d length=%d type=%d flag=%#x decimals=%d",
		f.Name, f.OrgName, f.Table, f.OrgTable, f.Charset, f.ColumnLength, f.Type, f.Flag, f.Decimal)
}

// describeResult prints a binary result's column definitions and rows.
func describeResult(r *mysql.Result) string {
	var b bytes.Buffer
	for _, f := range r.Fields {
		fmt.Fprintf(&b, "  column %s\n", describeField(f))
	}
	for i := range r.RowNumber() {
		fmt.Fprintf(&b, "  row")
		for j := range r.Fields {
			v, err := r.GetString(i, j)
			if err != nil {
				v = "!" + err.Error()
			}
			fmt.Fprintf(&b, " %q", v)
		}
		fmt.Fprintln(&b)
	}
	return b.String()
}

// TestTablelessPreparedColumns: a prepared SELECT without tables (SELECT
// ?, SELECT ? + 1 AS x) returns, on each execute, the column
// definitions MariaDB gives it for the bound values: the placeholder's
// column is named ?, and its type, flags, length and decimals follow the
// parameter's type. Each case runs on MariaDB directly and through the
// proxy, and the two binary results must be the same.
func TestTablelessPreparedColumns(t *testing.T) {
	e := startEnv(t, envOptions{})
	direct, err := client.Connect(e.backends[0].Addr(), e.backends[0].User(), "", "ds_0")
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	proxied, err := client.Connect(e.addr, "app", "app-secret", "sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	defer proxied.Close()

	tests := []struct {
		sql  string
		args []any
	}{
		{"SELECT ?", []any{int64(5)}},
		{"SELECT ?", []any{int8(5)}},
		{"SELECT ?", []any{int32(-5)}},
		{"SELECT ?", []any{uint64(1) << 63}},
		{"SELECT ?", []any{2.5}},
		{"SELECT ?", []any{float32(2.5)}},
		{"SELECT ?", []any{"abc"}},
		{"SELECT ?", []any{[]byte("a\x00b")}},
		{"SELECT ?", []any{nil}},
		{"SELECT ?", []any{true}},
		{"SELECT ? + 1 AS x", []any{int64(5)}},
		{"SELECT ? + 1 AS x", []any{"5"}},
		{"SELECT ? + 1", []any{1.25}},
		{"SELECT ?, ?", []any{int64(1), "two"}},
		{"SELECT ? AS a, ? AS b", []any{nil, 3.5}},
		{"SELECT CONCAT(?, 'x')", []any{"ab"}},
		{"SELECT ? FROM DUAL", []any{int64(7)}},
		{"SELECT ?, CONNECTION_ID() > 0", []any{int64(7)}},
		{"SELECT ? LIMIT 1", []any{int64(7)}},
	}
	for _, tt := range tests {
		name := fmt.Sprintf("%s %v", tt.sql, tt.args)
		t.Run(name, func(t *testing.T) {
			run := func(c *client.Conn) (string, string) {
				st, err := c.Prepare(tt.sql)
				if err != nil {
					return "", "prepare: " + err.Error()
				}
				defer st.Close()
				var prepared bytes.Buffer
				fmt.Fprintf(&prepared, "  prepare: %d params, %d columns\n", st.ParamNum(), st.ColumnNum())
				// Twice: the second execute runs a statement prepared
				// before on the data source.
				var out string
				for range 2 {
					r, err := st.Execute(tt.args...)
					if err != nil {
						return prepared.String(), "execute: " + err.Error()
					}
					out = describeResult(r)
					r.Close()
				}
				return prepared.String(), out
			}
			wantPrep, want := run(direct)
			gotPrep, got := run(proxied)
			if got != want || gotPrep != wantPrep {
				t.Errorf("MariaDB:\n%s%s\nproxy:\n%s%s", wantPrep, want, gotPrep, got)
			}
		})
	}
}
