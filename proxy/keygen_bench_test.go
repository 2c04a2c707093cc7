package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/idgen"
	"github.com/shardflake/shardflake/internal/mariadbtest"
	"github.com/shardflake/shardflake/proxy/keygen"
)

// startKeygenBenchProxy serves rules (rulesYAML over backends) for a
// benchmark and returns a pool of connections to it.
func startKeygenBenchProxy(b *testing.B, backends []*mariadbtest.Server, rulesSection string) (*sql.DB, map[string]idgen.KeyGenerator) {
	b.Helper()
	rules, err := config.Parse([]byte(rulesYAML(backends, "", rulesSection)), "bench-rules.yaml")
	if err != nil {
		b.Fatal(err)
	}
	keys, closeKeys, err := keygen.Open(context.Background(), rules)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { closeKeys() })
	srv, err := New(Config{Rules: rules, Keys: keys, Logger: slog.New(slog.DiscardHandler)})
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
	db, err := sql.Open("mysql", "app:app-secret@tcp("+l.Addr().String()+")/sharding_db")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db, keys
}

// BenchmarkKeygenInsert measures single-row INSERT throughput through the
// proxy with each key generator, 8 clients, against direct MariaDB
// AUTO_INCREMENT on one of the data sources (same servers, same run).
// Run it short: go test -run XXX -bench KeygenInsert -benchtime 2000x ./proxy/
func BenchmarkKeygenInsert(b *testing.B) {
	backends := sharedServers(b)
	tickets := make([]*mariadbtest.Server, 2)
	for i := range tickets {
		s, err := mariadbtest.Launch(mariadbtest.Options{Databases: []string{"tickets"},
			Args: []string{"--auto-increment-increment=2", fmt.Sprintf("--auto-increment-offset=%d", i+1)}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		tickets[i] = s
	}
	seg, err := mariadbtest.Launch(mariadbtest.Options{Databases: []string{"ids"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { seg.Close() })
	cases := []struct {
		name, gen, keyType string
		rows               int // rows per INSERT; 0 means 1
	}{
		{"snowflake", `{ type: SNOWFLAKE, props: { worker-id: 3 } }`, "BIGINT", 0},
		{"segment", fmt.Sprintf(`{ type: SEGMENT, props: { url: "jdbc:mysql://%s/ids", username: root } }`, seg.Addr()), "BIGINT", 0},
		{"ticket_one_server", fmt.Sprintf(`{ type: TICKET, props: { urls: "jdbc:mysql://%s/tickets", username: root, connections: 8 } }`, tickets[0].Addr()), "BIGINT", 0},
		{"ticket_two_servers", fmt.Sprintf(`{ type: TICKET, props: { urls: "jdbc:mysql://%s/tickets,jdbc:mysql://%s/tickets", username: root, connections: 4 } }`, tickets[0].Addr(), tickets[1].Addr()), "BIGINT", 0},
		{"uuidv7", `{ type: UUIDv7 }`, "CHAR(36)", 0},
		{"ticket_two_servers_10_rows", fmt.Sprintf(`{ type: TICKET, props: { urls: "jdbc:mysql://%s/tickets,jdbc:mysql://%s/tickets", username: root, connections: 4 } }`, tickets[0].Addr(), tickets[1].Addr()), "BIGINT", 10},
		{"segment_10_rows", fmt.Sprintf(`{ type: SEGMENT, props: { url: "jdbc:mysql://%s/ids", username: root, biz-tag: rows10 } }`, seg.Addr()), "BIGINT", 10},
	}
	const clients = 8
	run := func(b *testing.B, db *sql.DB, table string, rows int) {
		stmt := "INSERT INTO " + table + " (user_id, note) VALUES (?, 'bench')" + strings.Repeat(", (?, 'bench')", max(rows, 1)-1)
		db.SetMaxOpenConns(clients)
		var user atomic.Int64
		b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			u := user.Add(1)
			for pb.Next() {
				args := make([]any, max(rows, 1))
				for i := range args {
					args[i] = u
				}
				if _, err := db.Exec(stmt, args...); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "inserts/s")
		b.ReportMetric(float64(b.N*max(rows, 1))/b.Elapsed().Seconds(), "rows/s")
	}
	b.Run("direct_auto_increment", func(b *testing.B) {
		backends[0].Exec(b, "ds_0", "DROP TABLE IF EXISTS t_kb_direct", "CREATE TABLE t_kb_direct (id BIGINT AUTO_INCREMENT PRIMARY KEY, user_id INT NOT NULL, note VARCHAR(20))")
		db := backends[0].Open(b, "ds_0")
		run(b, db, "t_kb_direct", 1)
	})
	b.Run("direct_auto_increment_10_rows", func(b *testing.B) {
		backends[0].Exec(b, "ds_0", "DROP TABLE IF EXISTS t_kb_direct10", "CREATE TABLE t_kb_direct10 (id BIGINT AUTO_INCREMENT PRIMARY KEY, user_id INT NOT NULL, note VARCHAR(20))")
		run(b, backends[0].Open(b, "ds_0"), "t_kb_direct10", 10)
	})
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			table := "t_kb_" + c.name
			db, keys := startKeygenBenchProxy(b, backends, keygenRules(table, c.gen))
			for _, q := range []string{"DROP TABLE IF EXISTS " + table, "CREATE TABLE " + table + " (id " + c.keyType + " PRIMARY KEY, user_id INT NOT NULL, note VARCHAR(20))"} {
				if _, err := db.Exec(q); err != nil {
					b.Fatal(err)
				}
			}
			st, _ := keys["g"].(idgen.Stater)
			var before idgen.GeneratorState
			if st != nil {
				before = st.State()
			}
			run(b, db, table, c.rows)
			if st != nil {
				after := st.State()
				b.ReportMetric(float64(after.RoundTrips-before.RoundTrips)/float64(b.N), "keygen-round-trips/insert")
				b.ReportMetric(float64(after.Issued-before.Issued)/float64(b.N), "keys/insert")
			}
		})
	}
}

// BenchmarkInnoDBKeyOrder inserts rows straight into InnoDB with keys as
// each generator makes them, 500 rows per INSERT: a BIGINT Snowflake, a
// CHAR(36) and a BINARY(16) UUID v4 (random: every insert touches a random
// leaf page) and v7 (time-ordered: appends at the right edge). One op is
// one INSERT of 500 rows; -benchtime 2000x is the 1,000,000 rows per
// key type (8 minutes on the loaded 2-vCPU machine), 400x a quicker 200,000.
func BenchmarkInnoDBKeyOrder(b *testing.B) {
	backend := sharedServers(b)[0]
	const batch = 500
	snow, err := idgen.New(context.Background(), idgen.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer snow.Close()
	v4c, _ := idgen.NewUUIDv4(nil)
	v7c, _ := idgen.NewUUIDv7(nil)
	v4b, _ := idgen.NewUUIDv4(map[string]string{idgen.PropColumnType: "BINARY(16)"})
	v7b, _ := idgen.NewUUIDv7(map[string]string{idgen.PropColumnType: "BINARY(16)"})
	uuids := func(g idgen.UUIDGenerator) func(*strings.Builder) {
		buf := make([]idgen.UUID, 1)
		return func(sb *strings.Builder) {
			g.NextUUIDs(buf)
			if g.Encoding() == idgen.UUIDBinary16 {
				fmt.Fprintf(sb, "X'%x'", buf[0][:])
			} else {
				fmt.Fprintf(sb, "'%s'", g.Encoding().Text(buf[0]))
			}
		}
	}
	cases := []struct {
		name, keyType string
		key           func(*strings.Builder)
	}{
		{"snowflake_bigint", "BIGINT", func(sb *strings.Builder) { id, _ := snow.Next(); fmt.Fprint(sb, id) }},
		{"uuidv4_char36", "CHAR(36)", uuids(v4c)},
		{"uuidv7_char36", "CHAR(36)", uuids(v7c)},
		{"uuidv4_binary16", "BINARY(16)", uuids(v4b)},
		{"uuidv7_binary16", "BINARY(16)", uuids(v7b)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			table := "t_ko_" + c.name
			backend.Exec(b, "ds_0", "DROP TABLE IF EXISTS "+table,
				"CREATE TABLE "+table+" (id "+c.keyType+" NOT NULL PRIMARY KEY, user_id INT NOT NULL, note VARCHAR(64)) ENGINE=InnoDB")
			db := backend.Open(b, "ds_0")
			defer db.Exec("DROP TABLE IF EXISTS " + table)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				var sb strings.Builder
				sb.WriteString("INSERT INTO " + table + " (id, user_id, note) VALUES ")
				for r := 0; r < batch; r++ {
					if r > 0 {
						sb.WriteByte(',')
					}
					sb.WriteByte('(')
					c.key(&sb)
					fmt.Fprintf(&sb, ",%d,'a note of some forty characters, padded'", r)
					sb.WriteByte(')')
				}
				b.StartTimer()
				if _, err := db.Exec(sb.String()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
