package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/keygen"
)

// startMariaBenchProxy serves the test rules over the shared MariaDB servers
// for a benchmark and returns a client pool with one connection.
func startMariaBenchProxy(b *testing.B) *sql.DB {
	b.Helper()
	backends := sharedServers(b)
	rules, err := config.Parse([]byte(rulesYAML(backends, "", "")), "bench-rules.yaml")
	if err != nil {
		b.Fatal(err)
	}
	keys, closeKeys, err := keygen.Open(context.Background(), rules)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { closeKeys() })
	srv, err := New(Config{Rules: rules, Keys: keys})
	if err != nil {
		b.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(l)
	b.Cleanup(func() { srv.Close() })
	db, err := sql.Open("mysql", fmt.Sprintf("app:app-secret@tcp(%s)/sharding_db?interpolateParams=true", l.Addr()))
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	b.Cleanup(func() { db.Close() })
	for _, q := range []string{
		"DROP TABLE IF EXISTS t_order",
		"CREATE TABLE t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))",
	} {
		if _, err := db.Exec(q); err != nil {
			b.Fatal(err)
		}
	}
	return db
}

// BenchmarkMultiRouteWrite measures what statement atomicity costs a
// write: an INSERT of two rows on two data sources (each data source
// runs START TRANSACTION and COMMIT around its part in autocommit mode,
// SAVEPOINT before it inside a transaction) against an INSERT of one row
// (one route, nothing added).
func BenchmarkMultiRouteWrite(b *testing.B) {
	db := startMariaBenchProxy(b)
	ctx := context.Background()
	id := int64(0)
	b.Run("single route", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			id += 2
			if _, err := db.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id, status) VALUES (?, 0, 'b')", id); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("two data sources autocommit", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			id += 2
			if _, err := db.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id, status) VALUES (?, 0, 'b'), (?, 1, 'b')", id, id+1); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A batch as an ORM's bulk insert or a dump writes it: 400 rows over
	// the four tables, 100 each, two on each data source.
	b.Run("400 rows over four tables autocommit", func(b *testing.B) {
		var q strings.Builder
		b.ReportAllocs()
		for b.Loop() {
			q.Reset()
			q.WriteString("INSERT INTO t_order (order_id, user_id, status) VALUES ")
			for i := range 400 {
				id++
				if i > 0 {
					q.WriteString(", ")
				}
				fmt.Fprintf(&q, "(%d, %d, 'bulk')", id, i/2%2)
			}
			if _, err := db.ExecContext(ctx, q.String()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("two data sources in a transaction", func(b *testing.B) {
		c, err := db.Conn(ctx)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		if _, err := c.ExecContext(ctx, "BEGIN"); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			id += 2
			if _, err := c.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id, status) VALUES (?, 0, 'b'), (?, 1, 'b')", id, id+1); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		if _, err := c.ExecContext(ctx, "COMMIT"); err != nil {
			b.Fatal(err)
		}
	})
}
