package proxy

import (
	"bufio"
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/internal/mariadbtest"
	"github.com/shardflake/shardflake/proxy/keygen"
)

// proxyHelperEnv makes the test binary a proxy serving the rules file it
// names (TestMain), so a test can kill -9 a proxy.
const proxyHelperEnv = "SHARDFLAKE_PROXY_HELPER_RULES"

// runProxyHelper serves the rules file on a free port, prints "addr
// HOST:PORT" and serves until killed.
func runProxyHelper() int {
	rules, err := config.Load(os.Getenv(proxyHelperEnv))
	if err != nil {
		fmt.Println("err", err)
		return 3
	}
	keys, _, err := keygen.Open(context.Background(), rules)
	if err != nil {
		fmt.Println("err", err)
		return 3
	}
	srv, err := New(Config{Rules: rules, Keys: keys})
	if err != nil {
		fmt.Println("err", err)
		return 3
	}
	// SHARDFLAKE_HELPER_LISTEN: a restart on the address it had, else
	// (taken meanwhile) on a free one.
	l, err := net.Listen("tcp", cmp.Or(os.Getenv("SHARDFLAKE_HELPER_LISTEN"), "127.0.0.1:0"))
	if err != nil {
		l, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		fmt.Println("err", err)
		return 3
	}
	fmt.Println("addr", l.Addr())
	srv.Serve(l)
	return 0
}

// startTestEtcd runs a one-member etcd on free loopback ports until the
// test ends and returns its client URL.
func startTestEtcd(t *testing.T) string {
	t.Helper()
	bin := mariadbtest.RequireBinary(t, "etcd")
	free := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return "http://" + l.Addr().String()
	}
	client, peer, dir := free(), free(), t.TempDir()
	logf, err := os.Create(filepath.Join(dir, "etcd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--name", "traffic-test", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", "traffic-test="+peer,
		"--heartbeat-interval", "10", "--election-timeout", "100", "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait(); logf.Close() })
	waitFor(t, func() bool {
		resp, err := http.Get(client + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return client
}

// pacedLoad sends point SELECTs to db at perSecond until stop is closed;
// refusals are expected and ignored.
func pacedLoad(db *sql.DB, perSecond *float64Var, stop <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	sem := make(chan struct{}, 16)
	next := time.Now()
	for {
		select {
		case <-stop:
			return
		default:
		}
		next = next.Add(time.Duration(float64(time.Second) / perSecond.get()))
		time.Sleep(time.Until(next))
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			var s string
			db.QueryRow("SELECT status FROM t_order WHERE user_id = 0 AND order_id = 1").Scan(&s)
		}()
	}
}

type float64Var struct {
	mu sync.Mutex
	v  float64
}

func (f *float64Var) get() float64  { f.mu.Lock(); defer f.mu.Unlock(); return f.v }
func (f *float64Var) set(v float64) { f.mu.Lock(); f.v = v; f.mu.Unlock() }

// trafficRow reads SHOW TRAFFIC RULES' first row through a proxy.
func trafficRow(t *testing.T, db *sql.DB) map[string]string {
	t.Helper()
	rows := queryMaps(t, db, "SHOW TRAFFIC RULES")
	if len(rows) == 0 {
		t.Fatal("no traffic rule")
	}
	return rows[0]
}

// TestTrafficClusterShare runs two proxies on one etcd with a cluster
// rule of 240 SELECTs/s: proxy A (a separate process) offered 300/s and
// proxy B 100/s together admit 240/s within 10%, B getting its whole
// demand; after kill -9 of A, B gets the whole budget within A's lease
// TTL (2s) plus a rebalance.
func TestTrafficClusterShare(t *testing.T) {
	endpoint := startTestEtcd(t)
	backends := sharedServers(t)
	prefix := fmt.Sprintf("/test/traffic-%d", time.Now().UnixNano())
	keygen := fmt.Sprintf(`{ worker-id-source: etcd, etcd-endpoints: "%s", etcd-prefix: "%s", etcd-lease-ttl-seconds: 2 }`, strings.TrimPrefix(endpoint, "http://"), prefix)
	rules := strings.Replace(defaultTestRules, "{ worker-id: 1 }", keygen, 1)
	server := "traffic:\n- {name: shared, match: {kinds: [select]}, limit: {type: TOKEN_BUCKET, rate: 240, burst: 24}, scope: cluster}"
	e := startEnv(t, envOptions{rules: rules, server: server})
	db := e.open(t)
	for _, q := range []string{
		"DROP TABLE IF EXISTS t_order",
		"CREATE TABLE t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))",
		"INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'a')",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	// Proxy A: this test binary as a helper process on the same rules.
	file := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(file, []byte(rulesYAML(backends, server, rules)), 0o600); err != nil {
		t.Fatal(err)
	}
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), proxyHelperEnv+"="+file)
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	helper.Stderr = os.Stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { helper.Process.Kill(); helper.Wait() })
	lines := bufio.NewScanner(out)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "addr ") {
		t.Fatalf("proxy helper printed %q", lines.Text())
	}
	aAddr := strings.TrimPrefix(lines.Text(), "addr ")
	aDSN := strings.Replace(e.dsn("app", "app-secret"), e.addr, aAddr, 1)
	dbA, err := sql.Open("mysql", aDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer dbA.Close()
	dbB := e.open(t)
	waitFor(t, func() bool {
		return trafficRow(t, dbA)["cluster_members"] == "2" && e.srv.traffic.States()[0].Members == 2
	})

	rateA, rateB := &float64Var{v: 300}, &float64Var{v: 100}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go pacedLoad(dbA, rateA, stop, &wg)
	go pacedLoad(dbB, rateB, stop, &wg)
	defer func() { close(stop); wg.Wait() }()

	admitted := func() (a, b float64) {
		a, _ = strconv.ParseFloat(trafficRow(t, dbA)["admitted"], 64)
		return a, float64(e.srv.traffic.States()[0].Admitted)
	}
	// Three rounds for the demands to show, then 5 s measured.
	time.Sleep(3 * time.Second)
	a0, b0 := admitted()
	start := time.Now()
	time.Sleep(5 * time.Second)
	a1, b1 := admitted()
	secs := time.Since(start).Seconds()
	ra, rb := (a1-a0)/secs, (b1-b0)/secs
	shareA, shareB := trafficRow(t, dbA)["cluster_share"], e.srv.traffic.States()[0].Share
	t.Logf("offered A 300/s, B 100/s: admitted A %.1f/s + B %.1f/s = %.1f/s (budget 240); shares A %s, B %.1f", ra, rb, ra+rb, shareA, shareB)
	if sum := ra + rb; sum < 216 || sum > 264 {
		t.Errorf("the proxies admitted %.1f/s together, want 240/s within 10%%", sum)
	}
	if rb < 90 {
		t.Errorf("B admitted %.1f/s of the 100/s it asked for: its share should cover its demand", rb)
	}

	// kill -9 A: its share comes back when its lease ends.
	rateB.set(300)
	helper.Process.Signal(syscall.SIGKILL)
	killed := time.Now()
	waitFor(t, func() bool { return e.srv.traffic.States()[0].Share > 239 })
	took := time.Since(killed)
	t.Logf("after kill -9 of A, B's share was the whole budget in %v (lease TTL 2s)", took.Round(10*time.Millisecond))
	if took > 3500*time.Millisecond {
		t.Errorf("B got the whole budget %v after A died, want within the 2s lease TTL plus a rebalance", took)
	}
	b2 := float64(e.srv.traffic.States()[0].Admitted)
	time.Sleep(3 * time.Second)
	if rb := (float64(e.srv.traffic.States()[0].Admitted) - b2) / 3; rb < 216 || rb > 264 {
		t.Errorf("alone, B admitted %.1f/s of 300/s offered, want the budget 240/s within 10%%", rb)
	}
}
