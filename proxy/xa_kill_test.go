package proxy

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// xaLedgerRules are xaTestRules with t_leg, one row per leg of a
// transfer, on the data source of its account.
func xaLedgerRules(nds int) string {
	return fmt.Sprintf(`  - !SHARDING
    tables:
      t_acct:
        actualDataNodes: ds_${0..%[1]d}.t_acct
        databaseStrategy:
          standard: { shardingColumn: id, shardingAlgorithmName: acct_db }
      t_leg:
        actualDataNodes: ds_${0..%[1]d}.t_leg
        databaseStrategy:
          standard: { shardingColumn: acct, shardingAlgorithmName: leg_db }
    shardingAlgorithms:
      acct_db: { type: INLINE, props: { algorithm-expression: "ds_${id %% %[2]d}" } }
      leg_db: { type: INLINE, props: { algorithm-expression: "ds_${acct %% %[2]d}" } }
`, nds-1, nds)
}

// TestXAKill9: transfers between accounts on two (and three) data sources
// through two proxy processes at once, one of which kills itself (SIGKILL) at a step of the
// XA commit and is started again. Afterwards no branch stays prepared
// (XA RECOVER empty within 5s of the restart), the balances still sum to
// what they did, every account's balance is its ledger's, each transfer
// has both legs or none, and every transfer acknowledged as committed is
// there. The same run in local mode, killed between its two commits, must
// break the invariant: the checks can fail.
//
// SHARDFLAKE_XA_KILL_TRANSFERS sets the transfers per failpoint (default
// 40, half through each proxy; the scale is 200).
func TestXAKill9(t *testing.T) {
	backends := sharedServers(t)
	total := 40
	if v := os.Getenv("SHARDFLAKE_XA_KILL_TRANSFERS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 10 {
			t.Fatalf("SHARDFLAKE_XA_KILL_TRANSFERS=%q: want a number of transfers, at least 10", v)
		}
		total = n
	}
	each := total / 2
	total = 2 * each
	// The victim dies at its killAt-th pass through the failpoint.
	killAt := max(4, each/5)
	if _, err := backends[0].Open(t, "ds_0").Exec("CREATE DATABASE IF NOT EXISTS ds_2"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode, failpoint string
		nds             int
		wantBroken      bool
	}{
		{"xa", failAfterPrepareOne, 3, false},
		{"xa", failAfterPrepareAll, 3, false},
		{"xa", failAfterDecision, 3, false},
		{"xa", failAfterFirstXA, 3, false},
		{"xa", failAfterDecision, 2, false},
		{"local", failLocalAfterFirst, 2, true},
	} {
		t.Run(fmt.Sprintf("%s/%s/%dds", tc.mode, tc.failpoint, tc.nds), func(t *testing.T) {
			// ds_2 is a third database on the first server.
			srvs := []*mariadbtest.Server{backends[0], backends[1], backends[0]}[:tc.nds]
			var direct []*sql.DB
			for i, b := range srvs {
				direct = append(direct, b.Open(t, fmt.Sprintf("ds_%d", i)))
			}
			rules := rulesYAML(srvs, "transactionMode: "+tc.mode, xaLedgerRules(tc.nds))
			file := filepath.Join(t.TempDir(), "rules.yaml")
			if err := os.WriteFile(file, []byte(rules), 0o600); err != nil {
				t.Fatal(err)
			}
			open := func(addr string) *sql.DB {
				db, err := sql.Open("mysql", "app:app-secret@tcp("+addr+")/sharding_db")
				if err != nil {
					t.Fatal(err)
				}
				db.SetMaxOpenConns(2)
				t.Cleanup(func() { db.Close() })
				return db
			}
			victim, addrA := startHelperProxy(t, file, "SHARDFLAKE_FAILPOINT="+tc.failpoint+":"+strconv.Itoa(killAt))
			_, addrB := startHelperProxy(t, file)
			dbs := []*sql.DB{open(addrA), open(addrB)}
			accounts := 4 * tc.nds
			xaAccounts(t, dbs[1], accounts)
			for _, q := range []string{"DROP TABLE IF EXISTS t_leg", "CREATE TABLE t_leg (txn INT NOT NULL, acct INT NOT NULL, delta INT NOT NULL, PRIMARY KEY (txn, acct)) ENGINE=InnoDB"} {
				if _, err := dbs[1].Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			// A transfer takes from one account and gives to one account
			// on each other data source. Its rows are locked in id order,
			// so concurrent transfers wait for each other but never
			// deadlock across data sources (no server would see it).
			transfer := func(rng *rand.Rand, db *sql.DB, txn int) error {
				var accts, deltas []int
				for k := range tc.nds {
					accts = append(accts, k+tc.nds*rng.IntN(4))
				}
				slices.Sort(accts)
				from := rng.IntN(tc.nds)
				amt := 1 + rng.IntN(20)
				left := amt
				for i := range accts {
					switch {
					case i == from:
						deltas = append(deltas, -amt)
					case left > 0 && (i == tc.nds-1 || (i == tc.nds-2 && from == tc.nds-1)):
						deltas = append(deltas, left)
						left = 0
					default:
						part := amt / (tc.nds - 1)
						deltas = append(deltas, part)
						left -= part
					}
				}
				qs := []string{"BEGIN"}
				var legs []string
				for i, a := range accts {
					qs = append(qs, fmt.Sprintf("UPDATE t_acct SET bal = bal + %d WHERE id = %d", deltas[i], a))
					legs = append(legs, fmt.Sprintf("(%d, %d, %d)", txn, a, deltas[i]))
				}
				qs = append(qs, "INSERT INTO t_leg (txn, acct, delta) VALUES "+strings.Join(legs, ", "), "COMMIT")
				c, err := db.Conn(t.Context())
				if err != nil {
					return err
				}
				defer c.Close()
				for _, q := range qs {
					if _, err := c.ExecContext(t.Context(), q); err != nil {
						c.ExecContext(t.Context(), "ROLLBACK")
						return err
					}
				}
				return nil
			}
			// Each proxy gets its own client running transfers at once.
			var (
				mu        sync.Mutex
				acked     []int
				next      atomic.Int64
				killedAt  = -1
				restarted time.Time
				wg        sync.WaitGroup
			)
			for via := range 2 {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(via)))
					for range each {
						txn := int(next.Add(1))
						err := transfer(rng, dbs[via], txn)
						if err == nil {
							mu.Lock()
							acked = append(acked, txn)
							mu.Unlock()
							continue
						}
						if via != 0 || killedAt >= 0 {
							t.Errorf("transfer %d through proxy %d: %v", txn, via, err)
							return
						}
						// The victim died at its failpoint: start it again.
						victim.Wait()
						if st, ok := victim.ProcessState.Sys().(interface{ Signaled() bool }); !ok || !st.Signaled() {
							t.Errorf("transfer %d: %v, and the proxy did not die by its failpoint (%v)", txn, err, victim.ProcessState)
							return
						}
						killedAt = txn
						var addr string
						// On its address: the restarted proxy recognises its
						// previous incarnation's branches.
						if victim, addr, err = startHelperProxyErr(t, file, "SHARDFLAKE_HELPER_LISTEN="+addrA); err != nil {
							t.Errorf("restarting the proxy: %v", err)
							return
						}
						restarted = time.Now()
						db, _ := sql.Open("mysql", "app:app-secret@tcp("+addr+")/sharding_db")
						t.Cleanup(func() { db.Close() })
						dbs[0] = db
					}
				})
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			if killedAt < 0 {
				t.Fatal("the failpoint never fired")
			}
			prepared := func() []string {
				var out []string
				for _, db := range direct[:2] {
					out = append(out, xaRecovered(t, db)...)
				}
				return out
			}
			for len(prepared()) > 0 {
				if time.Since(restarted) > 5*time.Second {
					t.Fatalf("prepared branches 5s after the restart: %v", prepared())
				}
				time.Sleep(20 * time.Millisecond)
			}
			t.Logf("killed at transfer %d; XA RECOVER empty %v after the restart; %d of %d acknowledged", killedAt, time.Since(restarted).Round(time.Millisecond), len(acked), total)
			problems := xaLedgerProblems(t, direct, tc.nds, accounts, acked)
			if tc.wantBroken {
				if len(problems) == 0 {
					t.Fatal("local mode killed between its commits kept the invariant: the check cannot fail")
				}
				t.Logf("local mode, as expected: %v", problems)
				return
			}
			for _, p := range problems {
				t.Error(p)
			}
		})
	}
}

// xaLedgerProblems checks the transfers' invariants on the backends.
func xaLedgerProblems(t *testing.T, direct []*sql.DB, nds, accounts int, acked []int) []string {
	t.Helper()
	var problems []string
	bal := xaBalances(t, direct...)
	sum := 0
	for _, v := range bal {
		sum += v
	}
	if sum != 100*accounts {
		problems = append(problems, fmt.Sprintf("balances sum to %d, want %d", sum, 100*accounts))
	}
	legs := map[int]int{}
	perAcct := map[int]int{}
	for _, db := range direct {
		rows, err := db.Query("SELECT txn, acct, delta FROM t_leg")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var txn, acct, delta int
			rows.Scan(&txn, &acct, &delta)
			legs[txn]++
			perAcct[acct] += delta
		}
		rows.Close()
	}
	for txn, n := range legs {
		if n != nds {
			problems = append(problems, fmt.Sprintf("transfer %d has %d of its %d legs", txn, n, nds))
		}
	}
	for _, txn := range acked {
		if legs[txn] != nds {
			problems = append(problems, fmt.Sprintf("acknowledged transfer %d has %d legs", txn, legs[txn]))
		}
	}
	for acct := range accounts {
		if bal[acct] != 100+perAcct[acct] {
			problems = append(problems, fmt.Sprintf("account %d holds %d, its ledger says %d", acct, bal[acct], 100+perAcct[acct]))
		}
	}
	return problems
}
