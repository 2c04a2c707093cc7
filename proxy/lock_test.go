package proxy

import (
	"context"
	"database/sql"
	"net"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// TestLockTables locks logical tables through the proxy and the same
// tables on one plain MariaDB, and compares what the session and another
// session may then do: reads and writes of locked tables, tables not
// locked (1100), writes under READ (1099), the other session waiting
// (1205 after lock_wait_timeout), LOCK TABLES replacing the locks held,
// a failed LOCK TABLES holding nothing, BEGIN releasing them, and
// autocommit=0 transactions under them.
func TestLockTables(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS lock_ref", "CREATE DATABASE lock_ref",
		"CREATE TABLE lock_ref.t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))",
		"CREATE TABLE lock_ref.t_dict (code VARCHAR(16) PRIMARY KEY, label VARCHAR(64))",
		"CREATE TABLE lock_ref.t_plain (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(32))")
	t.Cleanup(func() { e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS lock_ref") })
	proxy, ref := e.conn(t), refConn(t, e, "lock_ref")
	other, otherRef := e.conn(t), refConn(t, e, "lock_ref")
	for _, c := range []*sql.Conn{other, otherRef} {
		if _, err := c.ExecContext(context.Background(), "SET SESSION lock_wait_timeout = 1"); err != nil {
			t.Fatal(err)
		}
	}
	const count = "SELECT order_id FROM t_order ORDER BY order_id"
	type step struct {
		other bool // run by the other session
		sql   string
	}
	steps := []step{
		{false, "INSERT INTO t_order (order_id, user_id) VALUES (1, 0), (2, 1)"},
		{false, "INSERT INTO t_dict (code, label) VALUES ('a', 'x')"},
		{false, "LOCK TABLES `t_order` READ /*!32311 LOCAL */"},
		{false, count},
		{false, "INSERT INTO t_order (order_id, user_id) VALUES (3, 0)"}, // 1099
		{false, "SELECT label FROM t_dict"},                              // 1100
		{false, "SELECT v FROM t_plain"},                                 // 1100
		{true, count},
		{true, "INSERT INTO t_order (order_id, user_id) VALUES (4, 1)"}, // waits: 1205
		{false, "UNLOCK TABLES"},
		{false, "LOCK TABLES t_order LOW_PRIORITY WRITE, t_dict READ"},
		{false, "INSERT INTO t_order (order_id, user_id) VALUES (5, 0), (6, 1)"},
		{false, "UPDATE t_order SET status = 'w'"},
		{false, "UPDATE t_order SET status = 'v' WHERE order_id IN (1, 6)"},
		{false, "SELECT status, COUNT(*) FROM t_order GROUP BY status ORDER BY status"}, // the merge probes collations
		{false, count},
		{false, "SELECT label FROM t_dict"},
		{false, "INSERT INTO t_dict (code, label) VALUES ('b', 'y')"}, // 1099
		{true, count}, // waits: 1205
		{true, "SELECT label FROM t_dict"},
		{false, "LOCK TABLES t_plain WRITE"}, // replaces the locks held
		{false, count},                       // 1100
		{false, "SELECT order_id FROM t_order WHERE user_id = 1"}, // 1100: a data source without locks
		{true, count},
		{false, "INSERT INTO t_plain (v) VALUES ('p')"},
		{false, "UNLOCK TABLES"},
		{false, "LOCK TABLES t_order READ, nosuch READ"}, // 1146: nothing locked
		{false, count},
		{true, "INSERT INTO t_order (order_id, user_id) VALUES (7, 0)"},
		{false, "LOCK TABLES t_order WRITE"},
		{false, "BEGIN"}, // releases the locks
		{true, count},
		{false, "INSERT INTO t_order (order_id, user_id) VALUES (8, 1)"},
		{false, "COMMIT"},
		{false, "SET autocommit = 0"},
		{false, "LOCK TABLES t_order WRITE"},
		{false, "INSERT INTO t_order (order_id, user_id) VALUES (9, 0), (10, 1)"},
		{false, "COMMIT"},
		{false, "INSERT INTO t_order (order_id, user_id) VALUES (11, 1)"},
		{false, "ROLLBACK"},
		{false, "INSERT INTO t_order (order_id, user_id) VALUES (12, 0)"},
		{false, "UNLOCK TABLES"}, // commits
		{false, "SET autocommit = 1"},
		{true, count},
		{false, "UNLOCK TABLES"},
		// What a dump's restore sends.
		{false, "LOCK TABLES `t_order` WRITE"},
		{false, "/*!40000 ALTER TABLE `t_order` DISABLE KEYS */"},
		{false, "INSERT INTO `t_order` VALUES (20,0,'r'),(21,1,'r'),(22,1,NULL)"},
		{false, "/*!40000 ALTER TABLE `t_order` ENABLE KEYS */"},
		{false, "UNLOCK TABLES"},
		{true, count},
		{false, "LOCK TABLE t_order READ, t_order READ"}, // named twice: 1066
		{false, count},
		{false, "LOCK TABLE t_order READ"},
		{false, "SELECT t_order.order_id, status FROM t_order WHERE t_order.user_id = 1 ORDER BY t_order.order_id"},
		{false, "SELECT COUNT(*), MAX(status) FROM t_order"},
		{false, "UNLOCK TABLES"},
		{false, count},
	}
	for _, st := range steps {
		p, r, who := proxy, ref, "session"
		if st.other {
			p, r, who = other, otherRef, "other session"
		}
		diffQuery(t, who, p, r, st.sql)
	}
}

// TestMysqldumpLocks runs the mariadb-client mysqldump through the proxy
// in its default mode (LOCK TABLES ... READ LOCAL around the dump) and
// with --single-transaction (a consistent-snapshot transaction with
// savepoints): both finish and dump every row of a sharded and a
// broadcast table. (The full dump-and-restore round trip is another
// test's.)
func TestMysqldumpLocks(t *testing.T) {
	dump := mariadbtest.RequireBinary(t, "mysqldump")
	e := startEnv(t, envOptions{})
	createTables(t, e)
	db := e.open(t)
	for _, q := range []string{
		"INSERT INTO t_order (order_id, user_id, status) VALUES (101, 0, 'a'), (102, 1, 'b'), (103, 0, 'c'), (104, 1, 'd')",
		"INSERT INTO t_dict (code, label) VALUES ('k1', 'v1')",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	host, port, _ := net.SplitHostPort(e.addr)
	// mysqldump's default path: information_schema.FILES, PARTITIONS
	// and TRIGGERS are read too (authz.go lets an application account).
	for _, mode := range [][]string{nil, {"--single-transaction"}, {"--lock-tables", "--add-locks"}} {
		args := append([]string{"--no-defaults", "--protocol=tcp", "-h", host, "-P", port, "-u", "app", "-papp-secret",
			"--skip-ssl"}, mode...)
		args = append(args, "sharding_db", "t_order", "t_dict")
		out, err := exec.Command(dump, args...).CombinedOutput()
		if err != nil {
			t.Errorf("mysqldump %v: %v\n%s", mode, err, out)
			continue
		}
		for _, want := range []string{"(101,0,'a')", "(102,1,'b')", "(103,0,'c')", "(104,1,'d')", "('k1','v1')"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("mysqldump %v: the dump has no row %s:\n%s", mode, want, out)
			}
		}
	}
}

// TestLockTablesConnectionLost: when the backend connection that holds
// the session's table locks dies, the statement fails and the client
// connection ends, as with one MariaDB whose connection drops, instead of
// going on as if it still held the locks; the locks are gone for the
// others.
func TestLockTablesConnectionLost(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	ctx := context.Background()
	c := e.conn(t)
	if _, err := c.ExecContext(ctx, "LOCK TABLES t_order WRITE"); err != nil {
		t.Fatal(err)
	}
	// A statement on the default data source runs on the pinned
	// connection; found by its text there, it is killed mid-statement.
	done := make(chan error, 1)
	go func() {
		_, err := c.ExecContext(ctx, "SELECT SLEEP(20) AS lock_holder")
		done <- err
	}()
	direct := e.backend(t, 0)
	var id string
	for deadline := time.Now().Add(10 * time.Second); id == "" && time.Now().Before(deadline); {
		ids := queryStrings(t, direct, "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO = 'SELECT SLEEP(20) AS lock_holder'")
		if len(ids) == 1 {
			id = ids[0]
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if id == "" {
		t.Fatal("the statement never reached the lock holder")
	}
	if _, err := direct.ExecContext(ctx, "KILL "+id); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatal("a statement on the killed lock holder succeeded")
	}
	if _, err := c.ExecContext(ctx, "SELECT 1"); err == nil {
		t.Error("the client connection went on after its table locks were lost")
	}
	other := e.conn(t)
	if _, err := other.ExecContext(ctx, "SET SESSION lock_wait_timeout = 2"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id) VALUES (1, 0), (2, 1)"); err != nil {
		t.Errorf("another session after the lock holder's end: %v", err)
	}
}

// TestLockTablesWaitIsKillable: a LOCK TABLES that waits for another
// session's locks stops at KILL QUERY with 1317, as on MariaDB, and the
// session goes on without locks.
func TestLockTablesWaitIsKillable(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	ctx := context.Background()
	holder, waiter, killer := e.conn(t), e.conn(t), e.conn(t)
	if _, err := holder.ExecContext(ctx, "LOCK TABLES t_order WRITE"); err != nil {
		t.Fatal(err)
	}
	id := queryStrings(t, waiter, "SELECT CONNECTION_ID()")[0]
	done := make(chan error, 1)
	go func() {
		_, err := waiter.ExecContext(ctx, "LOCK TABLES t_order READ")
		done <- err
	}()
	direct := e.backend(t, 0)
	for deadline := time.Now().Add(10 * time.Second); ; {
		n := queryStrings(t, direct, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'LOCK TABLES `t_order_%` READ%'")
		if n[0] != "0" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second LOCK TABLES never started waiting")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := killer.ExecContext(ctx, "KILL QUERY "+id); err != nil {
		t.Fatal(err)
	}
	if err := <-done; errCode(err) != 1317 {
		t.Errorf("the killed LOCK TABLES: %v, want 1317", err)
	}
	if _, err := holder.ExecContext(ctx, "UNLOCK TABLES"); err != nil {
		t.Fatal(err)
	}
	if _, err := waiter.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id) VALUES (1, 0), (2, 1)"); err != nil {
		t.Errorf("the session after its killed LOCK TABLES: %v", err)
	}
}

func TestLockAliases(t *testing.T) {
	tests := []struct {
		give, plain string
		aliases     []string
		ok          bool
	}{
		{"LOCK TABLES t READ", "", nil, false},
		{"LOCK TABLES t AS a READ", "LOCK TABLES t  READ", []string{"a"}, true},
		{"lock table t_order o write, t_dict READ, `sharding_db`.`t 2` AS `b``c` LOW_PRIORITY WRITE",
			"lock table t_order  write, t_dict READ, `sharding_db`.`t 2`  LOW_PRIORITY WRITE", []string{"o", "", "b`c"}, true},
		{"LOCK TABLES t /* c */ AS a READ LOCAL, u WRITE", "LOCK TABLES t /* c */  READ LOCAL, u WRITE", []string{"a", ""}, true},
		{"SELECT 1", "", nil, false},
	}
	for _, tt := range tests {
		plain, aliases, ok := lockAliases(tt.give)
		if plain != tt.plain || !slices.Equal(aliases, tt.aliases) || ok != tt.ok {
			t.Errorf("lockAliases(%q) = %q, %q, %v; want %q, %q, %v", tt.give, plain, aliases, ok, tt.plain, tt.aliases, tt.ok)
		}
	}
}

// oneTablePerSourceRules shard t_order over the data sources only: one
// data node on each, so it can be locked under an alias.
const oneTablePerSourceRules = `  - !SHARDING
    tables:
      t_order:
        actualDataNodes: ds_${0..1}.t_order
        databaseStrategy:
          standard: { shardingColumn: user_id, shardingAlgorithmName: db_inline }
        keyGenerateStrategy: { column: order_id, keyGeneratorName: snowflake }
    shardingAlgorithms:
      db_inline: { type: INLINE, props: { algorithm-expression: "ds_${user_id % 2}" } }
    keyGenerators:
      snowflake: { type: SNOWFLAKE, props: { worker-id: 1 } }
  - !BROADCAST
    tables: [t_dict]
`

// TestLockTablesAliases: LOCK TABLES t AS a locks t under the alias, as
// on MariaDB: statements that name it so read and write, the table named
// without the alias is not locked (1100), a table locked both ways works
// both ways, an alias used twice gets 1066; compared with one MariaDB,
// codes and messages. A table with several data nodes on one data source
// cannot share one alias there: 1235, and the session goes on.
func TestLockTablesAliases(t *testing.T) {
	e := startEnv(t, envOptions{rules: oneTablePerSourceRules, databases: "lockalias"})
	createTables(t, e)
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS lockalias_ref", "CREATE DATABASE lockalias_ref",
		"CREATE TABLE lockalias_ref.t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32), PRIMARY KEY (order_id))",
		"CREATE TABLE lockalias_ref.t_dict (code VARCHAR(16) PRIMARY KEY, label VARCHAR(64))",
		"CREATE TABLE lockalias_ref.t_plain (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(32))")
	t.Cleanup(func() {
		e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS lockalias_ref", "DROP DATABASE IF EXISTS lockalias_0")
		e.backends[1].Exec(t, "", "DROP DATABASE IF EXISTS lockalias_1")
	})
	proxy, ref := e.conn(t), refConn(t, e, "lockalias_ref")
	ctx := context.Background()
	for _, q := range []string{
		"INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'a'), (2, 1, 'b')",
		"INSERT INTO t_dict (code, label) VALUES ('c', 'x')",
		"LOCK TABLES t_order AS o READ, t_dict d READ, `t_plain` AS `p` WRITE",
		"SELECT o.order_id, o.status FROM t_order AS o ORDER BY o.order_id",
		"SELECT COUNT(*) FROM t_order",
		"SELECT COUNT(*) FROM t_order AS x",
		"SELECT d.label FROM t_dict AS d",
		"SELECT label FROM t_dict",
		"INSERT INTO t_plain (v) VALUES ('y')",
		"SELECT COUNT(*) FROM t_plain AS p",
		"UNLOCK TABLES",
		"LOCK TABLES t_order READ, t_order AS o READ",
		"SELECT COUNT(*) FROM t_order",
		"SELECT o.status FROM t_order o WHERE o.order_id = 2",
		"LOCK TABLES t_order AS o WRITE",
		"UPDATE t_order AS o SET o.status = 'w' WHERE o.order_id IN (1, 2)",
		"SELECT o.order_id, o.status FROM t_order AS o ORDER BY o.order_id",
		"LOCK TABLES t_order AS o READ, t_dict AS o READ",
		"UNLOCK TABLES",
		"SELECT order_id, status FROM t_order ORDER BY order_id",
	} {
		got, gerr := columnsAndRows(proxy, q)
		want, werr := columnsAndRows(ref, q)
		gm, wm := "", ""
		if gerr != nil {
			gm = gerr.Error()
		}
		if werr != nil {
			wm = strings.ReplaceAll(werr.Error(), "lockalias_ref", "sharding_db")
		}
		if gm != wm || !slices.Equal(got, want) {
			t.Errorf("%s:\nproxy   %q %s\nMariaDB %q %s", q, got, gm, want, wm)
		}
	}
	// Two data nodes of t_order on each data source: refused, clearly.
	e2 := startEnv(t, envOptions{})
	createTables(t, e2)
	c := e2.conn(t)
	if _, err := c.ExecContext(ctx, "LOCK TABLES t_order AS o READ"); errCode(err) != 1235 {
		t.Errorf("LOCK TABLES t_order AS o over two data nodes of one data source: %v, want 1235", err)
	}
	if _, err := c.ExecContext(ctx, "LOCK TABLES t_dict AS d READ"); err != nil {
		t.Errorf("LOCK TABLES t_dict AS d after the 1235: %v", err)
	}
	if got := queryStrings(t, c, "SELECT COUNT(*) FROM t_dict AS d"); !slices.Equal(got, []string{"0"}) {
		t.Errorf("SELECT under the alias: %q", got)
	}
	mustExec(t, c, "UNLOCK TABLES")
}
