package idgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// reclaimRetry is how often a generator without a usable pair asks etcd
// again, so issuing resumes soon after etcd answers.
const reclaimRetry = 250 * time.Millisecond

// NoWorkerIDError: the generator started while etcd could not be reached
// (or refused the claim) and holds no pair yet; it keeps claiming in the
// background. It matches ErrLeaseLost: no id may be issued.
type NoWorkerIDError struct{ Reason string }

// Error says why there is no pair.
func (e *NoWorkerIDError) Error() string {
	return "snowflake: no worker id yet, still claiming one from etcd: " + e.Reason
}

// Is makes a NoWorkerIDError match ErrLeaseLost.
func (e *NoWorkerIDError) Is(target error) bool { return target == ErrLeaseLost }

// claimLater says whether New starts without a pair after its first claim
// failed with err: yes when etcd could not be reached or answered with an
// error, so a proxy serves what needs no key while etcd is down; no when
// every pair is taken or a mark is corrupt (an operator must act), or the
// caller gave up.
func claimLater(ctx context.Context, err error) bool {
	return ctx.Err() == nil && !errors.Is(err, ErrAllPairsTaken) && !errors.Is(err, ErrHighWater)
}

// claimInBackground claims a pair for a generator that started without
// one, then keeps its lease like any other.
func (g *Snowflake) claimInBackground() {
	if _, ok := g.reclaim(); !ok {
		g.wg.Done()
		return
	}
	g.keepLease()
}

// usableFirst orders the free pairs so that those this generator can
// issue from at once come first: a pair whose mark says its last holder's
// clock was ahead of this one's by more than the tolerance would refuse
// every key until this clock caught up (minutes, after a restart with the
// clock set back), while another free pair may have no mark or an older
// one. The order within each group is kept.
func (s *etcdSource) usableFirst(ctx context.Context, pairs [][2]int, held map[string]bool) ([][2]int, error) {
	prefix := s.cfg.Etcd.Prefix + "/hw/"
	rctx, cancel := s.rpc(ctx)
	resp, err := s.cli.Get(rctx, prefix, clientv3.WithPrefix())
	cancel()
	if err != nil {
		return nil, fmt.Errorf("snowflake: etcd scan of %s: %w", prefix, err)
	}
	now := s.clk.read().ms
	tol := s.cfg.MaxTolerate.Milliseconds()
	ahead := map[string]bool{}
	for _, kv := range resp.Kvs {
		var m markJSON
		if json.Unmarshal(kv.Value, &m) != nil || m.WallUnixMs-now > tol {
			ahead[string(kv.Key)] = true
		}
	}
	out := make([][2]int, 0, len(pairs))
	var later [][2]int
	for _, p := range pairs {
		switch {
		case held[s.workerKey(p[0], p[1])]:
		case ahead[s.markKey(p[0], p[1])]:
			later = append(later, p)
		default:
			out = append(out, p)
		}
	}
	return append(out, later...), nil
}

// Ready reports why the generator cannot issue an id now, or nil, without
// issuing one: closed, no pair yet, the lease lost or not renewed in time,
// or the clock behind the last id (or the persisted mark) by more than the
// tolerance. Readiness probes call it.
func (g *Snowflake) Ready() error {
	now := g.clk.read()
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return ErrClosed
	}
	if g.etcd != nil {
		if err := g.leaseUsableLocked(now); err != nil {
			return err
		}
	}
	ms := now.ms - g.epochMs
	if ms < 0 {
		return fmt.Errorf("%w: %s is before %s", ErrBeforeEpoch,
			time.UnixMilli(now.ms).UTC().Format(timeFormat), g.cfg.Layout.Epoch.UTC().Format(timeFormat))
	}
	if drift := g.wallMax - ms; drift > g.tolMs {
		return &ClockBackwardsError{
			Drift:     time.Duration(drift) * time.Millisecond,
			Tolerance: g.cfg.MaxTolerate,
			HighWater: g.wallFromMark,
			ResumeAt:  time.UnixMilli(g.epochMs + g.wallMax - g.tolMs).UTC(),
		}
	}
	return nil
}

// reconnectSoon caps the etcd client's reconnect backoff at a second.
// gRPC's default grows to two minutes (1 s x 1.6 per attempt): after an
// outage of twenty seconds the next attempt came up to eight seconds after
// etcd was back, and no key was issued meanwhile.
func reconnectSoon() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
		MinConnectTimeout: time.Second,
	})}
}
