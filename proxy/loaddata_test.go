package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/keygen"
)

// TestLoadDataLocalUnsharded: LOAD DATA LOCAL INFILE into an unsharded
// table (1235 before) loads what the same statement loads on one MariaDB,
// over many packets, with the same affected-row count; into a sharded
// table it is refused (1235); a file the client does not send loads
// nothing; the connection stays usable after each.
func TestLoadDataLocalUnsharded(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	var b strings.Builder
	b.WriteString("header line\n")
	for i := range 20000 {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "\"quoted, %d\"\n", i)
		case 1:
			fmt.Fprintf(&b, "tab\\there %d\n", i)
		case 2:
			fmt.Fprintf(&b, "%s\n", strings.Repeat("x", 40)) // cut to 32 with a warning
		default:
			fmt.Fprintf(&b, "v%d\n", i)
		}
	}
	path := filepath.Join(t.TempDir(), "rows.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	load := fmt.Sprintf("LOAD DATA LOCAL INFILE '%s' INTO TABLE t_plain FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' LINES TERMINATED BY '\\n' IGNORE 1 LINES (v)", path)

	db, err := sql.Open("mysql", e.dsn("app", "app-secret", "allowAllFiles=true"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	e.backends[0].Exec(t, "ds_0", "CREATE DATABASE IF NOT EXISTS ldref")
	e.backends[0].Exec(t, "ldref", "DROP TABLE IF EXISTS t_plain", "CREATE TABLE t_plain (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(32))")
	ref, err := sql.Open("mysql", e.backends[0].DSN("ldref")+"&allowAllFiles=true")
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()

	got, err := db.Exec(load)
	if err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	want, err := ref.Exec(load)
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	gn, _ := got.RowsAffected()
	wn, _ := want.RowsAffected()
	if gn != wn || wn != 20000 {
		t.Errorf("affected rows: proxy %d, reference %d, want 20000", gn, wn)
	}
	q := "SELECT id, v FROM t_plain ORDER BY id"
	if g, w := queryStrings(t, db, q), queryStrings(t, ref, q); !slices.Equal(g, w) {
		t.Errorf("rows differ: proxy %d rows (first %q), reference %d rows (first %q)", len(g), g[:min(3, len(g))], len(w), w[:min(3, len(w))])
	}

	if _, err := db.Exec(strings.Replace(load, "t_plain", "t_order", 1)); errCode(err) != 1235 {
		t.Errorf("into a sharded table: %v, want 1235", err)
	}
	// A client that will not send the file sends none: nothing is loaded.
	plain := e.open(t)
	if _, err := plain.Exec(load); err == nil {
		t.Errorf("a client without allowAllFiles loaded the file")
	}
	if got := queryStrings(t, plain, "SELECT COUNT(*) FROM t_plain"); !slices.Equal(got, []string{"20000"}) {
		t.Errorf("rows after the refused file: %q", got)
	}
}

// BenchmarkLoadDataLocal loads a 200,000-line file into an unsharded
// table with LOAD DATA LOCAL INFILE, directly and through the proxy, and
// reports rows/s for each.
func BenchmarkLoadDataLocal(b *testing.B) {
	backends := sharedServers(b)
	var buf strings.Builder
	const lines = 200000
	for i := range lines {
		fmt.Fprintf(&buf, "%d,value %d\n", i, i)
	}
	path := filepath.Join(b.TempDir(), "rows.csv")
	if err := os.WriteFile(path, []byte(buf.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	load := fmt.Sprintf("LOAD DATA LOCAL INFILE '%s' INTO TABLE ld_bench FIELDS TERMINATED BY ',' (id, v)", path)
	rules, err := config.Parse([]byte(rulesYAML(backends, "", "")), "bench-rules.yaml")
	if err != nil {
		b.Fatal(err)
	}
	keys, closeKeys, err := keygen.Open(context.Background(), rules)
	if err != nil {
		b.Fatal(err)
	}
	defer closeKeys()
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
	defer func() {
		srv.Close()
		<-done
	}()
	for _, side := range []struct{ name, dsn string }{
		{"direct", backends[0].DSN("ds_0") + "&allowAllFiles=true"},
		{"proxy", "app:app-secret@tcp(" + l.Addr().String() + ")/sharding_db?allowAllFiles=true"},
	} {
		b.Run(side.name, func(b *testing.B) {
			db, err := sql.Open("mysql", side.dsn)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			for range b.N {
				b.StopTimer()
				for _, q := range []string{"DROP TABLE IF EXISTS ld_bench", "CREATE TABLE ld_bench (id INT PRIMARY KEY, v VARCHAR(32))"} {
					if _, err := db.Exec(q); err != nil {
						b.Fatal(err)
					}
				}
				b.StartTimer()
				res, err := db.Exec(load)
				if err != nil {
					b.Fatal(err)
				}
				if n, _ := res.RowsAffected(); n != lines {
					b.Fatalf("%d rows", n)
				}
			}
			b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			db.Exec("DROP TABLE IF EXISTS ld_bench")
		})
	}
}

// TestLoadDataLocalQualifiedUnsharded: LOAD DATA LOCAL INFILE into an
// unsharded table qualified with the logical schema (pt-archiver's
// --bulk-insert writes `sharding_db`.`t_plain`) loads the file into the
// default data source's table, as the unqualified statement does; it got
// 1146 'Table 'sharding_db.t_plain' doesn't exist' from the data source,
// which has no such database. The file's name, with a quote and a
// backslash, is still the one the client is asked for.
func TestLoadDataLocalQualifiedUnsharded(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	path := filepath.Join(t.TempDir(), `it's \ rows.txt`)
	if err := os.WriteFile(path, []byte("1\tone\n2\ttwo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", e.dsn("app", "app-secret", "allowAllFiles=true"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	file := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(path)
	for i, table := range []string{"sharding_db.t_plain", "`sharding_db`.`t_plain`"} {
		load := fmt.Sprintf("LOAD DATA LOCAL INFILE '%s' IGNORE INTO TABLE %s CHARACTER SET utf8mb4 FIELDS TERMINATED BY '\\t' LINES TERMINATED BY '\\n' (id, v) SET v = CONCAT(v, '%d')", file, table, i)
		if _, err := db.Exec("DELETE FROM t_plain"); err != nil {
			t.Fatal(err)
		}
		res, err := db.Exec(load)
		if err != nil {
			t.Errorf("%s: %v", load, err)
			continue
		}
		if n, _ := res.RowsAffected(); n != 2 {
			t.Errorf("%s: %d rows affected, want 2", load, n)
		}
		want := []string{fmt.Sprintf("1 one%d", i), fmt.Sprintf("2 two%d", i)}
		if got := queryStrings(t, db, "SELECT CONCAT(id, ' ', v) FROM t_plain ORDER BY id"); !slices.Equal(got, want) {
			t.Errorf("%s: rows %q, want %q", load, got, want)
		}
	}
	if _, err := db.Exec(fmt.Sprintf("LOAD DATA LOCAL INFILE '%s' INTO TABLE other_db.t_plain (id, v)", file)); errCode(err) != 1142 {
		t.Errorf("into another schema: %v, want 1142, as MariaDB answers an account with privileges on one schema", err)
	}
}
