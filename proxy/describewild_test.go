package proxy

import "testing"

// TestDescribeWild compares MariaDB's DESCRIBE t 'wild' (the columns whose
// names are LIKE the string; DBD::MariaDB's column_info sends DESCRIBE t
// '%') with the reference tables, as text and prepared. The parser reads
// a column name there, not a string: the proxy answered 1064 where
// MariaDB lists the columns, and 1064 "a prepared statement must hold
// exactly one statement, not 0" to DBD::MariaDB's prepare after it.
func TestDescribeWild(t *testing.T) {
	e := diffEnvironment(t)
	for _, q := range []string{
		"DESCRIBE t_order '%'",
		"DESC t_order 'user%'",
		"EXPLAIN t_order \"st_tus\"",
		"describe `t_order` 'NO%' ;",
		"DESCRIBE t_order /* the pattern */ 'order\\_id'",
		"DESCRIBE t_order 'no such column'",
		"DESCRIBE t_order ''",
		"DESCRIBE t_order status",
	} {
		t.Run(q, func(t *testing.T) {
			e.check(t, diffCase{sql: q, ordered: true})
			got, want := e.runPrepared(e.proxyRaw, q), e.runPrepared(e.refRaw, q)
			if d := compareResults(diffCase{sql: q, ordered: true}, got, want); d != "" {
				t.Errorf("prepared: %s", d)
			}
		})
	}
	for _, q := range []string{
		"DESCRIBE t_nope '%'",
		"DESCRIBE t_order status 'x'",
	} {
		t.Run(q, func(t *testing.T) { e.sameErrorBothWays(t, q) })
	}
}
