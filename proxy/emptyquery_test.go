package proxy

import "testing"

// TestEmptyQueryPrepared compares with MariaDB the queries that hold no
// statement, as text and prepared (COM_STMT_PREPARE and EXECUTE): nothing
// but spaces and semicolons is 1065 Query was empty each way, only
// comments is a statement that does nothing (OK). Through the proxy a
// prepare of any of them was 1064 "a prepared statement must hold
// exactly one statement, not 0" (DBD::MariaDB prepares an empty statement
// after a failed prepare), and ";" as text was OK.
func TestEmptyQueryPrepared(t *testing.T) {
	e := diffEnvironment(t)
	for _, q := range []string{"", " ", ";", " ; ", ";;", "\t;\n; "} {
		t.Run(q, func(t *testing.T) { e.sameErrorBothWays(t, q) })
	}
	for _, q := range []string{"/* c */", "/* c */;", "-- x\n", "-- x\n ;", "# x\n", "/*!40101 */"} {
		t.Run(q, func(t *testing.T) {
			e.mu.Lock()
			_, got := e.proxyRaw.Execute(q)
			_, want := e.refRaw.Execute(q)
			e.mu.Unlock()
			if got != nil || want != nil {
				t.Errorf("text: through the proxy %v, on MariaDB %v", got, want)
			}
			if got, want := e.runPrepared(e.proxyRaw, q), e.runPrepared(e.refRaw, q); got.err != nil || want.err != nil || len(got.rows) != 0 {
				t.Errorf("prepared: through the proxy %v (%d rows), on MariaDB %v", got.err, len(got.rows), want.err)
			}
		})
	}
	// The connection goes on after each.
	if d := e.diff(diffCase{sql: "SELECT COUNT(*) FROM t_order"}); d != "" {
		t.Error(d)
	}
}
