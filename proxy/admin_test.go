package proxy

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/ with the results of this run")

func TestMatchAdmin(t *testing.T) {
	tests := []struct {
		give    string
		want    adminStmt
		notOurs bool   // the parser gets it
		wantErr string // a 1064 near this text
	}{
		{give: "PREVIEW SELECT 1", want: adminStmt{kind: adminPreview, body: "SELECT 1"}},
		{give: "  /* a comment */ preview\n\tSELECT * FROM t_order ; ", want: adminStmt{kind: adminPreview, body: "SELECT * FROM t_order ;"}},
		{give: "-- line comment\nShow Sharding Table Rules", want: adminStmt{kind: adminTableRules}},
		{give: "# hash comment\nSHOW SHARDING TABLE RULES FROM sharding_db;", want: adminStmt{kind: adminTableRules, db: "sharding_db"}},
		{give: "SHOW SHARDING TABLE RULE t_order", want: adminStmt{kind: adminTableRule, table: "t_order"}},
		{give: "SHOW SHARDING TABLE RULE `odd``name` FROM `sharding_db`", want: adminStmt{kind: adminTableRule, table: "odd`name", db: "sharding_db"}},
		{give: "SHOW SHARDING TABLE NODES", want: adminStmt{kind: adminTableNodes}},
		{give: "SHOW SHARDING TABLE NODES t_order", want: adminStmt{kind: adminTableNodes, table: "t_order"}},
		{give: "SHOW SHARDING TABLE NODES FROM sharding_db", want: adminStmt{kind: adminTableNodes, db: "sharding_db"}},
		{give: "SHOW SHARDING TABLE NODES `from`", want: adminStmt{kind: adminTableNodes, table: "from"}},
		{give: "SHOW SHARDING ALGORITHMS", want: adminStmt{kind: adminAlgorithms}},
		{give: "SHOW SHARDING KEY GENERATORS", want: adminStmt{kind: adminKeyGenerators}},
		{give: "show key generators", want: adminStmt{kind: adminKeyGenerators}},
		{give: "SHOW BROADCAST TABLE RULES", want: adminStmt{kind: adminBroadcastRules}},
		{give: "SHOW STORAGE UNITS /* trailing */", want: adminStmt{kind: adminStorageUnits}},
		{give: "SHOW STORAGE UNITS FROM sharding_db -- trailing", want: adminStmt{kind: adminStorageUnits, db: "sharding_db"}},
		{give: "ADOPT SHARDING KEY GENERATOR FOR TABLE t_order;", want: adminStmt{kind: adminAdoptKeys, table: "t_order"}},
		{give: "adopt sharding key generator for `t``x`", want: adminStmt{kind: adminAdoptKeys, table: "t`x"}},
		{give: "ADOPT SHARDING KEY GENERATOR t_order", wantErr: "t_order"},
		{give: "ADOPT SHARDING KEY GENERATOR FOR t_order t_item", wantErr: "t_item"},
		{give: "ADOPTS t_order", notOurs: true},

		{give: "SELECT 'PREVIEW SELECT 1'", notOurs: true},
		{give: "'SHOW SHARDING TABLE RULES'", notOurs: true},
		{give: "`PREVIEW` SELECT 1", notOurs: true},
		{give: "PREVIEWS", notOurs: true},
		{give: "SHOW TABLES", notOurs: true},
		{give: "SHOW STORAGE ENGINES", notOurs: true},
		{give: "SHOW KEYS FROM t_order", notOurs: true},
		{give: "SHOW KEY", notOurs: true},
		{give: "/*!40101 PREVIEW SELECT 1 */", notOurs: true},
		{give: "/*M!100000 PREVIEW SELECT 1 */", notOurs: true},
		{give: "/* unterminated PREVIEW SELECT 1", notOurs: true},
		{give: "--PREVIEW SELECT 1", notOurs: true},
		{give: "", notOurs: true},
		{give: " \n ", notOurs: true},
		{give: "SELECT 1 -- SHOW SHARDING TABLE RULES", notOurs: true},

		{give: "PREVIEW", wantErr: "near '' at line 1"},
		{give: "PREVIEW ;", wantErr: "PREVIEW needs a statement"},
		{give: "SHOW SHARDING TABLES", wantErr: "near 'TABLES'"},
		{give: "SHOW SHARDING TABLE RULE", wantErr: "needs a table name"},
		{give: "SHOW SHARDING TABLE RULE 't_order'", wantErr: "needs a table name"},
		{give: "SHOW SHARDING TABLE RULES extra", wantErr: "near 'extra'"},
		{give: "SHOW SHARDING TABLE RULES FROM", wantErr: "FROM needs a database name"},
		{give: "SHOW STORAGE UNITS; SELECT 1", wantErr: "near 'SELECT 1'"},
		{give: "SHOW BROADCAST TABLES", wantErr: "near 'TABLES'"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			got, ok, err := matchAdmin(tt.give)
			if tt.notOurs {
				if ok {
					t.Fatalf("matched %+v (err %v), want it left to the parser", got, err)
				}
				return
			}
			if !ok {
				t.Fatal("not matched")
			}
			if tt.wantErr != "" {
				if err == nil || mysqlError(err).Code != 1064 || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want a 1064 containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// FuzzMatchAdmin: the matcher never panics, never claims a statement that
// starts with a string literal, and whatever it claims it either
// understands or answers with a 1064.
func FuzzMatchAdmin(f *testing.F) {
	for _, s := range []string{"PREVIEW SELECT 1", "SHOW SHARDING TABLE RULE `a``b` FROM db;", "/* x */ SHOW STORAGE UNITS", "SHOW KEY GENERATORS", "'PREVIEW'", "-- \nSHOW SHARDING TABLE NODES t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		st, ok, err := matchAdmin(sql)
		trimmed := strings.TrimLeft(sql, " \t\r\n")
		if ok && (strings.HasPrefix(trimmed, "'") || strings.HasPrefix(trimmed, "\"")) {
			t.Fatalf("claimed a statement starting with a string: %q", sql)
		}
		if !ok {
			return
		}
		if err != nil {
			if mysqlError(err).Code != 1064 {
				t.Fatalf("%q: error %v is not a 1064", sql, err)
			}
			return
		}
		if st.kind < adminPreview || st.kind > adminAdoptKeys {
			t.Fatalf("%q: kind %d", sql, st.kind)
		}
	})
}

// adminCase is one golden admin statement: its result set or error.
type adminCase struct {
	Comment string      `json:"comment,omitempty"`
	Query   string      `json:"query"`
	Columns []string    `json:"columns,omitempty"`
	Rows    [][]*string `json:"rows,omitempty"`
	Error   string      `json:"error,omitempty"`
}

// TestAdminStatementsGolden runs testdata/admin_cases.json through the
// proxy in order, on one connection, and compares each result set (or
// error) with the file; -update rewrites it. Values that differ from run
// to run are checked, then masked (see maskAdmin). After every statement
// the connection must still answer.
func TestAdminStatementsGolden(t *testing.T) {
	path := filepath.Join("testdata", "admin_cases.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []adminCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	e := startOpsEnv(t, opsOptions{prefix: "admin"})
	e.createOrders(t)
	c := e.conn(t)
	ports := map[string]string{}
	for i, b := range e.backends {
		ports[fmt.Sprintf("ds_%d", i)] = strconv.Itoa(b.Port())
	}
	var got []adminCase
	for _, tc := range cases {
		res := adminCase{Comment: tc.Comment, Query: tc.Query}
		cols, rows, err := adminQuery(c, tc.Query)
		if err != nil {
			res.Error = fmt.Sprintf("%d: %s", errCode(err), mysqlMessage(err))
		} else {
			res.Columns, res.Rows = cols, rows
			if err := maskAdmin(ports, cols, rows); err != nil {
				t.Errorf("%s: %v", tc.Query, err)
			}
		}
		if err := c.PingContext(context.Background()); err != nil {
			t.Fatalf("after %s the connection is unusable: %v", tc.Query, err)
		}
		if !*update && !jsonEqual(t, res, tc) {
			want, _ := json.MarshalIndent(tc, "", "  ")
			have, _ := json.MarshalIndent(res, "", "  ")
			t.Errorf("%s:\nwant %s\n got %s", tc.Query, want, have)
		}
		got = append(got, res)
	}
	if *update {
		var out bytes.Buffer
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(got); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func jsonEqual(t *testing.T, a, b adminCase) bool {
	t.Helper()
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	return string(x) == string(y)
}

// adminQuery runs q and returns its columns and rows as strings (nil
// for NULL).
func adminQuery(c *sql.Conn, q string) ([]string, [][]*string, error) {
	rows, err := c.QueryContext(context.Background(), q)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	var out [][]*string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		row := make([]*string, len(cols))
		for i, v := range vals {
			if v.Valid {
				s := v.String
				row[i] = &s
			}
		}
		out = append(out, row)
	}
	return cols, out, rows.Err()
}

// mysqlMessage is the message of a MySQL error, without the driver's
// prefix.
func mysqlMessage(err error) string {
	var me *gomysql.MySQLError
	if asMySQL(err, &me) {
		return me.Message
	}
	return err.Error()
}

// generatedKey matches a Snowflake id in SQL: no other literal in the
// golden cases has 15 digits or more.
var generatedKey = regexp.MustCompile(`\b[0-9]{15,}\b`)

// keyedTable is the physical table of t_order, which the key selects.
var keyedTable = regexp.MustCompile("`t_order_[0-9]+`")

// maskAdmin checks the values that differ from run to run and replaces
// them with a placeholder naming what they are.
func maskAdmin(ports map[string]string, cols []string, rows [][]*string) error {
	for _, row := range rows {
		for i, col := range cols {
			v := row[i]
			if v == nil {
				continue
			}
			switch col {
			case "port":
				if want := ports[*row[0]]; *v != want {
					return fmt.Errorf("port of %s is %s, want %s", *row[0], *v, want)
				}
				*v = "<port>"
			case "open_connections", "in_use_connections", "idle_connections", "waiting_connections", "lead_ms", "waited_ms":
				if n, err := strconv.Atoi(*v); err != nil || n < 0 {
					return fmt.Errorf("%s = %q, want a count", col, *v)
				}
				*v = "<n>"
			case "last_id":
				if n, err := strconv.ParseInt(*v, 10, 64); err != nil || n <= 0 {
					return fmt.Errorf("last_id = %q, want an id", *v)
				}
				*v = "<id>"
			case "actual_sql":
				// The physical table follows the generated key.
				if generatedKey.MatchString(*v) {
					*v = keyedTable.ReplaceAllString(*v, "`t_order_<key % 2>`")
				}
				*v = generatedKey.ReplaceAllString(*v, "<key>")
			}
		}
	}
	return nil
}

// TestPreviewShowsTheKeysThatRoute checks PREVIEW of an INSERT without
// its key: each row gets the next key from the generator, and the route
// is the data node that key and the user id select.
func TestPreviewShowsTheKeysThatRoute(t *testing.T) {
	e := startOpsEnv(t, opsOptions{prefix: "admin"})
	c := e.conn(t)
	_, before, err := adminQuery(c, "SHOW SHARDING KEY GENERATORS")
	if err != nil {
		t.Fatal(err)
	}
	_, rows, err := adminQuery(c, "PREVIEW INSERT INTO t_order (user_id, status) VALUES (10, 'a'), (11, 'b'), (12, 'c'), (13, 'd')")
	if err != nil {
		t.Fatal(err)
	}
	// Rows for the same data node share one route: read every VALUES
	// tuple of every route.
	tuple := regexp.MustCompile(`\((\d+),'[a-d]',(\d{15,})\)`)
	keyOf := map[int]int64{}
	for _, r := range rows {
		sql := *r[1]
		for _, m := range tuple.FindAllStringSubmatch(sql, -1) {
			user, _ := strconv.Atoi(m[1])
			k, _ := strconv.ParseInt(m[2], 10, 64)
			keyOf[user] = k
			wantDS, wantTable := fmt.Sprintf("ds_%d", user%2), fmt.Sprintf("INSERT INTO `t_order_%d`", k%2)
			if *r[0] != wantDS || !strings.HasPrefix(sql, wantTable) {
				t.Errorf("user %d, key %d routes to %s: %s; want %s, %s", user, k, *r[0], sql, wantDS, wantTable)
			}
		}
	}
	if len(keyOf) != 4 {
		t.Fatalf("keys for users %v, want 10..13: %v", keyOf, rows)
	}
	for user := 11; user <= 13; user++ {
		if keyOf[user] != keyOf[user-1]+1 {
			t.Errorf("keys %v are not consecutive in row order", keyOf)
		}
	}
	_, after, err := adminQuery(c, "SHOW SHARDING KEY GENERATORS")
	if err != nil {
		t.Fatal(err)
	}
	const generated, lastID = 10, 13
	g0, _ := strconv.Atoi(*before[0][generated])
	g1, _ := strconv.Atoi(*after[0][generated])
	if g1-g0 != 4 || after[0][lastID] == nil || *after[0][lastID] != strconv.FormatInt(keyOf[13], 10) {
		t.Errorf("generator moved from %d to %d ids, last id %v; want 4 more, last %d", g0, g1, after[0][lastID], keyOf[13])
	}
}
