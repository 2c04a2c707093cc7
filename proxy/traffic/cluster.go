package traffic

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/shardflake/shardflake/config"
)

// ClusterConfig says where the proxies of one fleet share their cluster
// rules' budgets.
type ClusterConfig struct {
	Endpoints   []string
	DialTimeout time.Duration
	// Prefix is the key prefix: Prefix/<rule>/<member> holds a member's
	// demand, on its lease.
	Prefix string
	// LeaseTTL is how long a member that stopped renewing (a proxy that
	// died) keeps its share.
	LeaseTTL time.Duration
	// Member names this proxy; unique in the fleet.
	Member string
	// Interval is how often shares are rebalanced (default 1s).
	Interval time.Duration
}

// Cluster shares each cluster rule's budget among the proxies on one etcd.
// Every Interval each proxy writes its demand for the rule (permits asked
// per second, refused ones included) under its lease, reads everyone's,
// and gives its token bucket the share max-min fairness assigns it: every
// member gets what it asks up to an equal split, what is left goes to the
// ones that want more, and what nobody wants is split evenly. Each member
// computes the same split from the same demands, so the shares add up to
// the budget. A member that dies keeps its share until its lease ends;
// etcd then deletes its demand, and the others, who watch for deletions,
// rebalance at once instead of at their next round.
type Cluster struct {
	set   *Set
	cfg   ClusterConfig
	cli   *clientv3.Client
	lease clientv3.LeaseID
	rules []*clusterRule

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

type clusterRule struct {
	rule      *Rule
	requested uint64 // rule.requested at the last round
	// demands are the members' demands the last round read; only the
	// loop's goroutine uses them.
	demands map[string]float64
}

// HasCluster reports whether the set has cluster rules.
func (s *Set) HasCluster() bool {
	for _, r := range s.rules {
		if r.set.Load().rule.Scope == config.TrafficCluster {
			return true
		}
	}
	return false
}

// StartCluster joins the fleet on etcd: it takes a lease, does a first
// round (so the shares hold before the first statement) and rebalances
// every Interval until Close.
func (s *Set) StartCluster(ctx context.Context, cfg ClusterConfig) (*Cluster, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: cfg.Endpoints, DialTimeout: cfg.DialTimeout})
	if err != nil {
		return nil, fmt.Errorf("traffic: etcd client for %v: %w", cfg.Endpoints, err)
	}
	c := &Cluster{set: s, cfg: cfg, cli: cli, stop: make(chan struct{}), done: make(chan struct{})}
	for _, r := range s.rules {
		if r.set.Load().rule.Scope == config.TrafficCluster {
			c.rules = append(c.rules, &clusterRule{rule: r})
		}
	}
	rctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout+cfg.LeaseTTL)
	defer cancel()
	keep, err := c.grant(rctx)
	if err != nil {
		cli.Close()
		return nil, err
	}
	if err := c.round(rctx, cfg.Interval); err != nil {
		c.revoke()
		cli.Close()
		return nil, err
	}
	go c.loop(keep)
	return c, nil
}

// grant takes a new lease and keeps it alive.
func (c *Cluster) grant(ctx context.Context) (<-chan *clientv3.LeaseKeepAliveResponse, error) {
	lease, err := c.cli.Grant(ctx, int64(max(c.cfg.LeaseTTL/time.Second, 2)))
	if err != nil {
		return nil, fmt.Errorf("traffic: etcd lease: %w", err)
	}
	keep, err := c.cli.KeepAlive(context.Background(), lease.ID)
	if err != nil {
		return nil, fmt.Errorf("traffic: etcd keep-alive: %w", err)
	}
	c.lease = lease.ID
	return keep, nil
}

func (c *Cluster) loop(keep <-chan *clientv3.LeaseKeepAliveResponse) {
	defer close(c.done)
	t := time.NewTicker(c.cfg.Interval)
	defer t.Stop()
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(context.Background()))
	defer cancel()
	gone := c.watchGone(wctx)
	last := time.Now()
	rebalance := func(now time.Time) {
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Interval)
		defer cancel()
		if keep == nil {
			// The others took this proxy's share back: join again.
			keep, _ = c.grant(ctx)
		}
		// An etcd that does not answer leaves the shares as they are.
		if keep != nil {
			c.round(ctx, now.Sub(last))
		}
		last = now
	}
	for {
		select {
		case <-c.stop:
			return
		case _, ok := <-keep:
			// Drained so the client keeps renewing; closed when the
			// lease is gone (etcd unreachable past its TTL).
			if !ok {
				keep = nil
			}
		case resp, ok := <-gone:
			if !ok {
				// The watch ended (etcd lost its leader or went away);
				// the ticker's rounds go on and open a new one.
				gone = nil
				continue
			}
			// A member left (its lease ended or it closed): its share
			// is taken at once from the demands known, without waiting
			// for etcd again; the next tick's round checks it.
			for _, ev := range resp.Events {
				c.memberGone(string(ev.Kv.Key))
			}
		case now := <-t.C:
			if gone == nil {
				gone = c.watchGone(wctx)
			}
			rebalance(now)
		}
	}
}

// watchGone watches the cluster rules' members for deletions: a lease
// that ended, or a member that closed.
func (c *Cluster) watchGone(ctx context.Context) clientv3.WatchChan {
	if ctx.Err() != nil {
		return nil
	}
	return c.cli.Watch(ctx, c.cfg.Prefix+"/", clientv3.WithPrefix(), clientv3.WithFilterPut())
}

// round publishes this member's demand per cluster rule and takes the
// share the fleet's demands give it.
func (c *Cluster) round(ctx context.Context, elapsed time.Duration) error {
	for _, cr := range c.rules {
		req := cr.rule.requested.Load()
		demand := float64(req-cr.requested) / max(elapsed.Seconds(), 0.001)
		cr.requested = req
		dir := c.cfg.Prefix + "/" + cr.rule.name + "/"
		if _, err := c.cli.Put(ctx, dir+c.cfg.Member, strconv.FormatFloat(demand, 'f', 3, 64), clientv3.WithLease(c.lease)); err != nil {
			return fmt.Errorf("traffic: etcd put: %w", err)
		}
		resp, err := c.cli.Get(ctx, dir, clientv3.WithPrefix())
		if err != nil {
			return fmt.Errorf("traffic: etcd get: %w", err)
		}
		demands := map[string]float64{}
		for _, kv := range resp.Kvs {
			d, err := strconv.ParseFloat(string(kv.Value), 64)
			if err == nil && d >= 0 {
				demands[string(kv.Key[len(dir):])] = d
			}
		}
		cr.demands = demands
		c.apply(cr)
	}
	return nil
}

// apply gives the rule's bucket this member's share of cr.demands.
func (c *Cluster) apply(cr *clusterRule) {
	set := cr.rule.set.Load()
	budget := set.rule.Limit.Rate
	share := Shares(budget, cr.demands)[c.cfg.Member]
	if tb, ok := set.limiter.(*tokenBucket); ok {
		tb.setShare(share, max(1, int(math.Round(float64(set.rule.Limit.Burst)*share/budget))))
	}
	cr.rule.share.Store(math.Float64bits(share))
	cr.rule.members.Store(int64(len(cr.demands)))
}

// memberGone drops the member whose demand key etcd deleted and applies
// the shares of those left.
func (c *Cluster) memberGone(key string) {
	for _, cr := range c.rules {
		dir := c.cfg.Prefix + "/" + cr.rule.name + "/"
		member, ok := strings.CutPrefix(key, dir)
		if !ok || member == c.cfg.Member {
			continue
		}
		if _, known := cr.demands[member]; known {
			delete(cr.demands, member)
			c.apply(cr)
		}
	}
}

// Shares splits budget among members by max-min fairness over their
// demands: each gets its demand up to an equal split of what is left;
// what no one wants is split evenly. The shares add up to budget.
func Shares(budget float64, demands map[string]float64) map[string]float64 {
	members := make([]string, 0, len(demands))
	for m := range demands {
		members = append(members, m)
	}
	slices.SortFunc(members, func(a, b string) int {
		if demands[a] != demands[b] {
			if demands[a] < demands[b] {
				return -1
			}
			return 1
		}
		if a < b {
			return -1
		}
		return 1
	})
	out := make(map[string]float64, len(members))
	left := budget
	for i, m := range members {
		give := min(demands[m], left/float64(len(members)-i))
		out[m] = give
		left -= give
	}
	if left > 0 {
		for _, m := range members {
			out[m] += left / float64(len(members))
		}
	}
	return out
}

// Close leaves the fleet: the lease is revoked, so the others take this
// proxy's share at their next round.
func (c *Cluster) Close() error {
	var err error
	c.once.Do(func() {
		close(c.stop)
		<-c.done
		err = c.revoke()
		err = errors.Join(err, c.cli.Close())
	})
	return err
}

func (c *Cluster) revoke() error {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.DialTimeout)
	defer cancel()
	_, err := c.cli.Revoke(ctx, c.lease)
	return err
}
