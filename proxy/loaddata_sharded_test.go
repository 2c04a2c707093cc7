package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// loadRules shard t_ld over two data sources and two tables each, by
// user_id and id, with a Snowflake key on id; t_dict is broadcast.
const loadRules = `  - !SHARDING
    tables:
      t_ld:
        actualDataNodes: ds_${0..1}.t_ld_${0..1}
        databaseStrategy:
          standard: { shardingColumn: user_id, shardingAlgorithmName: db_mod }
        tableStrategy:
          standard: { shardingColumn: id, shardingAlgorithmName: t_mod }
        keyGenerateStrategy: { column: id, keyGeneratorName: snowflake }
    shardingAlgorithms:
      db_mod: { type: INLINE, props: { algorithm-expression: "ds_${user_id % 2}" } }
      t_mod:  { type: INLINE, props: { algorithm-expression: "t_ld_${id % 2}" } }
    keyGenerators:
      snowflake: { type: SNOWFLAKE, props: { worker-id: 1 } }
  - !BROADCAST
    tables: [t_dict]
`

// loadTable is t_ld's definition; the reference's id is AUTO_INCREMENT,
// standing for the proxy's generated key.
const loadTable = "(id BIGINT NOT NULL%s PRIMARY KEY, user_id INT NOT NULL, name VARCHAR(8), n INT, d DATE, note TEXT)"

var loadReaderSeq atomic.Int64

// loadReader registers content with the driver and returns the name a
// LOAD DATA LOCAL INFILE statement gives for it.
func loadReader(t *testing.T, content string) string {
	t.Helper()
	name := fmt.Sprintf("ld%d", loadReaderSeq.Add(1))
	mysql.RegisterReaderHandler(name, func() io.Reader { return strings.NewReader(content) })
	t.Cleanup(func() { mysql.DeregisterReaderHandler(name) })
	return "Reader::" + name
}

// loadResult is what a LOAD DATA did: the affected rows, SHOW WARNINGS,
// and the table's rows afterwards.
type loadResult struct {
	affected int64
	err      string
	warnings []string
	rows     []string
}

// runLoad runs stmt (with {FILE} for the file's name) on c and reads back
// what it did; cols are the columns compared.
func runLoad(t *testing.T, c *sql.Conn, stmt, file, cols string) loadResult {
	t.Helper()
	ctx := context.Background()
	var r loadResult
	res, err := c.ExecContext(ctx, strings.Replace(stmt, "{FILE}", "'"+file+"'", 1))
	if err != nil {
		r.err = fmt.Sprint(errCode(err))
	} else {
		r.affected, _ = res.RowsAffected()
	}
	r.warnings = queryStrings(t, c, "SHOW WARNINGS")
	r.warnings = append(r.warnings, queryStrings(t, c, "SELECT @@warning_count")...)
	r.rows = queryStrings(t, c, "SELECT "+cols+" FROM t_ld ORDER BY id")
	return r
}

type loadCase struct {
	name string
	stmt string // {FILE} stands for the file
	file string
	cols string // compared; default every column but id
}

var loadCases = []loadCase{
	{
		name: "default format",
		stmt: "LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld (user_id, name, n, d, note)",
		file: "1\talice\t10\t2024-01-02\tplain\n" +
			"2\t\\N\t\\N\t\\N\t\\N\n" +
			"3\tesc\\tx\t3\t2024-02-30\ta\\0b\\bc\\nd\\re\\tf\\Zg\\\\h\\Ni\n" +
			"4\tshort\n" +
			"5\textra\t5\t2024-01-05\tnote\tsurplus\tmore\n" +
			"6\n" +
			"\n" +
			"7\ttoolongname\tabc\t2024-13-01\t\\N\n" +
			"8\ttrailing\t8\t2024-01-08\tend\\\n" +
			"9\tNULL\t9\t\tlast",
	},
	{
		name: "csv",
		stmt: "LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' LINES TERMINATED BY '\\r\\n' IGNORE 1 LINES (user_id, name, n, note)",
		file: "user_id,name,n,note\r\n" +
			"1,\"a,b\",1,\"say \"\"hi\"\"\"\r\n" +
			"2,NULL,\"NULL\",\"line\r\nbreak\"\r\n" +
			"3,\"x\"y,3,\"a\"b\"\r\n" +
			"4,\"\\N\",4,\\N\r\n" +
			"5,,,\r\n" +
			"6,\"open,6,\"unterminated",
	},
	{
		name: "lines starting by",
		stmt: "LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld FIELDS TERMINATED BY ',' LINES STARTING BY 'xxx' (user_id, name)",
		file: "xxx1,a\nsomething xxx2,b\n3,c\nyyy xxx4,d\n5,e xxx6,f\n",
	},
	{
		name: "long terminators",
		stmt: "LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld FIELDS TERMINATED BY '||' ENCLOSED BY '\\'' LINES TERMINATED BY '##\\n' (user_id, name, note)",
		file: "1||a|b||'x||y'##\n2||#||'#'##\n3||c||d##e##\n4||'q''s'||z",
	},
	{
		name: "no escape, quote as escape",
		stmt: "LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld FIELDS TERMINATED BY ',' ENCLOSED BY '\"' ESCAPED BY '\"' (user_id, name, note)",
		file: "1,\"fie\"\"ld\",\\N\n2,plain\\n,\"a\"\"\"\n",
	},
	{
		name: "escaped by nothing",
		stmt: "LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld FIELDS ESCAPED BY '' (user_id, name, note)",
		file: "1\ta\\tb\t\\N\n2\t\\\t\\\\\n",
	},
	{
		name: "user variables and SET",
		stmt: "LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld FIELDS TERMINATED BY ',' (@u, @nm, n) SET user_id = @u, name = UPPER(@nm), note = CONCAT(@nm, '/', @u)",
		file: "1,alice,1\n2,bob,x\n3,carol\n",
	},
	{
		name: "SET a constant sharding value",
		stmt: "LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld FIELDS TERMINATED BY ',' (name, @skip, n) SET user_id = 7",
		file: "a,zz,1\nb,zz,2\nc\n",
	},
	{
		name: "ignore rows and character set",
		stmt: "LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld CHARACTER SET latin1 FIELDS TERMINATED BY ';' IGNORE 2 ROWS (user_id, name)",
		file: "h1\nh2;with\\\nescaped newline\n1;caf\xe9\n2;na\xefve\n",
	},
	{
		// 0x81 0x5c is one character in gbk; its second byte is the
		// escape.
		name: "multi-byte character set",
		stmt: "LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld CHARACTER SET gbk FIELDS TERMINATED BY ',' (user_id, name, note)",
		file: "1,\x95\x5c,x\x95\x5c\n2,a\\,b\n",
	},
	{
		name: "key in the file",
		stmt: "LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld FIELDS TERMINATED BY ',' (id, user_id, name)",
		file: "10,1,a\n11,2,b\n10,3,dup\n12,4,c\n",
		cols: "id, user_id, name",
	},
	{
		name: "replace",
		stmt: "LOAD DATA LOCAL INFILE {FILE} REPLACE INTO TABLE t_ld FIELDS TERMINATED BY ',' (id, user_id, name)",
		file: "10,1,a\n11,1,b\n10,1,new\n11,1,newer\n",
		cols: "id, user_id, name",
	},
	{
		name: "ignore",
		stmt: "LOAD DATA LOCAL INFILE {FILE} IGNORE INTO TABLE t_ld FIELDS TERMINATED BY ',' (id, user_id, name)",
		file: "20,1,a\n20,1,b\n21,2,c\n",
		cols: "id, user_id, name",
	},
	{
		name: "no column list",
		stmt: "LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld FIELDS TERMINATED BY ','",
		file: "30,1,a,1,2024-01-01,x\n31,2,b\n32,3,c,3,2024-01-03,y,extra\n",
		cols: "id, user_id, name, n, d, note",
	},
	{
		name: "empty file",
		stmt: "LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld (user_id, name)",
		file: "",
	},
}

// TestLoadDataShardedMatchesMariaDB runs each LOAD DATA LOCAL INFILE of
// the matrix (formats, IGNORE, column lists, @variables, SET, REPLACE,
// IGNORE, conversions and their warnings) into sharded table t_ld through
// the proxy and into the same table on one MariaDB, and compares the
// affected rows, SHOW WARNINGS and the rows; then checks that every row
// is on the physical table its sharding values route it to.
func TestLoadDataShardedMatchesMariaDB(t *testing.T) {
	e := startEnv(t, envOptions{rules: loadRules})
	proxy, err := e.open(t, "allowAllFiles=true").Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS ldref_sharded", "CREATE DATABASE ldref_sharded")
	refDB, err := sql.Open("mysql", e.backends[0].DSN("ldref_sharded")+"&allowAllFiles=true")
	if err != nil {
		t.Fatal(err)
	}
	defer refDB.Close()
	ref, err := refDB.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	ctx := context.Background()
	// Several batches per data node, and more warnings than MariaDB keeps
	// (max_error_count): SHOW WARNINGS lists the first ones by row.
	var many strings.Builder
	for i := range 30000 {
		switch {
		case i%997 == 0:
			fmt.Fprintf(&many, "%d\tbad\tx%d\n", i, i)
		case i%13 == 0:
			fmt.Fprintf(&many, "%d\n", i)
		default:
			fmt.Fprintf(&many, "%d\tname%d\t%d\tsome text to fill the batches\n", i, i%1000, i)
		}
	}
	cases := append(slices.Clip(loadCases), loadCase{
		name: "many batches and warnings",
		stmt: "LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld (user_id, name, n, note)",
		file: many.String(),
	})
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			for _, q := range []string{"DROP TABLE IF EXISTS t_ld", "CREATE TABLE t_ld " + fmt.Sprintf(loadTable, "")} {
				if _, err := proxy.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			for _, q := range []string{"DROP TABLE IF EXISTS t_ld", "CREATE TABLE t_ld " + fmt.Sprintf(loadTable, " AUTO_INCREMENT")} {
				if _, err := ref.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			cols := tt.cols
			if cols == "" {
				cols = "user_id, name, n, d, HEX(note)"
			}
			file := loadReader(t, tt.file)
			got := runLoad(t, proxy, tt.stmt, file, cols)
			want := runLoad(t, ref, tt.stmt, file, cols)
			for i, w := range want.warnings {
				want.warnings[i] = strings.ReplaceAll(w, "`ldref_sharded`.", "`sharding_db`.")
			}
			t.Logf("MariaDB: %d affected, %d warnings, %d rows", want.affected, len(want.warnings), len(want.rows))
			if got.err != want.err || got.affected != want.affected {
				t.Errorf("proxy: error %q, %d rows; MariaDB: error %q, %d rows", got.err, got.affected, want.err, want.affected)
			}
			if !slices.Equal(got.warnings, want.warnings) {
				t.Errorf("warnings differ:\nproxy:   %q\nMariaDB: %q", got.warnings, want.warnings)
			}
			if !slices.Equal(got.rows, want.rows) {
				t.Errorf("rows differ:\nproxy:   %q\nMariaDB: %q", got.rows, want.rows)
			}
			checkLoadPlacement(t, e)
		})
	}
}

// checkLoadPlacement reads every physical table of t_ld directly and
// checks that each row is where its sharding values route it.
func checkLoadPlacement(t *testing.T, e *testEnv) {
	t.Helper()
	for ds := range 2 {
		for tb := range 2 {
			for _, r := range queryStrings(t, e.backend(t, ds), fmt.Sprintf("SELECT id, user_id FROM t_ld_%d", tb)) {
				var id, user int64
				if _, err := fmt.Sscanf(r, "%d,%d", &id, &user); err != nil {
					t.Fatalf("row %q: %v", r, err)
				}
				if int(user%2) != ds || int(id%2) != tb {
					t.Errorf("row id=%d user_id=%d is on ds_%d.t_ld_%d", id, user, ds, tb)
				}
			}
		}
	}
}

// loadCount counts t_ld's rows on every physical table directly.
func loadCount(t *testing.T, e *testEnv) (total int, per []string) {
	t.Helper()
	for ds := range 2 {
		for tb := range 2 {
			n := queryStrings(t, e.backend(t, ds), fmt.Sprintf("SELECT COUNT(*) FROM t_ld_%d", tb))[0]
			per = append(per, fmt.Sprintf("ds_%d.t_ld_%d:%s", ds, tb, n))
			var k int
			fmt.Sscan(n, &k)
			total += k
		}
	}
	return total, per
}

func loadFile(rows int, row func(i int) string) string {
	var b strings.Builder
	for i := range rows {
		b.WriteString(row(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// TestLoadDataShardedKeysAtomic: rows without their key get consecutive
// generated keys (LAST_INSERT_ID is the first) and land where the keys
// route them; a load that fails on one data node (its physical table is
// gone), or at a row the proxy cannot place after batches went out,
// leaves nothing on any; inside a transaction the load is part of it
// (ROLLBACK undoes it, a failed load undoes only itself); statements the
// proxy cannot route are refused before the file is asked for; and the
// connection stays usable after each.
func TestLoadDataShardedKeysAtomic(t *testing.T) {
	e := startEnv(t, envOptions{rules: loadRules})
	ctx := context.Background()
	db := e.open(t, "allowAllFiles=true")
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := c.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	usable := func() {
		t.Helper()
		if got := queryStrings(t, c, "SELECT 1"); !slices.Equal(got, []string{"1"}) {
			t.Fatalf("connection after the load: %q", got)
		}
	}
	reset := func() {
		t.Helper()
		exec("DROP TABLE IF EXISTS t_ld")
		exec("CREATE TABLE t_ld " + fmt.Sprintf(loadTable, ""))
	}
	load := func(stmt, content string) (int64, error) {
		t.Helper()
		res, err := c.ExecContext(ctx, strings.Replace(stmt, "{FILE}", "'"+loadReader(t, content)+"'", 1))
		if err != nil {
			return 0, err
		}
		return res.RowsAffected()
	}
	const plain = "LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld FIELDS TERMINATED BY ',' (user_id, name, note)"
	padded := func(i int) string { return fmt.Sprintf("%d,n%d,%s", i, i, strings.Repeat("p", 60)) }

	t.Run("keys", func(t *testing.T) {
		reset()
		n, err := load(plain, loadFile(5000, padded))
		if err != nil || n != 5000 {
			t.Fatalf("load: %d rows, %v", n, err)
		}
		ids := queryStrings(t, c, "SELECT id FROM t_ld ORDER BY id")
		if len(ids) != 5000 || slices.Contains(ids, "0") {
			t.Fatalf("%d ids, first %q", len(ids), ids[:min(3, len(ids))])
		}
		if got := queryStrings(t, c, "SELECT LAST_INSERT_ID()"); !slices.Equal(got, ids[:1]) {
			t.Errorf("LAST_INSERT_ID() = %q, want the first key %s", got, ids[0])
		}
		// Keys in the file's order: the rows read back by key are the
		// file's rows in order.
		names := queryStrings(t, c, "SELECT user_id FROM t_ld ORDER BY id")
		for i, u := range names {
			if u != fmt.Sprint(i) {
				t.Fatalf("row %d by key is user_id %s", i, u)
			}
		}
		checkLoadPlacement(t, e)
		total, per := loadCount(t, e)
		// The keys route rows to both tables (t_ld_${id % 2}), not
		// necessarily to every data node: LOAD DATA takes its keys in
		// blocks of consecutive ids (NextN, up to one millisecond's
		// sequence), so within a block they alternate in parity with the
		// file's rows, as user_id % 2 (the data source) does; when the
		// blocks' random starts line up, each data source's keys share
		// one parity and fill one of its tables (2 of 9 runs here:
		// ds_0.t_ld_0 and ds_1.t_ld_1 held all 5000 rows).
		tables := map[string]bool{}
		for _, p := range per {
			if !strings.HasSuffix(p, ":0") {
				tables[p[strings.Index(p, ".")+1:strings.LastIndex(p, ":")]] = true
			}
		}
		if len(tables) != 2 {
			t.Errorf("rows on tables %v only (%v), want both t_ld_0 and t_ld_1", tables, per)
		}
		if total != 5000 {
			t.Errorf("%d rows on the physical tables", total)
		}
	})

	// A 0 in an AUTO_INCREMENT key column gets a generated key, as
	// MariaDB's LOAD DATA gives it the next value (mysqldump's files set
	// NO_AUTO_VALUE_ON_ZERO, which keeps the 0); a key column without
	// AUTO_INCREMENT keeps it either way.
	t.Run("a 0 key", func(t *testing.T) {
		const withKeys = "LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld FIELDS TERMINATED BY ',' (id, user_id, name)"
		content := "0,1,zero\n\\N,2,null\n7,3,seven\n"
		for _, tt := range []struct {
			name, table, mode string
			zeros             int
		}{
			{"AUTO_INCREMENT", " AUTO_INCREMENT", "", 0},
			{"NO_AUTO_VALUE_ON_ZERO", " AUTO_INCREMENT", "NO_AUTO_VALUE_ON_ZERO", 1},
			{"no AUTO_INCREMENT", "", "", 1},
		} {
			exec("DROP TABLE IF EXISTS t_ld")
			exec("CREATE TABLE t_ld " + fmt.Sprintf(loadTable, tt.table))
			exec("SET SESSION sql_mode = '" + tt.mode + "'")
			n, err := load(withKeys, content)
			exec("SET SESSION sql_mode = DEFAULT")
			if err != nil || n != 3 {
				t.Fatalf("%s: %d rows, %v", tt.name, n, err)
			}
			if got := queryStrings(t, c, "SELECT COUNT(*) FROM t_ld WHERE id = 0"); !slices.Equal(got, []string{fmt.Sprint(tt.zeros)}) {
				t.Errorf("%s: rows with key 0: %v, want %d", tt.name, got, tt.zeros)
			}
			if got := queryStrings(t, c, "SELECT name FROM t_ld WHERE id = 7"); !slices.Equal(got, []string{"seven"}) {
				t.Errorf("%s: key 7: %v", tt.name, got)
			}
			checkLoadPlacement(t, e)
		}
		reset()
	})

	t.Run("one data node fails", func(t *testing.T) {
		reset()
		e.backend(t, 1).Exec("DROP TABLE t_ld_1")
		_, err := load(plain, loadFile(20000, padded))
		if errCode(err) != 1146 {
			t.Errorf("load with a physical table gone: %v, want 1146", err)
		}
		usable()
		e.backend(t, 1).Exec("CREATE TABLE t_ld_1 " + fmt.Sprintf(loadTable, ""))
		if total, per := loadCount(t, e); total != 0 {
			t.Errorf("rows left after the failed load: %v", per)
		}
	})

	t.Run("a row that belongs nowhere", func(t *testing.T) {
		reset()
		content := loadFile(40000, func(i int) string {
			if i == 35000 {
				return "\\N,null user"
			}
			return padded(i)
		})
		_, err := load(plain, content)
		if errCode(err) != 1048 || !strings.Contains(err.Error(), "row 35001") {
			t.Errorf("load with a NULL sharding value: %v, want 1048 naming row 35001", err)
		}
		usable()
		if total, per := loadCount(t, e); total != 0 {
			t.Errorf("rows left after the failed load: %v", per)
		}
	})

	t.Run("transaction", func(t *testing.T) {
		reset()
		exec("BEGIN")
		if n, err := load(plain, loadFile(100, padded)); err != nil || n != 100 {
			t.Fatalf("load in a transaction: %d, %v", n, err)
		}
		if got := queryStrings(t, c, "SELECT COUNT(*) FROM t_ld"); !slices.Equal(got, []string{"100"}) {
			t.Errorf("inside the transaction: %q", got)
		}
		exec("ROLLBACK")
		if total, per := loadCount(t, e); total != 0 {
			t.Errorf("rows left after ROLLBACK: %v", per)
		}
		exec("BEGIN")
		exec("INSERT INTO t_ld (user_id, name) VALUES (1, 'kept')")
		if _, err := load(plain, "2,a\n\\N,b\n"); errCode(err) != 1048 {
			t.Errorf("failing load in a transaction: %v, want 1048", err)
		}
		if n, err := load(plain, "3,c\n4,d\n"); err != nil || n != 2 {
			t.Errorf("load after the failed one: %d, %v", n, err)
		}
		exec("COMMIT")
		if got := queryStrings(t, c, "SELECT name FROM t_ld ORDER BY name"); !slices.Equal(got, []string{"c", "d", "kept"}) {
			t.Errorf("after COMMIT: %q", got)
		}
	})

	t.Run("refused before the file", func(t *testing.T) {
		reset()
		for _, tt := range []struct{ stmt, want string }{
			{"LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld (@u, name) SET user_id = @u + 1", "SET user_id"},
			{"LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld (name, note)", "sharding column user_id"},
			{"LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld FIELDS TERMINATED BY '' (user_id, name)", "fixed-width"},
			{"LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_ld LINES TERMINATED BY '' (user_id, name)", "LINES TERMINATED BY ''"},
		} {
			var asked atomic.Bool
			name := fmt.Sprintf("refused%d", loadReaderSeq.Add(1))
			mysql.RegisterReaderHandler(name, func() io.Reader { asked.Store(true); return strings.NewReader("1,a\n") })
			_, err := c.ExecContext(ctx, strings.Replace(tt.stmt, "{FILE}", "'Reader::"+name+"'", 1))
			mysql.DeregisterReaderHandler(name)
			if errCode(err) != 1235 || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: %v, want 1235 naming %q", tt.stmt, err, tt.want)
			}
			if asked.Load() {
				t.Errorf("%s: the file was asked for", tt.stmt)
			}
			usable()
		}
	})

	t.Run("client refuses the file", func(t *testing.T) {
		reset()
		other := e.conn(t) // without allowAllFiles
		if _, err := other.ExecContext(ctx, "LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE t_ld (user_id, name)"); err == nil {
			t.Errorf("a client that may not send the file loaded it")
		}
		if got := queryStrings(t, other, "SELECT COUNT(*) FROM t_ld"); !slices.Equal(got, []string{"0"}) {
			t.Errorf("rows after the refused file: %q", got)
		}
	})

	t.Run("broadcast", func(t *testing.T) {
		exec("DROP TABLE IF EXISTS t_dict")
		exec("CREATE TABLE t_dict (code VARCHAR(16) PRIMARY KEY, label VARCHAR(4))")
		n, err := load("LOAD DATA LOCAL INFILE {FILE} INTO TABLE sharding_db.t_dict FIELDS TERMINATED BY ',' IGNORE 1 LINES", "code,label\na,alpha\nb,be\nc\n")
		if err != nil || n != 3 {
			t.Fatalf("broadcast load: %d, %v", n, err)
		}
		warnings := queryStrings(t, c, "SHOW WARNINGS")
		if len(warnings) != 2 {
			t.Errorf("warnings: %q, want 1265 for alpha and 1261 for c", warnings)
		}
		for i := range e.backends {
			if got := queryStrings(t, e.backend(t, i), "SELECT code, label FROM t_dict ORDER BY code"); !slices.Equal(got, []string{"a,alph", "b,be", "c,NULL"}) {
				t.Errorf("ds_%d: %q", i, got)
			}
		}
		// One copy gone: the load fails and the others keep what they had.
		e.backend(t, 1).Exec("DROP TABLE t_dict")
		if _, err := load("LOAD DATA LOCAL INFILE {FILE} INTO TABLE t_dict FIELDS TERMINATED BY ','", "d,de\n"); errCode(err) != 1146 {
			t.Errorf("broadcast load with a copy gone: %v, want 1146", err)
		}
		usable()
		if got := queryStrings(t, e.backend(t, 0), "SELECT code FROM t_dict ORDER BY code"); !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Errorf("ds_0 after the failed load: %q", got)
		}
	})
}

// blockingReader gives head, then blocks until release is closed.
type blockingReader struct {
	head    io.Reader
	sent    chan struct{}
	release chan struct{}
}

func (r *blockingReader) Read(p []byte) (int, error) {
	n, err := r.head.Read(p)
	if err == io.EOF {
		select {
		case <-r.sent:
		default:
			close(r.sent)
		}
		<-r.release
		return 0, io.ErrUnexpectedEOF
	}
	return n, err
}

// TestLoadDataShardedClientGone: a client that goes away in the middle
// of its file (the driver closes the connection of a cancelled
// statement) leaves nothing on any data node, though whole batches had
// been loaded.
func TestLoadDataShardedClientGone(t *testing.T) {
	e := startEnv(t, envOptions{rules: loadRules})
	db := e.open(t, "allowAllFiles=true")
	for _, q := range []string{"DROP TABLE IF EXISTS t_ld", "CREATE TABLE t_ld " + fmt.Sprintf(loadTable, "")} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	r := &blockingReader{
		head:    strings.NewReader(loadFile(20000, func(i int) string { return fmt.Sprintf("%d,n%d,%s", i, i, strings.Repeat("p", 60)) })),
		sent:    make(chan struct{}),
		release: make(chan struct{}),
	}
	mysql.RegisterReaderHandler("gone", func() io.Reader { return r })
	defer mysql.DeregisterReaderHandler("gone")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := db.ExecContext(ctx, "LOAD DATA LOCAL INFILE 'Reader::gone' INTO TABLE t_ld FIELDS TERMINATED BY ',' (user_id, name, note)")
		done <- err
	}()
	<-r.sent
	// Whole batches have gone out: the proxy's transactions hold rows.
	trx := func() string {
		return queryStrings(t, e.backend(t, 0), "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_rows_modified > 0")[0]
	}
	// InnoDB refreshes INNODB_TRX only after it went unread for 100 ms:
	// polled faster, it answers the same forever.
	const trxPoll = 150 * time.Millisecond
	for deadline := time.Now().Add(60 * time.Second); trx() == "0"; time.Sleep(trxPoll) {
		if time.Now().After(deadline) {
			t.Fatalf("no transaction on ds_0 holds rows of the load: %q %q", queryStrings(t, e.backend(t, 0), "SELECT trx_state, trx_rows_modified, trx_query FROM information_schema.INNODB_TRX"), queryStrings(t, e.backend(t, 0), "SELECT COMMAND, STATE, LEFT(INFO, 60) FROM information_schema.PROCESSLIST"))
		}
	}
	// The driver closes the connection of the cancelled statement; the
	// proxy rolls back when it sees the client go.
	cancel()
	for deadline := time.Now().Add(60 * time.Second); trx() != "0"; time.Sleep(trxPoll) {
		if time.Now().After(deadline) {
			t.Fatalf("the load's transactions are still open after the client went away")
		}
	}
	close(r.release)
	if err := <-done; err == nil {
		t.Fatal("the cancelled load succeeded")
	}
	if total, per := loadCount(t, e); total != 0 {
		t.Errorf("rows after the client went away: %v", per)
	}
	if got := queryStrings(t, db, "SELECT COUNT(*) FROM t_ld"); !slices.Equal(got, []string{"0"}) {
		t.Errorf("through the proxy: %q", got)
	}
}
