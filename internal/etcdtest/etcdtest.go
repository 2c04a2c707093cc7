// Package etcdtest runs a real etcd (Debian's etcd-server) for integration
// tests: one member on free loopback ports with a temporary data dir,
// tuned to elect itself leader in a fraction of a second. Without the
// binary a test is skipped locally and fails when CI is "true".
//
// A Server can be made before it starts (New), so a test can point a
// client at an etcd that is not there yet and then Start it on the same
// address. Server methods are used by one test goroutine.
package etcdtest

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Server is one etcd member.
type Server struct {
	t       testing.TB
	bin     string
	dir     string
	client  string
	peer    string
	logFile string
	cmd     *exec.Cmd
	exited  chan struct{}
}

// New prepares an etcd on free ports without starting it; it is killed
// when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("etcd")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("etcd not installed (Debian package etcd-server): %v", err)
		}
		t.Skipf("etcd not installed (Debian package etcd-server): %v", err)
	}
	dir := t.TempDir()
	s := &Server{t: t, bin: bin, dir: filepath.Join(dir, "data"), logFile: filepath.Join(dir, "etcd.log"),
		client: "http://" + freeAddr(t), peer: "http://" + freeAddr(t)}
	t.Cleanup(s.Stop)
	return s
}

// Start launches a prepared etcd, or starts it again after Stop, and
// waits until it answers /health.
func (s *Server) Start() {
	s.t.Helper()
	log, err := os.OpenFile(s.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		s.t.Fatal(err)
	}
	defer log.Close()
	s.cmd = exec.Command(s.bin, "--name", "etcdtest", "--data-dir", s.dir,
		"--listen-client-urls", s.client, "--advertise-client-urls", s.client,
		"--listen-peer-urls", s.peer, "--initial-advertise-peer-urls", s.peer,
		"--initial-cluster", "etcdtest="+s.peer,
		"--heartbeat-interval", "10", "--election-timeout", "100",
		"--logger", "zap", "--log-level", "warn")
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) {
		cmd.Wait()
		close(exited)
	}(s.cmd, s.exited)
	deadline := time.Now().Add(30 * time.Second)
	for !s.healthy() {
		select {
		case <-s.exited:
			b, _ := os.ReadFile(s.logFile)
			s.t.Fatalf("etcd exited during start-up:\n%s", b)
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatal("etcd did not become healthy within 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Endpoint is the client URL, http://127.0.0.1:PORT.
func (s *Server) Endpoint() string { return s.client }

// Stop kills etcd (SIGKILL) and waits for it; the data dir stays.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
	s.cmd = nil
}

func (s *Server) healthy() bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(s.client + "/health")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode == http.StatusOK && strings.Contains(string(b), `"health":"true"`)
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
