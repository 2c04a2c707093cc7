package proxy

import (
	"context"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// TestLostDataSourceErrorLibmariadb: a statement whose data source
// connection broke answers with an error that libmariadb clients (the
// mariadb CLI, Python's mysqlclient, sysbench) read as the proxy wrote it,
// and the session goes on. The error used to carry code 2013
// (CR_SERVER_LOST), a client library's own code that no server sends:
// libmariadb turned that packet into 2027 "Received malformed packet" and
// dropped the message that named the data source.
func TestLostDataSourceErrorLibmariadb(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	bin := mariadbtest.RequireBinary(t, "mariadb")
	host, port, _ := net.SplitHostPort(e.addr)
	cli := func(q string) string {
		// Statements on stdin, one a line: with --force the client goes
		// on to the next line after an error.
		cmd := exec.Command(bin, "--no-defaults", "-h"+host, "-P"+port, "-uapp", "-papp-secret",
			"--batch", "--skip-column-names", "--force", "sharding_db")
		cmd.Stdin = strings.NewReader(q)
		out, _ := cmd.Output() // the rows; errors go to stderr
		return strings.TrimSpace(string(out))
	}
	// A first client leaves a pooled connection with its settings (the
	// CLI's character set) idle; the second client, with the same
	// settings, is handed it as it is. FOR UPDATE: the read runs on a
	// pooled connection under multiplex: on too.
	const read = "SELECT COUNT(*) FROM t_plain FOR UPDATE"
	if got := cli(read); got != "0" {
		t.Fatalf("first client: %q", got)
	}
	ds := e.rules.DefaultDataSource
	p := e.srv.current().pools[ds]
	var ids []uint32
	p.mu.Lock()
	for _, bc := range p.idle {
		ids = append(ids, bc.id)
	}
	p.mu.Unlock()
	direct := e.backend(t, 0)
	ctx := context.Background()
	for _, id := range ids {
		if _, err := direct.ExecContext(ctx, "KILL CONNECTION ?", id); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, func() bool {
		for _, id := range ids {
			var n int
			if err := direct.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?", id).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				return false
			}
		}
		return true
	})
	cmd := exec.Command(bin, "--no-defaults", "-h"+host, "-P"+port, "-uapp", "-papp-secret",
		"--batch", "--skip-column-names", "--force", "sharding_db")
	cmd.Stdin = strings.NewReader(read + ";\nSELECT 'still here';\n")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()      // exits 1: one statement failed
	var errLine string // the client echoes the statement before its error
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(l, "ERROR") {
			errLine = l
		}
	}
	if !strings.HasPrefix(errLine, "ERROR 1105 (HY000)") || !strings.Contains(errLine, "Lost connection to data source "+ds) {
		t.Errorf("second client's error: %q, want ERROR 1105 naming %s", errLine, ds)
	}
	if got := strings.TrimSpace(stdout.String()); got != "still here" {
		t.Errorf("second client's rows: %q, want the next statement answered after the error", got)
	}
}
