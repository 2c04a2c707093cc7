package proxy

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/prometheus/client_golang/prometheus"
)

// xaTestRules shard t_acct by id over ds_0 (even) and ds_1 (odd).
const xaTestRules = `  - !SHARDING
    tables:
      t_acct:
        actualDataNodes: ds_${0..1}.t_acct
        databaseStrategy:
          standard: { shardingColumn: id, shardingAlgorithmName: acct_db }
    shardingAlgorithms:
      acct_db: { type: INLINE, props: { algorithm-expression: "ds_${id % 2}" } }
`

// xaAccounts creates t_acct with n accounts of balance 100 each
// (ids 0..n-1, alternating data sources), through db.
func xaAccounts(t *testing.T, db *sql.DB, n int) {
	t.Helper()
	// Other tests list the default data source's tables.
	t.Cleanup(func() {
		db.Exec("DROP TABLE IF EXISTS t_leg")
		db.Exec("DROP TABLE IF EXISTS t_acct")
	})
	for _, q := range []string{"DROP TABLE IF EXISTS t_acct", "CREATE TABLE t_acct (id INT PRIMARY KEY, bal INT NOT NULL) ENGINE=InnoDB"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var vals []string
	for i := range n {
		vals = append(vals, fmt.Sprintf("(%d, 100)", i))
	}
	if _, err := db.Exec("INSERT INTO t_acct (id, bal) VALUES " + strings.Join(vals, ",")); err != nil {
		t.Fatal(err)
	}
}

// xaBalances reads every account's balance directly from the backends.
func xaBalances(t *testing.T, dbs ...*sql.DB) map[int]int {
	t.Helper()
	out := map[int]int{}
	for _, db := range dbs {
		rows, err := db.Query("SELECT id, bal FROM t_acct")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id, bal int
			rows.Scan(&id, &bal)
			out[id] = bal
		}
		rows.Close()
	}
	return out
}

// xaRecovered lists shardflake's prepared branches on a backend.
func xaRecovered(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query("XA RECOVER")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var f, gl, bl int64
		var data string
		rows.Scan(&f, &gl, &bl, &data)
		if f == xaFormatID {
			out = append(out, data)
		}
	}
	return out
}

// xaOrphan prepares XA branch id on a connection of b of its own, then
// closes that connection, as a proxy that died after its prepare leaves
// its branch; stmts run inside the branch. It returns once the server
// dropped the session: until then MariaDB keeps the branch attached to
// it, lists it in XA RECOVER but answers XA COMMIT and XA ROLLBACK from
// any other connection with 1397 XAER_NOTA.
func xaOrphan(t *testing.T, b *sql.DB, id string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	c, err := b.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var connID int64
	if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&connID); err != nil {
		t.Fatal(err)
	}
	qs := append(append([]string{"XA START " + id}, stmts...), "XA END "+id, "XA PREPARE "+id)
	for _, q := range qs {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	c.Raw(func(any) error { return driver.ErrBadConn })
	c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for n := 1; n != 0; {
		if err := b.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", connID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 && time.Now().After(deadline) {
			t.Fatalf("connection %d that prepared %s still open 10s after its close", connID, id)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestXATransactions(t *testing.T) {
	e := startEnv(t, envOptions{server: "transactionMode: xa", rules: xaTestRules})
	db := e.open(t)
	xaAccounts(t, db, 4)
	b0, b1 := e.backend(t, 0), e.backend(t, 1)
	ctx := context.Background()
	x := e.srv.xa
	sum := func() int {
		s := 0
		for _, v := range xaBalances(t, b0, b1) {
			s += v
		}
		return s
	}
	run := func(c *sql.Conn, qs ...string) {
		t.Helper()
		for _, q := range qs {
			if _, err := c.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}

	t.Run("a transfer over two data sources commits in two phases", func(t *testing.T) {
		c := e.conn(t)
		before := x.twoPhase.Load()
		run(c, "BEGIN", "UPDATE t_acct SET bal = bal - 10 WHERE id = 0", "UPDATE t_acct SET bal = bal + 10 WHERE id = 1", "COMMIT")
		if got := x.twoPhase.Load() - before; got != 1 {
			t.Errorf("two-phase commits: %d, want 1", got)
		}
		if bal := xaBalances(t, b0, b1); bal[0] != 90 || bal[1] != 110 {
			t.Errorf("balances %v, want 0:90 1:110", bal)
		}
		// Recovery deletes the decision in its next pass.
		deadline := time.Now().Add(15 * time.Second)
		for n := -1; n != 0; {
			b0.QueryRow("SELECT COUNT(*) FROM "+xaDecisions+" WHERE gtrid LIKE ?", "sf."+x.ownerID()+".%").Scan(&n)
			if n != 0 && time.Now().After(deadline) {
				t.Fatalf("%d decisions left 15s after a complete commit", n)
			}
			time.Sleep(20 * time.Millisecond)
		}
		for _, name := range queryStrings(t, db, "SHOW TABLES") {
			if name == xaDecisions {
				t.Errorf("SHOW TABLES lists the proxy's %s", xaDecisions)
			}
		}
	})
	t.Run("one writer commits one phase", func(t *testing.T) {
		c := e.conn(t)
		before, two := x.onePhase.Load(), x.twoPhase.Load()
		var bal int
		run(c, "BEGIN", "UPDATE t_acct SET bal = bal + 0 WHERE id = 2")
		if err := c.QueryRowContext(ctx, "SELECT bal FROM t_acct WHERE id = 3").Scan(&bal); err != nil {
			t.Fatal(err)
		}
		run(c, "COMMIT")
		if x.onePhase.Load()-before != 1 || x.twoPhase.Load() != two {
			t.Errorf("one-phase %d two-phase %d, want 1 and 0", x.onePhase.Load()-before, x.twoPhase.Load()-two)
		}
		if r := append(xaRecovered(t, b0), xaRecovered(t, b1)...); len(r) != 0 {
			t.Errorf("branches left prepared: %v", r)
		}
	})
	t.Run("an autocommit statement over two data sources", func(t *testing.T) {
		before := x.twoPhase.Load()
		if _, err := db.Exec("UPDATE t_acct SET bal = bal + 1 WHERE id IN (0, 1)"); err != nil {
			t.Fatal(err)
		}
		if x.twoPhase.Load()-before != 1 {
			t.Errorf("two-phase commits: %d, want 1", x.twoPhase.Load()-before)
		}
		if bal := xaBalances(t, b0, b1); bal[0] != 91 || bal[1] != 111 {
			t.Errorf("balances %v, want 0:91 1:111", bal)
		}
	})
	t.Run("a branch lost before the decision rolls everything back", func(t *testing.T) {
		c := e.conn(t)
		want := xaBalances(t, b0, b1)
		run(c, "BEGIN", "UPDATE t_acct SET bal = bal - 5 WHERE id = 0", "UPDATE t_acct SET bal = bal + 5 WHERE id = 1")
		var id int64
		if err := c.QueryRowContext(ctx, "/* SHARDINGSPHERE_HINT: DATA_SOURCE_NAME=ds_1 */ SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		if _, err := b1.Exec(fmt.Sprintf("KILL %d", id)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecContext(ctx, "COMMIT"); err == nil {
			t.Fatal("COMMIT succeeded with a branch's connection killed")
		}
		if got := xaBalances(t, b0, b1); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("balances %v after the failed commit, want %v", got, want)
		}
	})
	t.Run("a branch lost after the decision: OK with a warning, recovery commits it", func(t *testing.T) {
		c, err := client.Connect(e.addr, "app", "app-secret", "sharding_db")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		want := xaBalances(t, b0, b1)
		for _, q := range []string{"BEGIN", "UPDATE t_acct SET bal = bal - 3 WHERE id = 0", "UPDATE t_acct SET bal = bal + 3 WHERE id = 1"} {
			if _, err := c.Execute(q); err != nil {
				t.Fatal(err)
			}
		}
		r, err := c.Execute("/* SHARDINGSPHERE_HINT: DATA_SOURCE_NAME=ds_1 */ SELECT CONNECTION_ID()")
		if err != nil {
			t.Fatal(err)
		}
		id, _ := r.GetInt(0, 0)
		x.afterDecision = func() { b1.Exec(fmt.Sprintf("KILL %d", id)) }
		defer func() { x.afterDecision = nil }()
		r, err = c.Execute("COMMIT")
		if err != nil {
			t.Fatalf("COMMIT after a durable decision: %v, want OK", err)
		}
		if r.Warnings != 1 {
			t.Errorf("COMMIT's OK has %d warnings, want 1 (a branch pending)", r.Warnings)
		}
		want[0], want[1] = want[0]-3, want[1]+3
		deadline := time.Now().Add(15 * time.Second)
		for fmt.Sprint(xaBalances(t, b0, b1)) != fmt.Sprint(want) || len(xaRecovered(t, b1)) != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("balances %v, want %v; prepared %v", xaBalances(t, b0, b1), want, xaRecovered(t, b1))
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	t.Run("savepoints span the XA branches", func(t *testing.T) {
		c := e.conn(t)
		want := xaBalances(t, b0, b1)
		run(c, "BEGIN", "UPDATE t_acct SET bal = bal - 4 WHERE id = 0", "SAVEPOINT s1",
			"UPDATE t_acct SET bal = bal + 50 WHERE id = 1", "UPDATE t_acct SET bal = bal + 50 WHERE id = 0",
			"ROLLBACK TO SAVEPOINT s1", "UPDATE t_acct SET bal = bal + 4 WHERE id = 1", "COMMIT")
		want[0], want[1] = want[0]-4, want[1]+4
		if got := xaBalances(t, b0, b1); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("balances %v, want %v", got, want)
		}
	})
	t.Run("a client gone mid-transaction rolls back", func(t *testing.T) {
		want := sum()
		c := e.conn(t)
		run(c, "BEGIN", "UPDATE t_acct SET bal = bal - 7 WHERE id = 2", "UPDATE t_acct SET bal = bal + 7 WHERE id = 3")
		c.Raw(func(any) error { return driver.ErrBadConn })
		c.Close()
		deadline := time.Now().Add(15 * time.Second)
		for sum() != want || len(xaRecovered(t, b1)) != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("sum %d, want %d; prepared %v", sum(), want, xaRecovered(t, b1))
			}
			time.Sleep(20 * time.Millisecond)
		}
		var bal int
		b1.QueryRow("SELECT bal FROM t_acct WHERE id = 3").Scan(&bal)
		if bal != 100 {
			t.Errorf("account 3 holds %d, want 100", bal)
		}
	})
	t.Run("SET shardflake_transaction_mode", func(t *testing.T) {
		c := e.conn(t)
		two, one := x.twoPhase.Load(), x.onePhase.Load()
		run(c, "SET shardflake_transaction_mode = 'LOCAL'", "BEGIN", "UPDATE t_acct SET bal = bal - 1 WHERE id = 0", "UPDATE t_acct SET bal = bal + 1 WHERE id = 1")
		if _, err := c.ExecContext(ctx, "SET shardflake_transaction_mode = 'XA'"); err == nil || !strings.Contains(err.Error(), "1568") {
			t.Errorf("changing the mode inside a transaction: %v, want 1568", err)
		}
		run(c, "COMMIT")
		if x.twoPhase.Load() != two || x.onePhase.Load() != one {
			t.Errorf("a LOCAL session's transaction went through XA")
		}
		run(c, "SET transaction_type = 'local'", "SET VARIABLE transaction_type = 'XA'", "BEGIN", "UPDATE t_acct SET bal = bal - 1 WHERE id = 0", "UPDATE t_acct SET bal = bal + 1 WHERE id = 1", "COMMIT")
		if x.twoPhase.Load() != two+1 {
			t.Errorf("after SET VARIABLE transaction_type = 'XA' the transfer did not commit in two phases")
		}
		if _, err := c.ExecContext(ctx, "SET shardflake_transaction_mode = 'twopc'"); err == nil || !strings.Contains(err.Error(), "1231") {
			t.Errorf("a bad mode: %v, want 1231", err)
		}
		var mode, typ string
		if err := c.QueryRowContext(ctx, "SELECT @@shardflake_transaction_mode, @@transaction_type").Scan(&mode, &typ); err != nil || mode != "XA" || typ != "XA" {
			t.Errorf("SELECT @@shardflake_transaction_mode, @@transaction_type: %q %q %v, want XA XA", mode, typ, err)
		}
	})
	t.Run("recovery resolves orphaned branches by the decision table", func(t *testing.T) {
		before := xaBalances(t, b0, b1)
		committed, rolledBack := x.rec.committed.Load(), x.rec.rolledBack.Load()
		// Two transactions of a proxy that died after its prepares: one
		// with a commit decision on ds_0, one without.
		prepare := func(gtrid string, delta int) {
			xaOrphan(t, b1, xid(gtrid, "ds_1"), fmt.Sprintf("UPDATE t_acct SET bal = bal + %d WHERE id = 1", delta))
		}
		// The grace period outlasts the SHOW below, however slow the
		// machine; then it is the usual one again.
		x.rec.grace.Store(int64(time.Hour))
		prepare("sf.0000dead0000.1.ds_0", 1000)
		if _, err := b0.Exec("INSERT INTO " + xaDecisions + " (gtrid, decision) VALUES ('sf.0000dead0000.1.ds_0', 'commit')"); err != nil {
			t.Fatal(err)
		}
		prepare("sf.0000dead0000.2.ds_0", 1)
		// The decided one may be committed already; the undecided one
		// waits out the grace period.
		if rows := strings.Join(queryStrings(t, db, "SHOW XA TRANSACTIONS"), "\n"); !strings.Contains(rows, "sf.0000dead0000.2.ds_0,ds_1,ds_1,ds_0,0000dead0000,prepared,none,") {
			t.Errorf("SHOW XA TRANSACTIONS:\n%s\nwant the undecided branch", rows)
		}
		x.rec.grace.Store(int64(xaOrphanGrace))
		deadline := time.Now().Add(15 * time.Second)
		for len(xaRecovered(t, b1)) != 0 {
			if time.Now().After(deadline) {
				t.Fatalf("still prepared after 15s: %v", xaRecovered(t, b1))
			}
			time.Sleep(50 * time.Millisecond)
		}
		if got := xaBalances(t, b0, b1)[1]; got != before[1]+1000 {
			t.Errorf("account 1: %d, want %d (the decided transaction committed, the other rolled back)", got, before[1]+1000)
		}
		if x.rec.committed.Load()-committed != 1 || x.rec.rolledBack.Load()-rolledBack != 1 {
			t.Errorf("recovered: %d committed %d rolled back, want 1 and 1", x.rec.committed.Load()-committed, x.rec.rolledBack.Load()-rolledBack)
		}
		var d string
		b0.QueryRow("SELECT decision FROM "+xaDecisions+" WHERE gtrid = ?", "sf.0000dead0000.2.ds_0").Scan(&d)
		if d != "rollback" {
			t.Errorf("the undecided transaction's decision: %q, want rollback (so its owner can no longer commit it)", d)
		}
	})
	t.Run("a restarted proxy's previous branches are rolled back at once", func(t *testing.T) {
		// The previous incarnation: this node (host and listen address),
		// another process start. Another node's branch still waits out
		// the grace period, made an hour here.
		x.rec.grace.Store(int64(time.Hour))
		defer x.rec.grace.Store(int64(xaOrphanGrace))
		own := x.ownerID()
		differ := func(c byte) string {
			if c == '0' {
				return "1"
			}
			return "0"
		}
		previous := own[:len(own)-1] + differ(own[len(own)-1])
		other := differ(own[0]) + own[1:]
		before := xaBalances(t, b0, b1)
		mine, theirs := "sf."+previous+".1.ds_0", "sf."+other+".1.ds_0"
		for _, g := range []string{mine, theirs} {
			xaOrphan(t, b1, xid(g, "ds_1"), "UPDATE t_acct SET bal = bal + 100 WHERE id = 3")
			if g == mine {
				// Its branch holds account 3's row lock until resolved.
				deadline := time.Now().Add(10 * time.Second)
				for strings.Contains(strings.Join(xaRecovered(t, b1), " "), mine) {
					if time.Now().After(deadline) {
						t.Fatalf("the previous incarnation's branch still prepared after 10s: %v", xaRecovered(t, b1))
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		}
		if got := xaRecovered(t, b1); len(got) != 1 || !strings.Contains(got[0], theirs) {
			t.Errorf("prepared: %v, want only another node's branch (within its grace)", got)
		}
		// The other node's branch: roll it back by hand.
		if _, err := b1.Exec("XA ROLLBACK " + xid(theirs, "ds_1")); err != nil {
			t.Fatal(err)
		}
		if got := xaBalances(t, b0, b1); got[3] != before[3] {
			t.Errorf("account 3: %d, want %d (both branches rolled back)", got[3], before[3])
		}
	})
	t.Run("metrics", func(t *testing.T) {
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(newXACollector(x))
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				key := mf.GetName()
				for _, l := range m.GetLabel() {
					key += "/" + l.GetValue()
				}
				got[key] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
		if got["shardflake_xa_commits_total/two"] < 4 || got["shardflake_xa_commits_total/one"] < 1 ||
			got["shardflake_xa_recovered_branches_total/commit"] < 1 || got["shardflake_xa_recovered_branches_total/rollback"] < 1 ||
			got["shardflake_xa_rollbacks_total"] < 2 {
			t.Errorf("metrics %v", got)
		}
		if _, ok := got["shardflake_xa_in_doubt_branches"]; !ok {
			t.Errorf("no in-doubt gauge: %v", got)
		}
	})
}
