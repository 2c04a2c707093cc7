package proxy

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// TestXARecoveryTLS: XA recovery reaches data sources with the pools'
// own TLS settings. Against a MariaDB that refuses plain text
// (--require-secure-transport), a transfer commits in two phases,
// recovery deletes its decision, SHOW XA TRANSACTIONS lists a dead
// proxy's prepared branch once though both data sources share the
// server, and recovery rolls that branch back, once.
func TestXARecoveryTLS(t *testing.T) {
	b, ca := startTLSOnlyServer(t, "shardflake-xa-ca")
	tlsDS := func(i int) string {
		return fmt.Sprintf(`  ds_%d: { url: "jdbc:mysql://%s/xatls_%d?sslMode=VERIFY_IDENTITY", username: root, password: "", tls: { ca: %s } }`, i, b.Addr(), i, ca.path)
	}
	rules := fmt.Sprintf(`databaseName: sharding_db
server:
  listen: 127.0.0.1:0
  metricsListen: 127.0.0.1:1
  transactionMode: xa
  users:
    - { user: app, password: app-secret, hints: true, otherSchemas: true }
dataSources:
%s
%s
rules:
%s`, tlsDS(0), tlsDS(1), xaTestRules)
	e := startOpsEnv(t, opsOptions{backends: []*mariadbtest.Server{b, b}, prefix: "xatls", rules: rules})
	db := e.open(t)
	xaAccounts(t, db, 2)
	b0, b1 := b.Open(t, "xatls_0"), b.Open(t, "xatls_1")
	x := e.srv.xa
	ctx := context.Background()

	before := x.twoPhase.Load()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"BEGIN", "UPDATE t_acct SET bal = bal - 10 WHERE id = 0", "UPDATE t_acct SET bal = bal + 10 WHERE id = 1", "COMMIT"} {
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	c.Close()
	if got := x.twoPhase.Load() - before; got != 1 {
		t.Fatalf("two-phase commits: %d, want 1", got)
	}
	// Recovery's next pass deletes the decision, over TLS.
	deadline := time.Now().Add(10 * time.Second)
	for n := -1; n != 0; {
		if err := b0.QueryRow("SELECT COUNT(*) FROM " + xaDecisions).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 && time.Now().After(deadline) {
			t.Fatalf("%d decisions left 10s after a complete commit: recovery did not reach the data source", n)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// A dead proxy's prepared branch with no decision, listed while
	// recovery's grace period (made longer) lasts.
	x.rec.grace.Store(int64(time.Hour))
	gtrid := "sf.0000dead0000.1.ds_0"
	bc, err := b1.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id := xid(gtrid, "ds_1")
	for _, q := range []string{"XA START " + id, "UPDATE t_acct SET bal = bal + 1000 WHERE id = 1", "XA END " + id, "XA PREPARE " + id} {
		if _, err := bc.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	bc.Raw(func(any) error { return driver.ErrBadConn })
	bc.Close()
	// Both data sources are on one server, whose XA RECOVER lists the
	// branch for each: it is one branch, on ds_1 (its bqual).
	if rows := queryStrings(t, db, "SHOW XA TRANSACTIONS"); len(rows) != 1 || !strings.HasPrefix(rows[0], gtrid+",ds_1,ds_1,ds_0,") {
		t.Errorf("SHOW XA TRANSACTIONS:\n%s\nwant the dead proxy's branch, once, on ds_1", strings.Join(rows, "\n"))
	}
	rolledBack := x.rec.rolledBack.Load()
	x.rec.grace.Store(int64(xaOrphanGrace))
	deadline = time.Now().Add(10 * time.Second)
	for len(xaRecovered(t, b1)) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("still prepared after 10s: %v", xaRecovered(t, b1))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := x.rec.rolledBack.Load() - rolledBack; got != 1 {
		t.Errorf("recovery rolled back %d branches, want 1", got)
	}
	if bal := xaBalances(t, b0, b1); bal[0] != 90 || bal[1] != 110 {
		t.Errorf("balances %v, want 0:90 1:110 (the transfer committed, the dead proxy's branch rolled back)", bal)
	}
}
