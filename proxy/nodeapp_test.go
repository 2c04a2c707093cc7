package proxy

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// nodeApp is a Node.js program of testdata/dir (its npm packages
// installed there by scripts/install-deps.sh with npm ci), run with the
// address, user, password and database to use as its arguments; it
// prints one line per step.
type nodeApp struct {
	dir, script string
	packages    []string // the packages it needs in node_modules
}

// runner returns a function that runs the program against a server and
// returns its lines; node or the packages missing fail the test as a
// missing requirement (mariadbtest.Require).
func (a nodeApp) runner(t *testing.T) func(host, port, user, password, db string) []string {
	t.Helper()
	dir := filepath.Join("testdata", a.dir)
	node, err := exec.LookPath("node")
	for _, pkg := range a.packages {
		if err == nil {
			_, err = os.Stat(filepath.Join(dir, "node_modules", pkg))
		}
	}
	if err != nil {
		mariadbtest.Require(t, fmt.Errorf("node and testdata/%s/node_modules (scripts/install-deps.sh runs npm ci there): %v", a.dir, err))
	}
	return func(host, port, user, password, db string) []string {
		t.Helper()
		cmd := exec.Command(node, filepath.Join(dir, a.script), host, port, user, password, db)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s against %s:%s: %v\n%s\n%s", a.script, host, port, err, out, stderr.String())
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
}

// sameThroughProxy runs the program against database refDB of server ref
// and through e's proxy (user app, the logical schema), checks that the
// reference printed each of steps (else the test's premise is wrong), and
// compares the two runs line by line.
func (a nodeApp) sameThroughProxy(t *testing.T, e *testEnv, ref *mariadbtest.Server, refDB string, steps ...string) {
	t.Helper()
	run := a.runner(t)
	want := run(ref.Host(), fmt.Sprint(ref.Port()), "root", "", refDB)
	referencePrinted(t, a.script, want, steps...)
	host, port, _ := strings.Cut(e.addr, ":")
	sameSteps(t, run(host, port, "app", "app-secret", "sharding_db"), want)
}
