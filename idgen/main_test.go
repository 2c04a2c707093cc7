package idgen

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as the helper processes the kill -9 and etcd tests
// start: with IDGEN_TEST_HELPER set it runs the named helper instead of the
// tests.
const helperEnv = "IDGEN_TEST_HELPER"

func TestMain(m *testing.M) {
	// The etcd client logs every failed retry as a JSON warning on stderr;
	// the etcd tests fail calls on purpose. ETCD_CLIENT_DEBUG is the
	// client's own knob for its log level (operators can set it too).
	if os.Getenv("ETCD_CLIENT_DEBUG") == "" {
		os.Setenv("ETCD_CLIENT_DEBUG", "error")
	}
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "issue":
		os.Exit(helperIssue())
	case "etcd":
		os.Exit(helperEtcd())
	default:
		fmt.Fprintf(os.Stderr, "unknown helper %q\n", os.Getenv(helperEnv))
		os.Exit(2)
	}
}

// helperIssue issues ids from a state file with a fake clock that starts at
// IDGEN_CLOCK_START_MS (Unix ms) and advances 1 ms every 100 readings, so
// the parent controls exactly where the clock is after a restart. It prints
// "id N" per id until killed, or "err MESSAGE" and exits 3 on an error.
func helperIssue() int {
	startMs, err := strconv.ParseInt(os.Getenv("IDGEN_CLOCK_START_MS"), 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "IDGEN_CLOCK_START_MS:", err)
		return 2
	}
	cfg := DefaultConfig()
	cfg.WorkerID = 9
	cfg.StateFile = os.Getenv("IDGEN_STATE_FILE")
	g, err := New(context.Background(), cfg, WithClock(newTickClock(time.UnixMilli(startMs), 100, time.Millisecond)))
	if err != nil {
		fmt.Printf("err %v\n", err)
		return 3
	}
	out := bufio.NewWriterSize(os.Stdout, 64)
	for {
		id, err := g.Next()
		if err != nil {
			fmt.Fprintf(out, "err %v\n", err)
			out.Flush()
			return 3
		}
		// One write per id: what the parent reads was issued.
		fmt.Fprintf(out, "id %d\n", id)
		out.Flush()
	}
}

// helperProc is a running helper process and its output lines.
type helperProc struct {
	cmd   *exec.Cmd
	lines chan string
	stdin io.WriteCloser
}

// startHelper runs the test binary as helper name with env added, and
// kills it when the test ends.
func startHelper(t *testing.T, name string, env ...string) *helperProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), helperEnv+"="+name), env...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helperProc{cmd: cmd, lines: make(chan string, 1024), stdin: stdin}
	go func() {
		defer close(h.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		for range h.lines {
		}
		cmd.Wait()
	})
	return h
}

// next returns the helper's next output line, or fails after timeout.
func (h *helperProc) next(t *testing.T, timeout time.Duration) (string, bool) {
	t.Helper()
	select {
	case line, ok := <-h.lines:
		return line, ok
	case <-time.After(timeout):
		t.Fatalf("helper printed nothing for %s", timeout)
		return "", false
	}
}

// parseID parses an "id N" line.
func parseID(t *testing.T, line string) int64 {
	t.Helper()
	s, ok := strings.CutPrefix(line, "id ")
	if !ok {
		t.Fatalf("helper line %q, want \"id N\"", line)
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("helper line %q: %v", line, err)
	}
	return id
}
