package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardflake/shardflake/idgen"
	"github.com/shardflake/shardflake/internal/etcdtest"
)

// aheadClock is the system clock shifted forward.
type aheadClock struct{ by time.Duration }

func (c aheadClock) Now() time.Time        { return time.Now().Add(c.by) }
func (c aheadClock) Sleep(d time.Duration) { time.Sleep(d) }

func (e *opsEnv) readiness(t *testing.T) (int, Readiness) {
	t.Helper()
	code, body := e.get(t, "/readyz")
	var r Readiness
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("/readyz body %s: %v", body, err)
	}
	return code, r
}

// keylessInsertWorks creates t_order and reports the error of a keyless
// INSERT (nil when it ran), after checking that the statements that need
// no new key run.
func keylessInsert(t *testing.T, e *opsEnv, userID int) error {
	t.Helper()
	db := e.open(t)
	if _, err := db.Exec("SELECT COUNT(*) FROM t_order"); err != nil {
		t.Fatalf("SELECT while the generator cannot issue: %v", err)
	}
	if _, err := db.Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (?, ?, 'keyed')", 1000+userID, userID); err != nil {
		t.Fatalf("INSERT with its key while the generator cannot issue: %v", err)
	}
	_, err := db.Exec("INSERT INTO t_order (user_id, status) VALUES (?, 'keyless')", userID)
	return err
}

func createOrderTable(t *testing.T, e *opsEnv) {
	t.Helper()
	for _, q := range []string{"DROP TABLE IF EXISTS t_order", "CREATE TABLE t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))"} {
		if _, err := e.open(t).Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestReadyzWhenTheClockIsBehindTheMark restarts the proxy with its clock
// ten minutes behind the high-water mark its generator persisted: keys
// cannot be issued, so /readyz answers 503 and says why, while /healthz
// stays 200 and statements that need no new key run.
func TestReadyzWhenTheClockIsBehindTheMark(t *testing.T) {
	state := filepath.Join(t.TempDir(), "snowflake.state")
	cfg := idgen.DefaultConfig()
	cfg.DatacenterID, cfg.WorkerID, cfg.StateFile = 1, 3, state
	g, err := idgen.New(context.Background(), cfg, idgen.WithClock(aheadClock{10 * time.Minute}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Next(); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}

	e := startOpsEnv(t, opsOptions{prefix: "clockbehind", keyProps: fmt.Sprintf("{ worker-id: 3, datacenter-id: 1, state-file: %q }", state)})
	createOrderTable(t, e)
	code, r := e.readiness(t)
	if code != 503 || r.Ready || len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "key generator snowflake cannot issue keys") ||
		!strings.Contains(r.Problems[0], "clock") || len(r.KeyGenerators) != 1 || r.KeyGenerators[0].OK || r.KeyGenerators[0].Error == "" {
		t.Errorf("/readyz with the clock 10 min behind the mark: %d %+v", code, r)
	}
	if code, body := e.get(t, "/healthz"); code != 200 {
		t.Errorf("/healthz: %d %s", code, body)
	}
	if v := e.scrape(t)[series("shardflake_keygen_ready", "generator", "snowflake")]; v != 0 {
		t.Errorf("shardflake_keygen_ready = %v, want 0", v)
	}
	err = keylessInsert(t, e, 1)
	if errCode(err) != 1105 || !strings.Contains(err.Error(), "clock") {
		t.Errorf("keyless INSERT: %v, want 1105 naming the clock", err)
	}
}

// TestProxyStartsWithEtcdDown starts the proxy while its generator's etcd
// is not running: it serves what needs no new key, /readyz says the
// generator has no worker id, and keyless INSERTs work once etcd answers.
func TestProxyStartsWithEtcdDown(t *testing.T) {
	etcd := etcdtest.New(t)
	start := time.Now()
	e := startOpsEnv(t, opsOptions{prefix: "etcddown", keyProps: fmt.Sprintf(
		"{ worker-id-source: etcd, etcd-endpoints: %q, etcd-prefix: /etcddown, etcd-dial-timeout-milliseconds: 300 }", etcd.Endpoint())})
	t.Logf("proxy serving %s after start with etcd down", time.Since(start).Round(time.Millisecond))
	createOrderTable(t, e)
	code, r := e.readiness(t)
	if code != 503 || len(r.KeyGenerators) != 1 || r.KeyGenerators[0].OK || r.KeyGenerators[0].LeaseState != "claiming" ||
		len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "no worker id yet") {
		t.Errorf("/readyz with etcd down: %d %+v", code, r)
	}
	if err := keylessInsert(t, e, 1); errCode(err) != 1105 || !strings.Contains(err.Error(), "etcd") {
		t.Errorf("keyless INSERT with etcd down: %v, want 1105 naming etcd", err)
	}

	etcd.Start()
	up := time.Now()
	waitFor(t, func() bool {
		code, r = e.readiness(t)
		return code == 200
	})
	t.Logf("ready %s after etcd answered", time.Since(up).Round(time.Millisecond))
	if !r.KeyGenerators[0].OK || r.KeyGenerators[0].LeaseState != "held" {
		t.Errorf("generator once etcd answered: %+v", r.KeyGenerators[0])
	}
	if err := keylessInsert(t, e, 2); err != nil {
		t.Errorf("keyless INSERT once etcd answered: %v", err)
	}
	if v := e.scrape(t)[series("shardflake_keygen_ready", "generator", "snowflake")]; v != 1 {
		t.Errorf("shardflake_keygen_ready once etcd answered = %v, want 1", v)
	}
}
