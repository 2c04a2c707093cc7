package proxy

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/proxy/keygen"
	"github.com/shardflake/shardflake/proxy/metrics"
)

// benchProxy is a proxy in front of two fakeBackends with sysbench's
// sbtest1 sharded over 2 data sources x 4 tables, with the metrics
// Observer as in production.
type benchProxy struct {
	addr     string
	backends [2]*fakeBackend
}

func startBenchProxy(b *testing.B) *benchProxy { return startBenchProxyWith(b, "") }

// startBenchProxyWith is startBenchProxy with more server settings
// (YAML lines indented for the server block).
func startBenchProxyWith(b *testing.B, server string) *benchProxy {
	b.Helper()
	bp := &benchProxy{}
	var ds string
	for i := range bp.backends {
		bp.backends[i] = startFakeBackend(b)
		ds += fmt.Sprintf("  ds_%d: { url: \"jdbc:mysql://%s/ds_%d\", username: root, password: \"\" }\n", i, bp.backends[i].addr(), i)
	}
	yaml := "databaseName: sharding_db\nserver:\n  listen: 127.0.0.1:0\n  metricsListen: 127.0.0.1:1\n" +
		"  users:\n    - { user: app, password: app-secret }\n" + server + "dataSources:\n" + ds + "rules:\n" + sysbenchRules(b)
	rules, err := config.Parse([]byte(yaml), "bench-rules.yaml")
	if err != nil {
		b.Fatal(err)
	}
	keys, closeKeys, err := keygen.Open(context.Background(), rules)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { closeKeys() })
	// The metrics Observer, as shardflake serve runs the proxy.
	obs := metrics.New(rules, metrics.Options{RulesSource: []byte(yaml)})
	srv, err := New(Config{Rules: rules, Keys: keys, Observer: obs})
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	b.Cleanup(func() {
		srv.Close()
		<-done
	})
	bp.addr = l.Addr().String()
	return bp
}

// rawClient is a client connection that sends commands and reads
// responses packet by packet, so that the benchmark measures the proxy
// rather than a driver.
type rawClient struct {
	wc  *wire.Conn
	buf []byte
}

func (bp *benchProxy) connect(b *testing.B) *rawClient {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.ConnectWithContext(ctx, bp.addr, "app", "app-secret", "sharding_db", 10*time.Second, func(c *client.Conn) error {
		c.UnsetCapability(mysql.CLIENT_DEPRECATE_EOF)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	nc := c.Conn.Conn
	b.Cleanup(func() { nc.Close() })
	return &rawClient{wc: wire.NewConn(nc)}
}

// command sends one command and reads its whole response; it returns the
// number of rows (-1 for an OK).
func (c *rawClient) command(p []byte) (int, error) {
	c.wc.ResetSeq()
	if err := c.wc.WritePacket(p); err != nil {
		return 0, err
	}
	if err := c.wc.Flush(); err != nil {
		return 0, err
	}
	return c.readResult()
}

func (c *rawClient) readResult() (int, error) {
	p, err := c.wc.ReadPacket()
	if err != nil {
		return 0, err
	}
	switch {
	case wire.IsErr(p):
		return 0, wire.ParseErr(p)
	case p[0] == wire.HeaderOK:
		return -1, nil
	}
	n, _, _, _ := wire.ReadLenEncInt(p)
	for range n + 1 { // column definitions and EOF
		if _, err := c.wc.ReadPacket(); err != nil {
			return 0, err
		}
	}
	rows := 0
	for {
		p, err := c.wc.ReadPacket()
		if err != nil {
			return 0, err
		}
		if wire.IsEOF(p) {
			return rows, nil
		}
		if wire.IsErr(p) {
			return 0, wire.ParseErr(p)
		}
		rows++
	}
}

// prepare prepares sql and returns the statement id.
func (c *rawClient) prepare(b *testing.B, sql string) uint32 {
	b.Helper()
	c.wc.ResetSeq()
	c.wc.WritePacket(append([]byte{mysql.COM_STMT_PREPARE}, sql...))
	if err := c.wc.Flush(); err != nil {
		b.Fatal(err)
	}
	p, err := c.wc.ReadPacket()
	if err != nil {
		b.Fatal(err)
	}
	if wire.IsErr(p) {
		b.Fatal(wire.ParseErr(p))
	}
	id, _ := wire.StmtID(p[1:])
	cols, params := int(p[5])|int(p[6])<<8, int(p[7])|int(p[8])<<8
	for _, n := range []int{params, cols} {
		if n == 0 {
			continue
		}
		for range n + 1 {
			if _, err := c.wc.ReadPacket(); err != nil {
				b.Fatal(err)
			}
		}
	}
	return id
}

func (c *rawClient) query(id int64) []byte {
	c.buf = append(c.buf[:0], mysql.COM_QUERY)
	c.buf = append(c.buf, "SELECT c FROM sbtest1 WHERE id="...)
	return strconv.AppendInt(c.buf, id, 10)
}

// cpuMeter reports the process's CPU time (user + system, getrusage)
// per iteration as cpu-µs/op when the returned function is called after
// the benchmark loop. On a shared, loaded machine wall time per op swings
// with the other processes; the CPU the process itself spent (proxy,
// lean client and fake backends, the same on both sides of a compare)
// does much less.
func cpuMeter(b *testing.B) (report func()) {
	b.Helper()
	start := processCPU(b)
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64((processCPU(b)-start).Microseconds())/float64(b.N), "cpu-µs/op")
		}
	}
}

func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchIDs cycles through sysbench's default table size, so that text
// queries mostly miss the plan cache as they do under sysbench.
const benchIDs = 100000

// BenchmarkPointSelect measures one point SELECT through the proxy, over
// loopback TCP, against backends that answer from memory: the proxy's own
// cost per statement (plus a lean client and backend in the same
// process). text sends COM_QUERY with the id written in (sysbench
// --db-ps-mode=disable); prepared sends COM_STMT_EXECUTE of one statement
// prepared once (--db-ps-mode=auto); parallel runs 8 prepared clients at
// once, as sysbench --threads=8 does.
//
//	go test ./proxy -run XXX -bench BenchmarkPointSelect -benchmem
func BenchmarkPointSelect(b *testing.B) {
	bp := startBenchProxy(b)
	check := func(b *testing.B, rows int, err error) {
		if err != nil {
			b.Fatal(err)
		}
		if rows != 1 {
			b.Fatalf("got %d rows, want 1", rows)
		}
	}
	b.Run("text", func(b *testing.B) {
		c := bp.connect(b)
		b.ReportAllocs()
		defer cpuMeter(b)()
		for i := 0; b.Loop(); i++ {
			rows, err := c.command(c.query(int64(i%benchIDs + 1)))
			check(b, rows, err)
		}
	})
	b.Run("prepared", func(b *testing.B) {
		c := bp.connect(b)
		id := c.prepare(b, "SELECT c FROM sbtest1 WHERE id=?")
		b.ReportAllocs()
		defer cpuMeter(b)()
		for i := 0; b.Loop(); i++ {
			c.buf = appendExecute(c.buf[:0], id, int64(i%benchIDs+1))
			rows, err := c.command(c.buf)
			check(b, rows, err)
		}
	})
	b.Run("prepared-parallel", func(b *testing.B) {
		par := (8 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)
		clients := make(chan *rawClient, par*runtime.GOMAXPROCS(0))
		for range cap(clients) {
			c := bp.connect(b)
			c.prepare(b, "SELECT c FROM sbtest1 WHERE id=?")
			clients <- c
		}
		b.ReportAllocs()
		defer cpuMeter(b)()
		b.SetParallelism(par)
		b.RunParallel(func(pb *testing.PB) {
			c := <-clients
			defer func() { clients <- c }()
			for i := 0; pb.Next(); i++ {
				c.buf = appendExecute(c.buf[:0], 1, int64(i%benchIDs+1))
				if rows, err := c.command(c.buf); err != nil || rows != 1 {
					b.Errorf("got %d rows, %v", rows, err)
					return
				}
			}
		})
	})
}

// BenchmarkInsert measures sysbench's oltp_insert statement through the
// proxy (an INSERT with its id, routed to one data node), as text and as
// a prepared statement.
func BenchmarkInsert(b *testing.B) {
	bp := startBenchProxy(b)
	pad := "'67847967377-48000963322-62604785301-91415491898-96926520291'"
	c120 := "'83868641912-28773972837-60736120486-75162659906-27563526494-20381887404-41576422241-93426793964-56405065102-33518432330'"
	b.Run("text", func(b *testing.B) {
		c := bp.connect(b)
		b.ReportAllocs()
		defer cpuMeter(b)()
		for i := 0; b.Loop(); i++ {
			c.buf = append(c.buf[:0], mysql.COM_QUERY)
			c.buf = append(c.buf, "INSERT INTO sbtest1 (id, k, c, pad) VALUES ("...)
			c.buf = strconv.AppendInt(c.buf, int64(i)-1<<31, 10)
			c.buf = append(c.buf, ", 5012, "...)
			c.buf = append(c.buf, c120...)
			c.buf = append(c.buf, ", "...)
			c.buf = append(c.buf, pad...)
			c.buf = append(c.buf, ')')
			if rows, err := c.command(c.buf); err != nil || rows != -1 {
				b.Fatalf("got %d rows, %v", rows, err)
			}
		}
	})
	b.Run("prepared", func(b *testing.B) {
		c := bp.connect(b)
		id := c.prepare(b, "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)")
		b.ReportAllocs()
		defer cpuMeter(b)()
		for i := 0; b.Loop(); i++ {
			c.buf = appendExecute(c.buf[:0], id, int64(i)-1<<31, int64(5012), c120[1:len(c120)-1], pad[1:len(pad)-1])
			if rows, err := c.command(c.buf); err != nil || rows != -1 {
				b.Fatalf("got %d rows, %v", rows, err)
			}
		}
	})
}
