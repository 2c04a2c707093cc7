package router

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"

	"github.com/shardflake/shardflake/config"
)

// BenchmarkRoute measures the router's cost per statement: the golden
// corpus end to end, and the point SELECT that dominates OLTP traffic.
//
//	go test ./router -run XXX -bench BenchmarkRoute -benchmem
func BenchmarkRoute(b *testing.B) {
	rules := loadGoldenRules(b)
	r, _ := newGoldenRouter(b, rules)
	var corpus []goldenCase
	for _, file := range goldenFiles(b) {
		for _, c := range readCases(b, file) {
			if c.Error == "" {
				corpus = append(corpus, c)
			}
		}
	}

	b.Run("corpus/parse+prepare+bind", func(b *testing.B) {
		p := parser.New()
		args := make([][]any, len(corpus))
		for i, c := range corpus {
			var err error
			if args[i], err = decodeArgs(c.Args); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			c := corpus[i%len(corpus)]
			stmt, err := ParseWith(p, c.Query)
			if err != nil {
				b.Fatal(err)
			}
			pr, err := r.Prepare(stmt, c.Query, "sharding_db")
			if err != nil {
				b.Fatal(err)
			}
			if pr.Kind() != KindOther {
				if _, err := pr.Bind(args[i%len(corpus)]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})

	const point = "SELECT * FROM t_order WHERE user_id = 1 AND order_id = 5"
	b.Run("point/parse+prepare+bind", func(b *testing.B) {
		p := parser.New()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			stmt, err := ParseWith(p, point)
			if err != nil {
				b.Fatal(err)
			}
			pr, err := r.Prepare(stmt, point, "sharding_db")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := pr.Bind(nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("point/parse-only", func(b *testing.B) {
		p := parser.New()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := ParseWith(p, point); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("point/prepare+bind", func(b *testing.B) {
		p := parser.New()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			stmt, err := ParseWith(p, point)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			pr, err := r.Prepare(stmt, point, "sharding_db")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := pr.Bind(nil); err != nil {
				b.Fatal(err)
			}
		}
	})

	const prepared = "SELECT * FROM t_order WHERE user_id = ? AND order_id = ?"
	b.Run("point/cached-prepared-bind", func(b *testing.B) {
		pr := mustPrepare(b, r, prepared)
		args := []any{int64(1), int64(5)}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := pr.Bind(args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("point/cached-prepared-bind-parallel", func(b *testing.B) {
		pr := mustPrepare(b, r, prepared)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			args := []any{int64(1), int64(5)}
			for pb.Next() {
				if _, err := pr.Bind(args); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("point/cached-literal-bind", func(b *testing.B) {
		pr := mustPrepare(b, r, point)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := pr.Bind(nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("insert/cached-prepared-bind", func(b *testing.B) {
		pr := mustPrepare(b, r, "INSERT INTO t_order (user_id, status, amount) VALUES (?, ?, ?)")
		args := []any{int64(3), "new", 9.5}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := pr.Bind(args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("insert-key/cached-prepared-bind", func(b *testing.B) {
		// sysbench's oltp_insert: the client gives the sharding key.
		pr := mustPrepare(b, r, "INSERT INTO t_order (user_id, order_id, status, amount) VALUES (?, ?, ?, ?)")
		args := []any{int64(3), int64(1234567), "new", 9.5}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := pr.Bind(args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("scatter/cached-prepared-bind", func(b *testing.B) {
		pr := mustPrepare(b, r, "SELECT status, COUNT(*) FROM t_order WHERE created_at > ? GROUP BY status ORDER BY status LIMIT ?")
		args := []any{"2024-01-01", int64(10)}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := pr.Bind(args); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func mustPrepare(b *testing.B, r *Router, sql string) *Prepared {
	b.Helper()
	stmt, err := ParseOne(sql)
	if err != nil {
		b.Fatal(err)
	}
	p, err := r.Prepare(stmt, sql, "sharding_db")
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// sysbenchBenchRules are the sysbench layout of bench/sysbench.sh and the
// proxy's benchmarks: sbtest1 over 2 data sources x 4 tables by id % 8,
// the rules section read from bench/sysbench_mod_rules.yaml.
func sysbenchBenchRules(b *testing.B) []byte {
	b.Helper()
	section, err := os.ReadFile(filepath.Join("..", "bench", "sysbench_mod_rules.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	head := `databaseName: sharding_db
server:
  users: [{user: app, password: pw}]
dataSources:
  ds_0: {url: "jdbc:mysql://127.0.0.1:3306/ds_0", username: root, password: ""}
  ds_1: {url: "jdbc:mysql://127.0.0.1:3306/ds_1", username: root, password: ""}
rules:
`
	return append([]byte(head), section...)
}

// BenchmarkRouteSysbench measures the bind of sysbench's point select
// (oltp_point_select) on its own layout: the router's part of the proxy's
// most frequent statement. Both ps-modes bind this plan with an int64: a
// COM_STMT_EXECUTE's parameter, or a text query's literal (the shape of
// the query is planned once, sqlarg.Normalize).
//
//	go test ./router -run XXX -bench BenchmarkRouteSysbench -benchmem
func BenchmarkRouteSysbench(b *testing.B) {
	rules, err := config.Parse(sysbenchBenchRules(b), "sysbench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	r, err := New(rules, nil)
	if err != nil {
		b.Fatal(err)
	}
	pr := mustPrepare(b, r, "SELECT c FROM sbtest1 WHERE id=?")
	b.Run("point", func(b *testing.B) {
		// The ids boxed beforehand: boxing one is the caller's allocation.
		ids := make([][]any, 1024)
		for i := range ids {
			ids[i] = []any{int64(i*97 + 1)}
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := pr.Bind(ids[i%len(ids)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
