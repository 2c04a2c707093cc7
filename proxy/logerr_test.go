package proxy

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/shardflake/shardflake/config"
)

// syncBuffer is a log sink the pool's goroutines may write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestDataSourceDownLogsOneLine: the warning names the cause on one line,
// not the client library's stack trace.
func TestDataSourceDownLogsOneLine(t *testing.T) {
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	p := newPool(config.DataSource{Name: "ds_gone", Host: "127.0.0.1", Port: 1, Database: "x", User: "root", MaxPoolSize: 2}, false, log)
	if _, err := p.get(context.Background(), 1); err == nil {
		t.Fatal("got a connection to a port nothing listens on")
	}
	p.close()
	out := buf.String()
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "data source down") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("no data source down warning in:\n%s", out)
	}
	if !strings.Contains(line, "connection refused") {
		t.Errorf("the warning does not say why: %s", line)
	}
	for _, bad := range []string{".go:", "\\n", "goroutine"} {
		if strings.Contains(out, bad) {
			t.Errorf("the log carries a stack trace (%q):\n%s", bad, out)
		}
	}
}
