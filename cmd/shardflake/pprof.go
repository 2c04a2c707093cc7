package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

// maxProfileSeconds bounds a CPU profile request.
const maxProfileSeconds = 600

// servePprof serves Go's profiles in pprof format on addr until stop is
// called: /debug/pprof/profile?seconds=N (CPU) and /debug/pprof/NAME for
// the runtime's named profiles (allocs, heap, goroutine, mutex, block,
// threadcreate; ?debug=1 for text). They are for measuring the proxy
// (bench/), so they are off unless --pprof names an address, and served
// on it alone: a profile reveals SQL text in its stacks. The handlers are
// written on runtime/pprof rather than imported from net/http/pprof, whose
// import registers them on http.DefaultServeMux.
//
// An address without a host (":6060", or a bare port) binds the loopback
// interface only: profiles reveal SQL text, so listening on every
// interface has to be asked for by naming it (0.0.0.0:6060).
func servePprof(addr string, log *slog.Logger) (bound net.Addr, stop func(), err error) {
	l, err := net.Listen("tcp", pprofListenAddr(addr))
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/profile", cpuProfile)
	mux.HandleFunc("GET /debug/pprof/{name}", namedProfile)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Info("profiling endpoints", "addr", "http://"+l.Addr().String()+"/debug/pprof/")
	go srv.Serve(l)
	return l.Addr(), func() { srv.Close() }, nil
}

// cpuProfile records a CPU profile for ?seconds= (default 30).
func cpuProfile(w http.ResponseWriter, r *http.Request) {
	secs := 30
	if s := r.URL.Query().Get("seconds"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 || n > maxProfileSeconds {
			http.Error(w, fmt.Sprintf("seconds: want 1 to %d", maxProfileSeconds), http.StatusBadRequest)
			return
		}
		secs = n
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	if err := pprof.StartCPUProfile(w); err != nil {
		// Another profile is running.
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	select {
	case <-time.After(time.Duration(secs) * time.Second):
	case <-r.Context().Done():
	}
	pprof.StopCPUProfile()
}

// namedProfile writes one of the runtime's named profiles.
func namedProfile(w http.ResponseWriter, r *http.Request) {
	p := pprof.Lookup(r.PathValue("name"))
	if p == nil {
		var names []string
		for _, p := range pprof.Profiles() {
			names = append(names, p.Name())
		}
		http.Error(w, "unknown profile; try profile?seconds=N or one of: "+strings.Join(names, ", "), http.StatusNotFound)
		return
	}
	debug, _ := strconv.Atoi(r.URL.Query().Get("debug"))
	if debug > 0 {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	p.WriteTo(w, debug)
}

// pprofListenAddr is addr with the loopback host when it names none.
func pprofListenAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		// A bare port.
		return net.JoinHostPort("127.0.0.1", addr)
	}
	if host == "" {
		return net.JoinHostPort("127.0.0.1", port)
	}
	return addr
}
