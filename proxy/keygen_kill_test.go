package proxy

import (
	"bufio"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// startHelperProxy runs the test binary as a proxy process for rules.
func startHelperProxy(t *testing.T, rulesFile string, env ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd, addr, err := startHelperProxyErr(t, rulesFile, env...)
	if err != nil {
		t.Fatal(err)
	}
	return cmd, addr
}

// startHelperProxyErr is startHelperProxy for a goroutine other than the
// test's: it returns its error instead of failing the test.
func startHelperProxyErr(t *testing.T, rulesFile string, env ...string) (*exec.Cmd, string, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), proxyHelperEnv+"="+rulesFile), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "addr ") {
		return nil, "", fmt.Errorf("helper proxy: %q, %v", line, err)
	}
	return cmd, strings.TrimSpace(strings.TrimPrefix(line, "addr ")), nil
}

// TestKeysAfterKill9: a proxy process with SEGMENT and TICKET generators
// is killed with SIGKILL mid-run and started again; no key is issued
// twice, and every key after the restart is above every key before (the
// lost blocks and tickets are a gap, never reissued).
func TestKeysAfterKill9(t *testing.T) {
	backends := sharedServers(t)
	seg := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"ids"}})
	ticket := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"tickets"}})
	rules := rulesYAML(backends, "", keygenRules("t_k9s", fmt.Sprintf(`{ type: SEGMENT, props: { url: "jdbc:mysql://%s/ids", username: root, step: 50 } }`, seg.Addr())))
	file := filepath.Join(t.TempDir(), "rules.yaml")
	ticketRules := rulesYAML(backends, "", keygenRules("t_k9t", fmt.Sprintf(`{ type: TICKET, props: { urls: "jdbc:mysql://%s/tickets", username: root } }`, ticket.Addr())))
	ticketFile := filepath.Join(t.TempDir(), "rules-ticket.yaml")
	for f, r := range map[string]string{file: rules, ticketFile: ticketRules} {
		if err := os.WriteFile(f, []byte(r), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ table, file string }{{"t_k9s", file}, {"t_k9t", ticketFile}} {
		t.Run(tc.table, func(t *testing.T) {
			cmd, addr := startHelperProxy(t, tc.file)
			open := func(addr string) *sql.DB {
				db, err := sql.Open("mysql", "app:app-secret@tcp("+addr+")/sharding_db")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return db
			}
			db := open(addr)
			for _, q := range []string{"DROP TABLE IF EXISTS " + tc.table, "CREATE TABLE " + tc.table + " (id BIGINT PRIMARY KEY, user_id INT NOT NULL, note VARCHAR(20))"} {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			insert := func(db *sql.DB, goroutines, each int, stop <-chan struct{}) []int64 {
				var mu sync.Mutex
				var keys []int64
				var wg sync.WaitGroup
				for g := 0; g < goroutines; g++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < each; i++ {
							select {
							case <-stop:
								return
							default:
							}
							res, err := db.Exec("INSERT INTO "+tc.table+" (user_id) VALUES (?)", g)
							if err != nil {
								return // the proxy was killed
							}
							id, _ := res.LastInsertId()
							mu.Lock()
							keys = append(keys, id)
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
				return keys
			}
			killed := make(chan struct{})
			direct := backends[0].Open(t, "ds_0")
			go func() {
				// Kill once some keys were issued, while inserts run.
				deadline := time.Now().Add(time.Minute)
				for time.Now().Before(deadline) {
					var n int
					if direct.QueryRow("SELECT COUNT(*) FROM " + tc.table + "_0").Scan(&n); n >= 40 {
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
				cmd.Process.Kill()
				close(killed)
			}()
			before := insert(db, 8, 2000, nil)
			<-killed
			if len(before) < 40 {
				t.Fatalf("only %d inserts before the kill", len(before))
			}
			_, addr2 := startHelperProxy(t, tc.file)
			after := insert(open(addr2), 4, 50, nil)
			if len(after) != 200 {
				t.Fatalf("%d of 200 inserts after the restart", len(after))
			}
			t.Logf("%d inserts acknowledged before the kill -9, 200 after the restart", len(before))
			var top int64
			for _, k := range before {
				top = max(top, k)
			}
			for _, k := range after {
				if k <= top {
					t.Fatalf("key %d after the restart, not above %d issued before the kill", k, top)
				}
			}
			e := &testEnv{backends: backends, direct: map[int]*sql.DB{}, t: t}
			checkKeys(t, e, tc.table, append(before, after...))
		})
	}
}
