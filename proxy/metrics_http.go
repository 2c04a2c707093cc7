package proxy

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/shardflake/shardflake/proxy/metrics"
)

// readyCacheTTL is how long a readiness answer is reused: probes log in
// to every data source, and several scrapers or kubelets asking at once
// should cost one round.
const readyCacheTTL = time.Second

// OpsServer serves the proxy's operations endpoints over HTTP, on
// server.metricsListen:
//
//   - /metrics: the Metrics registry, with pool and key generator
//     collectors that read the Server at scrape time;
//   - /healthz: 200 while the process runs;
//   - /readyz: 200 when every data source accepts a login and every key
//     generator holds its worker id, else 503; the JSON body says what is
//     wrong (Readiness).
//
// It is safe for concurrent use.
type OpsServer struct {
	srv     *Server
	metrics *metrics.Metrics
	http    *http.Server
	mux     *http.ServeMux

	readyMu sync.Mutex // held while probing, so concurrent callers share one probe
	readyAt time.Time
	ready   Readiness
	// readyDraining is whether the server was draining when ready was
	// probed: DRAIN and RESUME show at once, not after the cache's TTL.
	readyDraining bool
}

// NewOpsServer builds the endpoints for srv. m may be nil (no /metrics);
// otherwise it must be the Observer srv reports to, and serves no other
// server.
func NewOpsServer(srv *Server, m *metrics.Metrics) (*OpsServer, error) {
	o := &OpsServer{srv: srv, metrics: m, mux: http.NewServeMux()}
	if m != nil {
		if err := srv.attachMetrics(m); err != nil {
			return nil, err
		}
		h := promhttp.HandlerFor(m.Registry(), promhttp.HandlerOpts{Registry: m.Registry(), ErrorHandling: promhttp.ContinueOnError})
		o.mux.Handle("GET /metrics", promhttp.InstrumentMetricHandler(m.Registry(), h))
	}
	o.mux.HandleFunc("GET /healthz", o.healthz)
	o.mux.HandleFunc("GET /readyz", o.readyz)
	o.http = &http.Server{
		Handler:           o.mux,
		ReadHeaderTimeout: 5 * time.Second,
		WriteTimeout:      30 * time.Second,
	}
	return o, nil
}

// Handler returns the endpoints as one handler, for tests and for callers
// that run their own HTTP server.
func (o *OpsServer) Handler() http.Handler { return o.mux }

// Serve answers HTTP on l until Shutdown; it then returns
// http.ErrServerClosed.
func (o *OpsServer) Serve(l net.Listener) error { return o.http.Serve(l) }

// Shutdown stops the listener and waits for requests in flight, up to ctx.
func (o *OpsServer) Shutdown(ctx context.Context) error { return o.http.Shutdown(ctx) }

// healthStatus is /healthz's answer.
type healthStatus struct {
	Status        string  `json:"status"`
	UptimeSeconds float64 `json:"uptimeSeconds"`
	Clients       int     `json:"clients"`
}

func (o *OpsServer) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, healthStatus{
		Status:        "alive",
		UptimeSeconds: time.Since(o.srv.started).Round(time.Millisecond).Seconds(),
		Clients:       o.srv.Clients(),
	})
}

func (o *OpsServer) readyz(w http.ResponseWriter, r *http.Request) {
	rd := o.readiness(r.Context())
	code := http.StatusOK
	if !rd.Ready {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, rd)
}

// readiness returns a probe at most readyCacheTTL old; shutting down,
// draining and resuming are reported at once.
func (o *OpsServer) readiness(ctx context.Context) Readiness {
	o.readyMu.Lock()
	defer o.readyMu.Unlock()
	draining := o.srv.draining.Load()
	if !o.srv.shutdown.Load() && draining == o.readyDraining && !o.readyAt.IsZero() && time.Since(o.readyAt) < readyCacheTTL {
		return o.ready
	}
	o.ready = o.srv.Readiness(ctx)
	o.readyAt, o.readyDraining = time.Now(), draining
	return o.ready
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
