package main

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestServePprof(t *testing.T) {
	addr, stop, err := servePprof("127.0.0.1:0", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	tests := []struct {
		path string
		want string
	}{
		{"/debug/pprof/goroutine?debug=1", "TestServePprof"},
		{"/debug/pprof/heap?debug=1", "heap profile"},
		{"/debug/pprof/allocs", ""},
		{"/debug/pprof/profile?seconds=1", ""},
	}
	for _, tt := range tests {
		resp, err := http.Get("http://" + addr.String() + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(body) == 0 || !strings.Contains(string(body), tt.want) {
			t.Errorf("GET %s: %s, body without %q", tt.path, resp.Status, tt.want)
		}
	}
	for _, path := range []string{"/debug/pprof/nonsense", "/debug/pprof/profile?seconds=x"} {
		resp, err := http.Get("http://" + addr.String() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("GET %s: %s, want an error status", path, resp.Status)
		}
	}
	req, _ := http.NewRequest("GET", "/debug/pprof/heap", nil)
	if _, pattern := http.DefaultServeMux.Handler(req); pattern != "" {
		t.Errorf("profiling handlers are on http.DefaultServeMux (%q)", pattern)
	}
	if _, _, err := servePprof("127.0.0.1:-1", slog.New(slog.DiscardHandler)); err == nil {
		t.Error("a bad address: want an error")
	}
}

// TestPprofBindsLoopbackByDefault: --pprof :PORT or a bare port listens
// on 127.0.0.1 only; an address that names a host is used as given.
func TestPprofBindsLoopbackByDefault(t *testing.T) {
	for _, give := range []string{":0", "0"} {
		addr, stop, err := servePprof(give, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatalf("%q: %v", give, err)
		}
		stop()
		if ip := addr.(*net.TCPAddr).IP; !ip.IsLoopback() {
			t.Errorf("--pprof %q listened on %s, want loopback only", give, addr)
		}
	}
	tests := []struct{ give, want string }{
		{":6060", "127.0.0.1:6060"},
		{"6060", "127.0.0.1:6060"},
		{"0.0.0.0:6060", "0.0.0.0:6060"},
		{"[::1]:6060", "[::1]:6060"},
		{"localhost:6060", "localhost:6060"},
	}
	for _, tt := range tests {
		if got := pprofListenAddr(tt.give); got != tt.want {
			t.Errorf("pprofListenAddr(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}
