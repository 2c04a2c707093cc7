package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// threadPolicies returns the scheduling policy of each thread of pid, as
// /proc/PID/task/TID/sched prints it (0 SCHED_OTHER, 3 SCHED_BATCH).
func threadPolicies(t *testing.T, pid int) map[string]string {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	policies := map[string]string{}
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join(dir, task.Name(), "sched"))
		if err != nil {
			continue // the thread has ended
		}
		for _, line := range strings.Split(string(b), "\n") {
			if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "policy" {
				policies[task.Name()] = strings.TrimSpace(value)
			}
		}
	}
	if len(policies) == 0 {
		t.Fatalf("no thread of %d shows its policy", pid)
	}
	return policies
}

// TestServeCPUScheduling runs the binary with each server.cpuScheduling
// and checks the policy of all its threads, before and after clients kept
// it busy enough to start more of them.
func TestServeCPUScheduling(t *testing.T) {
	backend := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"ds_0"}})
	tests := []struct {
		name string
		give string // the setting's line, "" for the default
		want string
	}{
		{name: "default", give: "", want: "3"},
		{name: "batch", give: "cpuScheduling: batch", want: "3"},
		{name: "normal", give: "cpuScheduling: normal", want: "0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := freeAddr(t)
			rules := fmt.Sprintf(`databaseName: db
server:
  listen: 127.0.0.1:1
  metricsListen: 127.0.0.1:0
  users: [{ user: app, password: secret }]
  %s
dataSources:
  ds_0: { url: "mysql://%s/ds_0", username: root, password: "" }
`, tt.give, backend.Addr())
			file := filepath.Join(t.TempDir(), "rules.yaml")
			if err := os.WriteFile(file, []byte(rules), 0o600); err != nil {
				t.Fatal(err)
			}
			p := start(t, ".", "serve", "--config", file, "--listen", addr)
			waitListening(t, p, addr)
			pid := p.cmd.Process.Pid
			check := func(when string) int {
				policies := threadPolicies(t, pid)
				for tid, policy := range policies {
					if policy != tt.want {
						t.Errorf("%s: thread %s has policy %s, want %s (all: %v)", when, tid, policy, tt.want, policies)
					}
				}
				return len(policies)
			}
			before := check("listening")

			db, err := sql.Open("mysql", "app:secret@tcp("+addr+")/db")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			db.SetMaxOpenConns(16)
			var wg sync.WaitGroup
			for range 16 {
				wg.Go(func() {
					for range 50 {
						var n int
						if err := db.QueryRow("SELECT 1 + 1").Scan(&n); err != nil || n != 2 {
							t.Errorf("SELECT 1 + 1: %d, %v", n, err)
							return
						}
					}
				})
			}
			wg.Wait()
			after := check("after 16 clients")
			t.Logf("%d threads listening, %d after the clients", before, after)
		})
	}
}
