package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"

	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

var built struct {
	once sync.Once
	path string
	err  error
	dir  string
}

// binary builds the shardflake binary once per test run.
func binary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "shardflake-bin-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "shardflake")
		args := []string{"build", "-o", built.path}
		if demoBuilt {
			// The test binary has the demo (go test -tags demo): so
			// does the binary its tests run.
			args = append(args, "-tags", "demo")
		}
		out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// process is a running shardflake command.
type process struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	out    bytes.Buffer // stdout and stderr
	lines  chan string  // stdout lines
	exited chan error
}

func start(t *testing.T, dir string, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(binary(t), args...), lines: make(chan string, 100), exited: make(chan error, 1)}
	p.cmd.Dir = dir
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = writerFunc(func(b []byte) (int, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.out.Write(b)
	})
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.mu.Lock()
			p.out.WriteString(sc.Text() + "\n")
			p.mu.Unlock()
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		close(p.lines)
		p.exited <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.exited
	})
	return p
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// waitLine waits for a stdout line containing s.
func (p *process) waitLine(t *testing.T, s string) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("exited before printing %q:\n%s", s, p.output())
			}
			if strings.Contains(line, s) {
				return
			}
		case <-timeout:
			t.Fatalf("no %q within 60s:\n%s", s, p.output())
		}
	}
}

// waitListening polls until addr accepts connections.
func waitListening(t *testing.T, p *process, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not listening after 30s:\n%s", addr, p.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitExit waits for the process to exit and returns its exit code.
func (p *process) waitExit(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case err := <-p.exited:
		p.exited <- err // for the cleanup
		if err == nil {
			return 0
		}
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		t.Fatal(err)
	case <-time.After(within):
		t.Fatalf("still running after %s:\n%s", within, p.output())
	}
	return -1
}

func TestServeDrainsOnSIGTERM(t *testing.T) {
	backend := mariadbtest.Start(t, mariadbtest.Options{Databases: []string{"ds_0", "ds_1"}})
	addr := freeAddr(t)
	rules := fmt.Sprintf(`databaseName: sharding_db
server:
  listen: 127.0.0.1:1
  metricsListen: 127.0.0.1:2
  users: [{ user: app, password: secret }]
dataSources:
  ds_0: { url: "mysql://%[1]s/ds_0", username: root, password: "" }
  ds_1: { url: "mysql://%[1]s/ds_1", username: root, password: "" }
rules:
  - !SHARDING
    tables:
      t_order:
        actualDataNodes: ds_${0..1}.t_order
        databaseStrategy: { standard: { shardingColumn: user_id, shardingAlgorithmName: by_user } }
    shardingAlgorithms:
      by_user: { type: INLINE, props: { algorithm-expression: "ds_${user_id %% 2}" } }
`, backend.Addr())
	file := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(file, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	p := start(t, ".", "serve", "--config", file, "--listen", addr, "--drain", "20s")
	waitListening(t, p, addr)

	db, err := sql.Open("mysql", "app:secret@tcp("+addr+")/sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE t_order (order_id BIGINT PRIMARY KEY, user_id INT)"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		n   int
		err error
	}
	done := make(chan answer, 1)
	go func() {
		var a answer
		a.err = conn.QueryRowContext(ctx, "SELECT SLEEP(2) + 5").Scan(&a.n)
		done <- a
	}()
	direct := backend.Open(t, "")
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		direct.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(2)%'").Scan(&n)
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the statement never reached the backend")
		}
		time.Sleep(10 * time.Millisecond)
	}

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// New connections are refused while the statement drains.
	refused := false
	for range 100 {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			refused = true
			break
		}
		c.Close()
		time.Sleep(10 * time.Millisecond)
	}
	if !refused {
		t.Error("still accepting connections after SIGTERM")
	}
	a := <-done
	if a.err != nil || a.n != 5 {
		t.Errorf("statement in flight at SIGTERM: %d, %v; want 5", a.n, a.err)
	}
	if code := p.waitExit(t, 15*time.Second); code != 0 {
		t.Errorf("exit code %d, want 0:\n%s", code, p.output())
	}
	if out := p.output(); !strings.Contains(out, "shutting down") || !strings.Contains(out, "stopped") || strings.Contains(out, "secret\"") {
		t.Errorf("log:\n%s", out)
	}
}

func TestHelpEverywhere(t *testing.T) {
	for _, cmd := range [][]string{{"--help"}, {"serve", "--help"}, {"demo", "--help"}, {"version"}} {
		out, err := exec.Command(binary(t), cmd...).CombinedOutput()
		if err != nil {
			t.Errorf("%v: %v\n%s", cmd, err, out)
			continue
		}
		if !strings.Contains(string(out), "shardflake") {
			t.Errorf("%v printed:\n%s", cmd, out)
		}
	}
	out, err := exec.Command(binary(t), "serve").CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "--config") {
		t.Errorf("serve without --config: exit %d\n%s", code, out)
	}
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	return -1
}
