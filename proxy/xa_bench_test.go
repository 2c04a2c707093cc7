package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"testing"

	"github.com/shardflake/shardflake/config"
)

// BenchmarkXATransfer: one transfer transaction (BEGIN, two UPDATEs,
// COMMIT) over two data sources and over one, in local and xa modes,
// through an in-process proxy in front of the two real MariaDB servers.
// The one-data-source cases must be equal within noise: xa costs nothing
// there.
//
//	go test -run '^$' -bench BenchmarkXATransfer -benchtime 2s ./proxy/
func BenchmarkXATransfer(b *testing.B) {
	backends := sharedServers(b)
	rules, err := config.Parse([]byte(rulesYAML(backends, "", xaTestRules)), "bench-rules.yaml")
	if err != nil {
		b.Fatal(err)
	}
	srv, err := New(Config{Rules: rules})
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(l)
	b.Cleanup(func() { srv.Close() })
	db, err := sql.Open("mysql", "app:app-secret@tcp("+l.Addr().String()+")/sharding_db")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	for _, q := range []string{"DROP TABLE IF EXISTS t_acct", "CREATE TABLE t_acct (id INT PRIMARY KEY, bal INT NOT NULL) ENGINE=InnoDB",
		"INSERT INTO t_acct VALUES (0, 1000000), (1, 1000000), (2, 1000000)"} {
		if _, err := db.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	for _, mode := range []string{"local", "xa"} {
		for _, tc := range []struct {
			name     string
			from, to int
		}{{"two-data-sources", 0, 1}, {"one-data-source", 0, 2}} {
			b.Run(mode+"/"+tc.name, func(b *testing.B) {
				c, err := db.Conn(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				qs := []string{"SET shardflake_transaction_mode = '" + mode + "'"}
				for _, q := range qs {
					if _, err := c.ExecContext(context.Background(), q); err != nil {
						b.Fatal(err)
					}
				}
				txn := []string{"BEGIN", fmt.Sprintf("UPDATE t_acct SET bal = bal - 1 WHERE id = %d", tc.from),
					fmt.Sprintf("UPDATE t_acct SET bal = bal + 1 WHERE id = %d", tc.to), "COMMIT"}
				b.ResetTimer()
				for b.Loop() {
					for _, q := range txn {
						if _, err := c.ExecContext(context.Background(), q); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "txn/s")
			})
		}
	}
}
