package proxy

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// The differential suites run each query once through the proxy's raw
// connection, which is the run that learns the shape's columns (joinCache):
// their rows come from routes run apart. These variants run every query a
// second time, when the routes of each data source (the diff rules put
// four tables of t_order on each of two data sources) are joined into one
// UNION ALL statement, and compare that run with the reference.

// joinedDiff warms tc up, then compares its joined run with the
// reference; it reports whether the proxy joined the second run.
func (e *diffEnv) joinedDiff(tc diffCase) (string, bool) {
	e.diff(tc)
	before := e.srv.current().joins.joined.Load()
	d := e.diff(tc)
	// Each diff runs the query twice through the proxy (raw connection
	// and go-sql-driver).
	return d, e.srv.current().joins.joined.Load() >= before+2
}

func TestUnionDifferential(t *testing.T) {
	e := diffEnvironment(t)
	joined := 0
	for _, tc := range diffQueries {
		d, ok := e.joinedDiff(tc)
		if d != "" {
			t.Errorf("%s (joined: %v)\n%s", tc.sql, ok, d)
		}
		if ok {
			joined++
		}
	}
	t.Logf("%d of %d queries ran joined", joined, len(diffQueries))
	if joined < len(diffQueries)/3 {
		t.Errorf("only %d of %d queries ran joined: the differential does not exercise the UNION", joined, len(diffQueries))
	}
}

func TestUnionRandomized(t *testing.T) {
	e := diffEnvironment(t)
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("SHARDFLAKE_MERGE_SEED"), 10, 64); err == nil {
		seed = s
	}
	cases := 250
	if n, err := strconv.Atoi(os.Getenv("SHARDFLAKE_MERGE_CASES")); err == nil && n > 0 {
		cases = n / 2
	}
	t.Logf("seed %d (replay with SHARDFLAKE_MERGE_SEED=%d), %d cases", seed, seed, cases)
	g := &generator{r: rand.New(rand.NewPCG(seed, seed^0x5f5f))}
	failures, joined := 0, 0
	for i := range cases {
		tc := g.query()
		d, ok := e.joinedDiff(tc)
		if ok {
			joined++
		}
		if d != "" {
			t.Errorf("case %d (seed %d, joined %v): %s\n%s", i, seed, ok, tc.sql, d)
			if failures++; failures >= 10 {
				t.Fatalf("stopping after 10 failures; replay with SHARDFLAKE_MERGE_SEED=%d", seed)
			}
		}
	}
	t.Logf("%d of %d random queries ran joined", joined, cases)
	if joined < cases/4 {
		t.Errorf("only %d of %d random queries ran joined", joined, cases)
	}
}

// TestUnionRouterDifferential runs the routing cases (joins of binding
// and broadcast tables, subqueries, hints, IN lists, literals of every
// kind) a second time, joined where the proxy joins them.
func TestUnionRouterDifferential(t *testing.T) {
	e := diffEnvironment(t)
	joined := 0
	for _, tc := range routerDiffQueries {
		if tc.wantErr != 0 {
			continue
		}
		d, ok := e.joinedDiff(tc)
		if d != "" {
			t.Errorf("%s (joined: %v)\n%s", tc.sql, ok, d)
		}
		if ok {
			joined++
		}
	}
	t.Logf("%d of %d routing queries ran joined", joined, len(routerDiffQueries))
}
