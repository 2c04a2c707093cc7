package proxy

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/shardflake/shardflake/idgen"
)

// probeTimeout bounds one data source probe; a data source slower than
// this to accept a login is not ready for statements either.
const probeTimeout = 2 * time.Second

// Readiness says whether the proxy can serve statements: every data source
// accepts a login and every key generator holds its worker id. /readyz
// answers it as JSON.
type Readiness struct {
	Ready bool `json:"ready"`
	// Problems name what is wrong, one line each; empty when ready.
	Problems      []string             `json:"problems,omitempty"`
	DataSources   []DataSourceHealth   `json:"dataSources"`
	KeyGenerators []KeyGeneratorHealth `json:"keyGenerators"`
	// Replicas are the read/write groups' replicas; one that is excluded
	// leaves the proxy ready and is listed in Degraded.
	Replicas []ReplicaHealth `json:"replicas,omitempty"`
	Degraded []string        `json:"degraded,omitempty"`
}

// DataSourceHealth is one data source as a probe found it.
type DataSourceHealth struct {
	Name     string `json:"name"`
	Address  string `json:"address"`
	Database string `json:"database"`
	Up       bool   `json:"up"`
	// Error is why the probe failed; empty when up.
	Error string `json:"error,omitempty"`
	// Latency is how long the probe's login took, in milliseconds.
	LatencyMs float64 `json:"latencyMs"`
}

// KeyGeneratorHealth is one key generator's worker-id state.
type KeyGeneratorHealth struct {
	Name         string `json:"name"`
	DatacenterID int    `json:"datacenterId"`
	WorkerID     int    `json:"workerId"`
	LeaseState   string `json:"leaseState"`
	// OK is true while the generator can issue ids: its pair is static or
	// leased (held, or renewing before its deadline), and its clock is not
	// behind its last id or the persisted high-water mark beyond the
	// tolerance.
	OK bool `json:"ok"`
	// Error is why it cannot issue now; empty when OK.
	Error string `json:"error,omitempty"`
}

// Readiness probes every data source (a fresh login, in parallel, bounded
// by ctx and probeTimeout) and reads every key generator's lease state.
func (s *Server) Readiness(ctx context.Context) Readiness {
	r := Readiness{Ready: true, DataSources: s.probeDataSources(ctx), KeyGenerators: s.keyGeneratorHealth()}
	if s.shutdown.Load() {
		r.Problems = append(r.Problems, "shardflake is shutting down")
	} else if s.draining.Load() {
		r.Problems = append(r.Problems, "shardflake is draining (DRAIN COMPUTE NODE): its sessions finish, new connections belong elsewhere")
	}
	for _, ds := range r.DataSources {
		if !ds.Up {
			r.Problems = append(r.Problems, fmt.Sprintf("data source %s (%s/%s) is unreachable: %s", ds.Name, ds.Address, ds.Database, ds.Error))
		}
	}
	for _, kg := range r.KeyGenerators {
		switch {
		case kg.OK:
		case kg.Error != "":
			r.Problems = append(r.Problems, fmt.Sprintf("key generator %s cannot issue keys (statements that need no new key are served): %s", kg.Name, kg.Error))
		default:
			r.Problems = append(r.Problems, fmt.Sprintf("key generator %s holds no worker id (lease %s)", kg.Name, kg.LeaseState))
		}
	}
	r.Replicas, r.Degraded = s.current().rw.health()
	r.Ready = len(r.Problems) == 0
	return r
}

// probeDataSources logs in to every data source once, in the rules file's
// order. It opens its own connections, so a pool at maxPoolSize does not
// look like a data source that is down, and leaves the pools as they are.
func (s *Server) probeDataSources(ctx context.Context) []DataSourceHealth {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	out := make([]DataSourceHealth, len(s.current().rules.DataSources))
	var wg sync.WaitGroup
	for i, ds := range s.current().rules.DataSources {
		out[i] = DataSourceHealth{Name: ds.Name, Address: net.JoinHostPort(ds.Host, strconv.Itoa(ds.Port)), Database: ds.Database}
		p := s.current().pools[ds.Name]
		wg.Go(func() {
			start := time.Now()
			err := probe(ctx, p)
			out[i].LatencyMs = float64(time.Since(start).Microseconds()) / 1000
			if err != nil {
				out[i].Error = err.Error()
				return
			}
			out[i].Up = true
		})
	}
	wg.Wait()
	return out
}

// probe logs in to p's data source and out again. The login runs on its
// own goroutine so that ctx bounds the wait even when the data source
// accepts TCP but never answers.
func probe(ctx context.Context, p *pool) error {
	done := make(chan error, 1)
	go func() {
		bc, err := dialBackend(ctx, p)
		if err == nil {
			bc.close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil && ctx.Err() != nil {
			return fmt.Errorf("no answer within %s", probeTimeout)
		}
		return err
	case <-ctx.Done():
		return fmt.Errorf("no answer within %s", probeTimeout)
	}
}

// keyGeneratorHealth reports the key generators that have a state
// (SNOWFLAKE, SEGMENT, TICKET), by name.
func (s *Server) keyGeneratorHealth() []KeyGeneratorHealth {
	names := slices.Sorted(maps.Keys(s.keys))
	out := []KeyGeneratorHealth{}
	for _, name := range names {
		if st, ok := s.keys[name].(idgen.Stater); ok {
			out = append(out, stateHealth(name, st))
			continue
		}
		g, ok := s.keys[name].(statser)
		if !ok {
			continue
		}
		st := g.Stats()
		h := KeyGeneratorHealth{
			Name: name, DatacenterID: st.DatacenterID, WorkerID: st.WorkerID,
			LeaseState: st.LeaseState.String(), OK: issuing(st.LeaseState),
		}
		if r, ok := g.(interface{ Ready() error }); ok {
			if err := r.Ready(); err != nil {
				h.OK, h.Error = false, err.Error()
			}
		}
		out = append(out, h)
	}
	return out
}

// issuing reports whether a generator in lease state st issues ids.
func issuing(st idgen.LeaseState) bool {
	switch st {
	case idgen.LeaseNone, idgen.LeaseHeld, idgen.LeaseRenewing:
		return true
	}
	return false
}
