// Package haproxytest runs HAProxy (the Debian package) with the example
// configuration, deploy/haproxy/haproxy.cfg, in front of proxies a test
// started, for the tests of the proxy and of the binary.
//
// Imports (of this module): internal/mariadbtest.
package haproxytest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// Server is one proxy behind HAProxy: its MySQL address and the address
// of its ops endpoints, where HAProxy checks /readyz.
type Server struct {
	MySQL, Ops string
}

// Output is HAProxy's output, safe to read while it runs.
type Output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

// String returns everything HAProxy wrote so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// Config is the example configuration with its frontend on listen, its
// two servers on servers (health checks on their ops ports) and no stats
// listener.
func Config(t *testing.T, listen string, servers ...Server) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	raw, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "deploy", "haproxy", "haproxy.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(raw)
	replace := func(re, with string) {
		t.Helper()
		r := regexp.MustCompile(re)
		if !r.MatchString(cfg) {
			t.Fatalf("deploy/haproxy/haproxy.cfg has no line matching %s", re)
		}
		cfg = r.ReplaceAllLiteralString(cfg, with)
	}
	replace(`(?m)^    bind :3306$`, "    bind "+listen)
	replace(`(?m)^    default-server check port 9307 `, "    default-server check ")
	var lines strings.Builder
	for i, s := range servers {
		_, port, _ := net.SplitHostPort(s.Ops)
		fmt.Fprintf(&lines, "    server shardflake-%d %s port %s\n", i+1, s.MySQL, port)
	}
	replace(`(?m)^    server shardflake-1 .*\n    server shardflake-2 .*\n`, lines.String())
	replace(`(?ms)^listen stats\n.*`, "")
	return cfg
}

// Start checks Config's result with haproxy -c and runs HAProxy on it
// until the test ends.
func Start(t *testing.T, listen string, servers ...Server) *Output {
	t.Helper()
	bin := mariadbtest.RequireBinary(t, "haproxy")
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(Config(t, listen, servers...)), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command(bin, "-c", "-f", path).CombinedOutput(); err != nil {
		t.Fatalf("haproxy -c: %v\n%s", err, b)
	}
	hp := exec.Command(bin, "-db", "-f", path)
	hp.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out := &Output{}
	hp.Stdout, hp.Stderr = out, out
	if err := hp.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hp.Process.Kill(); hp.Wait() })
	return out
}
