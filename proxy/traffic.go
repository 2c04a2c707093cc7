package proxy

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/idgen"
	"github.com/shardflake/shardflake/proxy/traffic"
	"github.com/shardflake/shardflake/router"
)

// sessionLimits is the admit stage's per-session scratch: the statement
// being admitted and the permits it holds until it ends, reused from
// statement to statement.
type sessionLimits struct {
	stmt traffic.Statement
	held []traffic.Held
}

// admit is the admit stage (server.traffic): it runs in runPlan, the door's
// stages for every statement a data source answers (text, prepared,
// cached shapes, the default data source, CALL, LOAD DATA LOCAL, stored
// routines), once the plan names its routes and before anything is sent.
// A statement in a transaction that already ran one is never limited, so
// a transaction is never cut in half; DDL, which commits the transaction
// first, is limited. A refused statement sent nothing to any data source.
// Statements the proxy or the session answers (SET, USE, BEGIN, SHOW,
// admin statements) have no plan and are not limited, on purpose: they
// reach no data source, and refusing them would break pools and
// transactions at their start or lock an operator out of DISABLE TRAFFIC
// RULE. finishAdmit must follow a nil error.
func (s *Session) admit(ctx context.Context, plan *router.Plan, sql string) error {
	set := s.srv.traffic
	if set.Empty() || s.midTransaction(plan) {
		return nil
	}
	lim := &s.limits
	lim.stmt.Reset(s.user, plan, sql)
	held, err := set.Admit(ctx, &lim.stmt, s.timeLeft(), lim.held)
	lim.held = held
	return err
}

// finishAdmit gives back the permits the statement held (concurrency).
func (s *Session) finishAdmit() {
	if len(s.limits.held) > 0 {
		s.limits.held = s.srv.traffic.Finish(s.limits.held, true)
	}
}

// midTransaction reports whether plan runs inside a transaction that has
// already sent a statement to a data source.
func (s *Session) midTransaction(plan *router.Plan) bool {
	if plan.Kind == router.KindDDL && !s.state.tempDDL {
		return false
	}
	return s.inTransaction() && s.txn.active && len(s.txn.order) > 0
}

// timeLeft is how long the running statement has before
// server.statementTimeout cancels it: the most it may wait for a permit.
func (s *Session) timeLeft() time.Duration {
	t := s.srv.rules.Server.StatementTimeout
	if t <= 0 {
		return math.MaxInt64
	}
	return t - s.watch.elapsed()
}

// trafficMatches names the traffic rules a planned statement would take
// permits from, for PREVIEW.
func (s *Session) trafficMatches(plan *router.Plan, sql string) []string {
	var st traffic.Statement
	st.Reset(s.user, plan, sql)
	return s.srv.traffic.Matching(&st)
}

// startTrafficCluster joins the fleet that shares the cluster rules'
// budgets, on the etcd of the key generator that leases its worker id
// there (config.TrafficEtcdKeyGenerator); nil when there are no cluster
// rules.
func startTrafficCluster(rules *config.Rules, set *traffic.Set) (*traffic.Cluster, error) {
	if !set.HasCluster() {
		return nil, nil
	}
	name := config.TrafficEtcdKeyGenerator(rules)
	if name == "" {
		return nil, errors.New("traffic: scope cluster needs a key generator with worker-id-source: etcd")
	}
	cfg, err := idgen.ParseProps(rules.KeyGenerators[name].Props)
	if err != nil {
		return nil, fmt.Errorf("traffic: key generator %s: %w", name, err)
	}
	host, _ := os.Hostname()
	var nonce [4]byte
	rand.Read(nonce[:])
	c, err := set.StartCluster(context.Background(), traffic.ClusterConfig{
		Endpoints: cfg.Etcd.Endpoints, DialTimeout: cfg.Etcd.DialTimeout, LeaseTTL: cfg.Etcd.LeaseTTL,
		Prefix: cfg.Etcd.Prefix + "/traffic",
		Member: fmt.Sprintf("%s-%d-%x", host, os.Getpid(), nonce),
	})
	if err != nil {
		return nil, fmt.Errorf("%w (scope: cluster rules share their budget on the etcd of key generator %s)", err, name)
	}
	return c, nil
}
