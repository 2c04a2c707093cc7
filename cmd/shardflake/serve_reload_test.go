package main

import (
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// TestServeReloadsOnSIGHUP: SIGHUP reloads the rules file; the address
// the command line overrode stays as it is (no "needs a restart"), a file
// that does not decode is refused and logged while the proxy keeps
// serving, and a user the file adds can log in after the next SIGHUP.
func TestServeReloadsOnSIGHUP(t *testing.T) {
	backend := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"ds_0"}})
	addr, metrics := freeAddr(t), freeAddr(t)
	rules := func(users string) string {
		return fmt.Sprintf(`databaseName: sharding_db
server:
  listen: 127.0.0.1:1
  metricsListen: 127.0.0.1:2
  users: [%s]
dataSources:
  ds_0: { url: "mysql://%s/ds_0", username: root, password: "" }
`, users, backend.Addr())
	}
	file := filepath.Join(t.TempDir(), "rules.yaml")
	write := func(src string) {
		if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(rules("{ user: app, password: secret }"))
	p := start(t, ".", "serve", "--config", file, "--listen", addr, "--metrics-listen", metrics)
	waitListening(t, p, addr)
	waitListening(t, p, metrics)

	// reloads polls the metrics until the counter of result reaches n.
	reloads := func(result string, n int) {
		t.Helper()
		want := regexp.MustCompile(fmt.Sprintf(`(?m)^shardflake_rules_reloads_total\{result="%s"\} %d$`, result, n))
		deadline := time.Now().Add(10 * time.Second)
		for {
			resp, err := http.Get("http://" + metrics + "/metrics")
			if err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if want.Match(body) {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s reload #%d within 10s:\n%s", result, n, p.output())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	hup := func() {
		t.Helper()
		if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	login := func(user, password string) error {
		db, err := sql.Open("mysql", user+":"+password+"@tcp("+addr+")/sharding_db")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		return db.Ping()
	}

	hup()
	reloads("applied", 1)
	write("databaseName: [")
	hup()
	reloads("refused", 1)
	if out := p.output(); !strings.Contains(out, "SIGHUP: rules reload refused") || !strings.Contains(out, "the rules file is invalid") {
		t.Fatalf("the refused reload is not logged with its reason:\n%s", out)
	}
	if err := login("app", "secret"); err != nil {
		t.Fatalf("after a refused reload: %v", err)
	}
	if err := login("ops", "ops-secret"); err == nil {
		t.Fatal("ops logged in before the file named it")
	}
	write(rules("{ user: app, password: secret }, { user: ops, password: ops-secret }"))
	hup()
	reloads("applied", 2)
	if err := login("ops", "ops-secret"); err != nil {
		t.Fatalf("the user the reload added: %v", err)
	}
}
