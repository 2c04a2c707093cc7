package proxy

import (
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// TestMysqldumpRoundTrip dumps the logical schema through one proxy with
// mysqldump, in its default mode, with --single-transaction and with
// --databases (CREATE DATABASE IF NOT EXISTS and USE first), restores
// the dump with the mariadb client through a second proxy over empty data
// sources, and wants every physical table of every data node to hold the
// same rows as the first proxy's, and SHOW CREATE TABLE to agree. The
// dump's preamble (SET @saved_cs_client ...), its /*!40101 ... */
// comments, LOCK TABLES ... WRITE, ALTER TABLE ... DISABLE KEYS and its
// extended INSERTs all pass through the proxy, and the rows are routed by
// their sharding values.
func TestMysqldumpRoundTrip(t *testing.T) {
	dump := mariadbtest.RequireBinary(t, "mysqldump")
	client := mariadbtest.RequireBinary(t, "mariadb")
	src := startEnv(t, envOptions{databases: "dumpsrc"})
	createTables(t, src)
	db := src.open(t)
	var values []string
	for i := range 300 {
		values = append(values, fmt.Sprintf("(%d, '%s')", i%37, []string{"new", "paid", "it''s", `back\\slash`}[i%4]))
	}
	for _, q := range []string{
		"INSERT INTO t_order (user_id, status) VALUES " + strings.Join(values, ", "),
		"INSERT INTO t_dict (code, label) VALUES ('a', 'x'), ('b', NULL)",
		"INSERT INTO t_plain (v) VALUES ('one'), ('two')",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	tables := map[string][]string{"t_order": {"t_order_0", "t_order_1"}, "t_dict": {"t_dict"}}
	for _, mode := range [][]string{nil, {"--single-transaction"}, {"--databases"}} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			host, port, _ := net.SplitHostPort(src.addr)
			args := append([]string{"--no-defaults", "--protocol=tcp", "-h", host, "-P", port, "-uapp", "-papp-secret", "--skip-ssl"}, mode...)
			cmd := exec.Command(dump, append(args, "sharding_db")...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil || stderr.Len() > 0 {
				t.Fatalf("mysqldump %v: %v\n%s", mode, err, stderr.String())
			}
			dst := startEnv(t, envOptions{databases: "dumpdst"})
			host, port, _ = net.SplitHostPort(dst.addr)
			restore := exec.Command(client, "--no-defaults", "-h"+host, "-P"+port, "-uapp", "-papp-secret", "sharding_db")
			restore.Stdin = bytes.NewReader(out)
			if msg, err := restore.CombinedOutput(); err != nil {
				t.Fatalf("restore: %v\n%s", err, msg)
			}
			for i := range src.backends {
				for logical, physicals := range tables {
					for _, p := range physicals {
						q := "SELECT * FROM " + p + " ORDER BY 1"
						got, want := tableRows(t, dst.backend(t, i), q), tableRows(t, src.backend(t, i), q)
						if !slices.Equal(got, want) {
							t.Errorf("data node ds_%d.%s (%s): restored %d rows, dumped %d\nrestored %q\ndumped   %q", i, p, logical, len(got), len(want), got, want)
						}
					}
				}
			}
			if got, want := tableRows(t, dst.backend(t, 0), "SELECT * FROM t_plain ORDER BY 1"), tableRows(t, src.backend(t, 0), "SELECT * FROM t_plain ORDER BY 1"); !slices.Equal(got, want) {
				t.Errorf("t_plain: restored %q, dumped %q", got, want)
			}
			for _, table := range []string{"t_order", "t_dict", "t_plain"} {
				got, want := showCreate(t, dst, table), showCreate(t, src, table)
				if got != want {
					t.Errorf("SHOW CREATE TABLE %s:\nrestored %s\ndumped   %s", table, got, want)
				}
			}
		})
	}
}

func showCreate(t *testing.T, e *testEnv, table string) string {
	t.Helper()
	var name, ddl string
	if err := e.open(t).QueryRow("SHOW CREATE TABLE "+table).Scan(&name, &ddl); err != nil {
		t.Fatalf("SHOW CREATE TABLE %s: %v", table, err)
	}
	return ddl
}
