package mariadbtest

import (
	"bytes"
	"context"
	"crypto/tls"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// ErrNotInstalled is returned when mariadbd or mariadb-install-db is missing.
var ErrNotInstalled = errors.New("mariadbtest: mariadbd not installed (Debian package mariadb-server)")

// readyTimeout bounds how long a server may take to accept connections.
const readyTimeout = 60 * time.Second

// Options tune a server. The zero value is a server with no databases.
type Options struct {
	// Databases are created once the server is ready.
	Databases []string
	// Args are extra mariadbd flags, e.g. "--max-connections=20".
	Args []string
	// ClientTLS, when set, is how the server's own connections (DB, DSN,
	// the readiness ping) use TLS: for a server started with
	// --require-secure-transport.
	ClientTLS *tls.Config
}

// Server is one running mariadbd on a loopback port, with its own data
// directory. It listens on the same port for its whole life, across Stop,
// Kill and Restart, so a rules file that names it stays valid.
type Server struct {
	bin  binaries
	dir  string
	port int
	opts Options

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{} // closed when the current process has exited
	closed bool

	tlsOnce sync.Once
}

type binaries struct {
	mariadbd  string
	installDB string
}

func lookup() (binaries, error) {
	var b binaries
	var err error
	if b.mariadbd, err = lookPath("mariadbd", "/usr/sbin/mariadbd"); err != nil {
		return b, ErrNotInstalled
	}
	if b.installDB, err = lookPath("mariadb-install-db", "/usr/bin/mariadb-install-db"); err != nil {
		return b, ErrNotInstalled
	}
	return b, nil
}

func lookPath(name, fallback string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	if _, err := os.Stat(fallback); err == nil {
		return fallback, nil
	}
	return "", fmt.Errorf("%s not found", name)
}

// Available reports whether MariaDB servers can be started here: nil, or
// ErrNotInstalled.
func Available() error {
	_, err := lookup()
	return err
}

// Require skips the test when err is not nil, or fails it when the
// environment variable CI is "true" (CI never skips). Use it with
// Available, or with the error of a shared server a TestMain launched.
func Require(t testing.TB, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and a test dependency is missing: %v", err)
	}
	t.Skipf("skipping: %v", err)
}

// RequireBinary returns the path of an executable the test needs (mariadb,
// sysbench, ...), skipping or failing as Require does when it is missing.
func RequireBinary(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Require(t, fmt.Errorf("%s not installed: %w", name, err))
	}
	return p
}

// Start launches a server for one test and closes it when the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	return StartN(t, 1, opts)[0]
}

// StartN launches n servers in parallel for one test and closes them when
// the test ends.
func StartN(t testing.TB, n int, opts Options) []*Server {
	t.Helper()
	Require(t, Available())
	servers, err := LaunchN(n, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		t.Cleanup(func() { s.Close() })
	}
	return servers
}

// LaunchN starts n servers in parallel. On error none is left running. The
// caller closes them (TestMain: after m.Run).
func LaunchN(n int, opts Options) ([]*Server, error) {
	servers := make([]*Server, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { servers[i], errs[i] = Launch(opts) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, s := range servers {
			if s != nil {
				s.Close()
			}
		}
		return nil, err
	}
	return servers, nil
}

// Launch starts one server and waits until it accepts connections. The
// caller must Close it.
func Launch(opts Options) (*Server, error) {
	bin, err := lookup()
	if err != nil {
		return nil, err
	}
	// os.MkdirTemp rather than t.TempDir: the socket path must stay short.
	dir, err := os.MkdirTemp("", "mariadbtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, opts: opts}
	if err := s.install(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.startFreePort(); err != nil {
		s.Close()
		return nil, err
	}
	if len(opts.Databases) > 0 {
		db, err := s.DB("")
		if err != nil {
			s.Close()
			return nil, err
		}
		defer db.Close()
		for _, name := range opts.Databases {
			if _, err := db.Exec("CREATE DATABASE IF NOT EXISTS `" + name + "`"); err != nil {
				s.Close()
				return nil, fmt.Errorf("mariadbtest: create database %s: %w", name, err)
			}
		}
	}
	return s, nil
}

func (s *Server) install() error {
	// Each server has a tmpdir of its own: mariadbd deletes the #sql temp
	// files it finds in its tmpdir at startup, so servers sharing /tmp
	// delete each other's (a bootstrap then fails with 1051 on
	// mysql.tmp_user_sys).
	if err := os.MkdirAll(s.tmpDir(), 0o700); err != nil {
		return err
	}
	cmd := exec.Command(s.bin.installDB,
		"--no-defaults",
		"--user=root",
		"--datadir="+filepath.Join(s.dir, "data"),
		"--tmpdir="+s.tmpDir(),
		"--auth-root-authentication-method=normal",
		"--skip-test-db",
		"--skip-name-resolve",
		"--innodb-log-file-size=8M",
		"--innodb-buffer-pool-size=32M",
		// A private tmpdir: mariadbd deletes the #sql* files it finds in
		// its tmpdir at startup, so servers sharing /tmp break each
		// other's bootstrap ("Unknown table 'mysql.tmp_user_sys'").
		"--tmpdir="+s.dir,
	)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("mariadbtest: mariadb-install-db: %w\n%s", err, tail(out))
	}
	return nil
}

// startFreePort starts mariadbd on a free port, trying another port when
// the one it picked was taken in the meantime.
func (s *Server) startFreePort() error {
	var err error
	for range 5 {
		if s.port, err = freePort(); err != nil {
			return err
		}
		if err = s.start(); !errors.Is(err, errPortInUse) {
			return err
		}
	}
	return err
}

var errPortInUse = errors.New("port in use")

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) args() []string {
	args := []string{
		"--no-defaults",
		"--user=root",
		"--datadir=" + filepath.Join(s.dir, "data"),
		"--tmpdir=" + s.tmpDir(),
		"--port=" + strconv.Itoa(s.port),
		"--bind-address=127.0.0.1",
		"--socket=" + filepath.Join(s.dir, "mysqld.sock"),
		"--tmpdir=" + s.dir,
		"--pid-file=" + filepath.Join(s.dir, "mysqld.pid"),
		"--log-error=" + s.logPath(),
		"--skip-name-resolve",
		"--skip-log-bin",
		"--innodb-buffer-pool-size=32M",
		"--innodb-log-file-size=8M",
		"--innodb-flush-log-at-trx-commit=2",
		"--innodb-doublewrite=0",
		"--innodb-use-native-aio=0",
		"--performance-schema=OFF",
		"--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_general_ci",
		"--max-connections=500",
		"--key-buffer-size=1M",
		"--table-open-cache=400",
	}
	return append(args, s.opts.Args...)
}

func (s *Server) logPath() string { return filepath.Join(s.dir, "mariadbd.log") }

func (s *Server) tmpDir() string { return filepath.Join(s.dir, "tmp") }

// start runs mariadbd on s.port and waits until it answers.
func (s *Server) start() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("mariadbtest: server closed")
	}
	logStart := fileSize(s.logPath())
	cmd := exec.Command(s.bin.mariadbd, s.args()...)
	// The server dies with the test binary even if cleanup never runs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		s.mu.Unlock()
		return fmt.Errorf("mariadbtest: start mariadbd: %w", err)
	}
	done := make(chan struct{})
	s.cmd, s.done = cmd, done
	s.mu.Unlock()
	go func() {
		cmd.Wait()
		close(done)
	}()

	deadline := time.Now().Add(readyTimeout)
	for {
		if s.ping() == nil {
			return nil
		}
		select {
		case <-done:
			log := readFrom(s.logPath(), logStart)
			if bytes.Contains(log, []byte("Address already in use")) {
				return errPortInUse
			}
			return fmt.Errorf("mariadbtest: mariadbd exited before it was ready:\n%s", tail(log))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Kill()
			return fmt.Errorf("mariadbtest: mariadbd not ready after %s:\n%s", readyTimeout, tail(readFrom(s.logPath(), logStart)))
		}
	}
}

func (s *Server) ping() error {
	c, err := net.DialTimeout("tcp", s.Addr(), time.Second)
	if err != nil {
		return err
	}
	c.Close()
	db, err := s.DB("")
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// Addr returns host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Host returns the loopback address the server listens on.
func (s *Server) Host() string { return "127.0.0.1" }

// Port returns the server's TCP port.
func (s *Server) Port() int { return s.port }

// User returns the account with every privilege (root, no password).
func (s *Server) User() string { return "root" }

// DSN returns a go-sql-driver/mysql DSN for database db as root.
func (s *Server) DSN(db string) string {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "tcp"
	cfg.Addr = s.Addr()
	cfg.DBName = db
	cfg.Timeout = 5 * time.Second
	if s.opts.ClientTLS != nil {
		cfg.TLSConfig = s.tlsName()
	}
	return cfg.FormatDSN()
}

// tlsName registers the server's ClientTLS with the driver under a name
// of its own, once.
func (s *Server) tlsName() string {
	name := "mariadbtest-" + filepath.Base(s.dir)
	s.tlsOnce.Do(func() { mysql.RegisterTLSConfig(name, s.opts.ClientTLS) })
	return name
}

// DB opens a connection pool to database db as root.
func (s *Server) DB(db string) (*sql.DB, error) {
	return sql.Open("mysql", s.DSN(db))
}

// Open opens a connection pool to database db for a test and closes it
// when the test ends.
func (s *Server) Open(t testing.TB, db string) *sql.DB {
	t.Helper()
	d, err := s.DB(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// Exec runs statements on database db (empty: none) and fails the test on
// the first error.
func (s *Server) Exec(t testing.TB, db string, statements ...string) {
	t.Helper()
	d, err := s.DB(db)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	conn, err := d.Conn(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", s.Addr(), err)
	}
	defer conn.Close()
	for _, q := range statements {
		if _, err := conn.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %s: %v", s.Addr(), q, err)
		}
	}
}

// Running reports whether the mariadbd process is up.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done == nil {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// Kill ends the server at once with SIGKILL, as a crash would, and waits
// for the process to exit. The data directory stays for Restart.
func (s *Server) Kill() error { return s.signal(syscall.SIGKILL, 0) }

// Stop shuts the server down cleanly (SIGTERM), killing it if it takes
// longer than 30 s. The data directory stays for Restart.
func (s *Server) Stop() error { return s.signal(syscall.SIGTERM, 30*time.Second) }

func (s *Server) signal(sig syscall.Signal, grace time.Duration) error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	default:
	}
	if err := cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	if grace > 0 {
		select {
		case <-done:
			return nil
		case <-time.After(grace):
			cmd.Process.Kill()
		}
	}
	<-done
	return nil
}

// Restart starts a stopped or killed server again on the same port and
// waits until it answers. The port may linger in use briefly; Restart
// retries for a while.
func (s *Server) Restart() error {
	if s.Running() {
		return errors.New("mariadbtest: restart of a running server")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := s.start()
		if !errors.Is(err, errPortInUse) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Close kills the server and removes its directory. It is safe to call
// more than once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	err := s.Kill()
	if rmErr := os.RemoveAll(s.dir); err == nil {
		err = rmErr
	}
	return err
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func readFrom(path string, offset int64) []byte {
	b, err := os.ReadFile(path)
	if err != nil || offset > int64(len(b)) {
		return nil
	}
	return b[offset:]
}

// tail keeps the last lines of a log for an error message.
func tail(b []byte) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}
