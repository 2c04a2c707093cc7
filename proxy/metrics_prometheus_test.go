package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// promServer is a real Prometheus server (Debian's prometheus package)
// scraping one target every second, with its storage in a temp dir.
type promServer struct {
	url  string
	cmd  *exec.Cmd
	done chan struct{}
	log  *lockedBuffer
}

const promConfig = `global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: shardflake
    static_configs:
      - targets: ['%s']
`

func startPrometheus(t *testing.T, target string) *promServer {
	t.Helper()
	bin := mariadbtest.RequireBinary(t, "prometheus")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(promConfig, target)), 0o644); err != nil {
		t.Fatal(err)
	}
	var lastErr error
	for range 5 {
		p, err := launchPrometheus(bin, cfg, filepath.Join(dir, "data"))
		if err == nil {
			t.Cleanup(p.stop)
			return p
		}
		lastErr = err
		if !errors.Is(err, errPromPortInUse) {
			break
		}
	}
	t.Fatal(lastErr)
	return nil
}

var errPromPortInUse = errors.New("prometheus: port in use")

func launchPrometheus(bin, cfg, data string) (*promServer, error) {
	port, err := freeTCPPort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	p := &promServer{url: "http://" + addr, done: make(chan struct{}), log: &lockedBuffer{}}
	p.cmd = exec.Command(bin,
		"--config.file="+cfg,
		"--storage.tsdb.path="+data,
		"--web.listen-address="+addr,
		"--log.level=warn")
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	// Prometheus dies with the test binary even if cleanup never runs.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		p.cmd.Wait()
		close(p.done)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if resp, err := http.Get(p.url + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case <-p.done:
			if strings.Contains(p.log.String(), "address already in use") {
				return nil, errPromPortInUse
			}
			return nil, fmt.Errorf("prometheus exited before it was ready:\n%s", p.log.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("prometheus not ready after 60s:\n%s", p.log.String())
		}
	}
}

func (p *promServer) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

func freeTCPPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// promResult is one sample of an instant query's vector.
type promResult struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// query runs an instant PromQL query through /api/v1/query.
func (p *promServer) query(t *testing.T, q string) []promResult {
	t.Helper()
	resp, err := http.Get(p.url + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string       `json:"resultType"`
			Result     []promResult `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %v %s", q, err, body)
	}
	if r.Data.ResultType != "vector" {
		t.Fatalf("query %s: result type %s", q, r.Data.ResultType)
	}
	return r.Data.Result
}

// value runs a query that must return one sample and returns its value.
func (p *promServer) value(t *testing.T, q string) float64 {
	t.Helper()
	res := p.query(t, q)
	if len(res) != 1 {
		t.Fatalf("query %s: %d samples, want 1: %+v", q, len(res), res)
	}
	s, _ := res[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("query %s: value %v", q, res[0].Value)
	}
	return v
}

// scrapedAfter waits until Prometheus has scraped the proxy at a time
// after ts, so that what it stores includes everything done before ts.
func (p *promServer) scrapedAfter(t *testing.T, ts time.Time) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		// timestamp() gives the sample's time only for a plain selector
		// (of an expression, the evaluation time).
		res := p.query(t, `timestamp(up{job="shardflake"})`)
		if len(res) == 1 && p.value(t, `up{job="shardflake"}`) == 1 {
			s, _ := res[0].Value[1].(string)
			if v, err := strconv.ParseFloat(s, 64); err == nil && v > float64(ts.UnixMilli())/1000 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no successful scrape after %s within 30s: %+v\nprometheus log:\n%s", ts.Format(time.RFC3339Nano), res, p.log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestPrometheusScrapesTheCounters runs a real Prometheus against the
// proxy's /metrics, sends known traffic, and reads back through the
// Prometheus HTTP API that the statement and data-node counters moved by
// exactly the expected amounts.
func TestPrometheusScrapesTheCounters(t *testing.T) {
	mariadbtest.RequireBinary(t, "prometheus")
	e := startOpsEnv(t, opsOptions{})
	e.createOrders(t)
	prom := startPrometheus(t, e.opsAddr)

	t0 := time.Now()
	prom.scrapedAfter(t, t0)
	// The series the traffic will move, read once before it; a series
	// that does not exist yet (an error code never seen) counts as 0.
	readAll := func(keys map[string]float64, absentIsZero bool) map[string]float64 {
		out := map[string]float64{}
		for s := range keys {
			if absentIsZero && len(prom.query(t, s)) == 0 {
				continue
			}
			out[s] = prom.value(t, s)
		}
		return out
	}
	baseline := readAll(knownTrafficWant(), true)

	want := runKnownTraffic(t, e)
	prom.scrapedAfter(t, time.Now())
	after := readAll(want, false)
	for s, w := range want {
		if got := after[s] - baseline[s]; got != w {
			t.Errorf("Prometheus: %s moved by %v, want %v", s, got, w)
		}
	}
	// The same through PromQL aggregation, as a dashboard reads it.
	// Every query of the Grafana dashboard runs on this Prometheus; the
	// data-node ones show the traffic.
	for _, expr := range dashboardExprs(t) {
		if strings.HasPrefix(expr, "label_values(") {
			continue
		}
		res := prom.query(t, grafanaVars.Replace(expr))
		if strings.Contains(expr, "shardflake_data_node_hits_total") && strings.Contains(expr, `table!="_other"`) && len(res) == 0 {
			t.Errorf("dashboard query %s: no data after the traffic", expr)
		}
	}
	// An INSERT and a SELECT per order, the scatter and the failing SELECT.
	if got, want := prom.value(t, `sum(shardflake_data_node_hits_total{table=~"t_order_.*"})`), float64(2*len(knownOrders)+4+1); got != want {
		t.Errorf("sum of t_order data node hits = %v, want %v", got, want)
	}
	var buf bytes.Buffer
	for _, r := range prom.query(t, `shardflake_data_node_hits_total{table=~"t_order_.*"}`) {
		fmt.Fprintf(&buf, "%v=%v ", r.Metric, r.Value[1])
	}
	t.Logf("data node hits in Prometheus: %s", buf.String())
}
