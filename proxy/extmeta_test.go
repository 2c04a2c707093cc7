package proxy

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/internal/mariadbtest"
	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// byIDRules shards table by id over both data sources and two tables
// each: ds_${id % 2}.table_${id.intdiv(2) % 2}.
func byIDRules(table string) string {
	return strings.ReplaceAll(`  - !SHARDING
    tables:
      TABLE:
        actualDataNodes: ds_${0..1}.TABLE_${0..1}
        databaseStrategy:
          standard: { shardingColumn: id, shardingAlgorithmName: db_mod }
        tableStrategy:
          standard: { shardingColumn: id, shardingAlgorithmName: t_mod }
    shardingAlgorithms:
      db_mod: { type: INLINE, props: { algorithm-expression: "ds_${id % 2}" } }
      t_mod:  { type: INLINE, props: { algorithm-expression: "TABLE_${id.intdiv(2) % 2}" } }
`, "TABLE", table)
}

// extMetaRules shard t_meta over both data sources and two tables each.
var extMetaRules = byIDRules("t_meta")

// metaClient is a client that asks, or not, for MariaDB's extended
// column metadata and reads column definitions as they come. It sets the
// capability bits itself, byte by byte, rather than with the proxy's
// helpers under test: CLIENT_MYSQL (bit 0 of the capabilities) cleared
// and MARIADB_CLIENT_EXTENDED_METADATA (bit 3 of the 4 bytes at offset 28
// of the payload) set in go-mysql's handshake response.
type metaClient struct {
	c *client.Conn
}

type askExtended struct {
	net.Conn
	done bool
}

func (a *askExtended) Write(b []byte) (int, error) {
	if a.done || len(b) <= 4+32 {
		return a.Conn.Write(b)
	}
	a.done = true
	out := append([]byte(nil), b...)
	out[4] &^= 1
	out[4+28] |= 1 << 3
	if _, err := a.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

func dialMeta(t *testing.T, addr, user, password, db string, extended bool) *metaClient {
	t.Helper()
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		nc, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, address)
		if err != nil || !extended {
			return nc, err
		}
		return &askExtended{Conn: nc}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.ConnectWithDialer(ctx, "tcp", addr, user, password, db, dial, func(c *client.Conn) error {
		c.UnsetCapability(mysql.CLIENT_DEPRECATE_EOF)
		c.UnsetCapability(mysql.CLIENT_QUERY_ATTRIBUTES)
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &metaClient{c: c}
}

// columns runs sql (COM_QUERY, or COM_STMT_PREPARE when prepare) and
// returns its column definitions as they came, reading the rest of the
// response; for a prepare, params are its parameter definitions.
func (m *metaClient) columns(t *testing.T, sql string, prepare bool) [][]byte {
	cols, _ := m.response(t, sql, prepare)
	return cols
}

func (m *metaClient) response(t *testing.T, sql string, prepare bool) (cols, params [][]byte) {
	t.Helper()
	cmd := byte(mysql.COM_QUERY)
	if prepare {
		cmd = mysql.COM_STMT_PREPARE
	}
	m.c.ResetSequence()
	if err := m.c.WritePacket(append([]byte{0, 0, 0, 0, cmd}, sql...)); err != nil {
		t.Fatal(err)
	}
	read := func() []byte { return m.read(t, sql) }
	first := read()
	var defs [][]byte
	readDefs := func(n int) {
		for range n {
			defs = append(defs, read())
		}
		if n > 0 && !wire.IsEOF(read()) {
			t.Fatalf("%s: no EOF after %d definitions", sql, n)
		}
	}
	if prepare {
		ok, err := wire.ParsePrepareOK(first)
		if err != nil {
			t.Fatal(err)
		}
		readDefs(int(ok.Params))
		params, defs = defs, nil
		readDefs(int(ok.Columns))
		m.c.ResetSequence()
		m.c.WritePacket(append([]byte{0, 0, 0, 0, mysql.COM_STMT_CLOSE}, byte(ok.StmtID), byte(ok.StmtID>>8), byte(ok.StmtID>>16), byte(ok.StmtID>>24)))
		return defs, params
	}
	n, _, _, _ := wire.ReadLenEncInt(first)
	readDefs(int(n))
	for !wire.IsEOF(read()) {
	}
	return defs, nil
}

// read reads the next packet of sql's response; an error packet fails
// the test.
func (m *metaClient) read(t *testing.T, sql string) []byte {
	t.Helper()
	p, err := m.c.ReadPacket()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if wire.IsErr(p) {
		t.Fatalf("%s: %v", sql, wire.ParseErr(p))
	}
	return append([]byte(nil), p...)
}

// query runs sql as COM_QUERY and returns its column definitions and row
// packets as they came, and its EOF's warning count.
func (m *metaClient) query(t *testing.T, sql string) (defs, rows [][]byte, warnings uint16) {
	t.Helper()
	m.c.ResetSequence()
	if err := m.c.WritePacket(append([]byte{0, 0, 0, 0, mysql.COM_QUERY}, sql...)); err != nil {
		t.Fatal(err)
	}
	read := func() []byte { return m.read(t, sql) }
	n, _, _, _ := wire.ReadLenEncInt(read())
	for range n {
		defs = append(defs, read())
	}
	if !wire.IsEOF(read()) {
		t.Fatalf("%s: no EOF after %d definitions", sql, n)
	}
	for {
		p := read()
		if wire.IsEOF(p) {
			return defs, rows, uint16(p[1]) | uint16(p[2])<<8
		}
		rows = append(rows, p)
	}
}

// lenEncStrings splits the first k length-encoded strings off p.
func lenEncStrings(t *testing.T, p []byte, k int) ([][]byte, []byte) {
	t.Helper()
	var out [][]byte
	for range k {
		s, _, n, err := wire.ReadLenEncString(p)
		if err != nil {
			t.Fatalf("column definition %q: %v", p, err)
		}
		out, p = append(out, s), p[n:]
	}
	return out, p
}

// withSchema is column definition p naming schema in place of its own.
func withSchema(t *testing.T, p []byte, schema string) []byte {
	t.Helper()
	s, rest := lenEncStrings(t, p, 2)
	out := wire.AppendLenEncString(nil, s[0])
	out = wire.AppendLenEncString(out, []byte(schema))
	return append(out, rest...)
}

// sameDefinitions fails the test unless the column definitions got
// through the proxy are want, those MariaDB sent directly from database
// ref, byte for byte once ref reads sharding_db (the proxy's schema).
func sameDefinitions(t *testing.T, got, want [][]byte, ref string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d column definitions through the proxy, %d directly", len(got), len(want))
	}
	for i := range want {
		w := want[i]
		if s, _ := lenEncStrings(t, w, 2); string(s[1]) == ref {
			w = withSchema(t, w, "sharding_db")
		}
		if !bytes.Equal(got[i], w) {
			t.Errorf("definition %d:\nthrough the proxy %q\ndirectly          %q", i, got[i], w)
		}
	}
}

// extendedBlock is the extended metadata block of definition p as a
// client that negotiated it reads it (a lone 0x0c after org_name, where
// the block should be, reads as a 12-byte block and fails the test).
func extendedBlock(t *testing.T, p []byte) []byte {
	t.Helper()
	s, rest := lenEncStrings(t, p, 7)
	if len(rest) != 13 || rest[0] != 0x0c {
		t.Fatalf("column definition %q: %d bytes after the extended metadata block %q, want 0x0c and 12", p, len(rest), s[6])
	}
	return s[6]
}

// TestExtendedMetadataLikeMariaDB: a client that negotiates
// MARIADB_CLIENT_EXTENDED_METADATA (mysql2, Connector/J and Connector/Node
// do, and learn a JSON column or a UUID or INET6 one only from it) gets
// through the proxy the column definitions MariaDB sends it directly,
// extended metadata block and all, for a single route, a merged result
// over every data node, a tableless expression and a prepared statement;
// a client that does not gets them without the block, as from MariaDB. A
// definition the proxy makes itself carries an empty block for the one
// and none for the other.
func TestExtendedMetadataLikeMariaDB(t *testing.T) {
	e := startEnv(t, envOptions{rules: extMetaRules})
	ref := metaTables(t, e)

	queries := []struct {
		name    string
		sql     string
		prepare bool
	}{
		{name: "single route", sql: "SELECT id, j, u, ip, ip4, name FROM t_meta WHERE id = 3"},
		{name: "merged", sql: "SELECT id, j, u, ip, ip4, name FROM t_meta ORDER BY id"},
		{name: "expressions", sql: "SELECT JSON_OBJECT('a', 1) AS o, JSON_ARRAY(1, 2) AS a, 1 AS n"},
		{name: "prepared", sql: "SELECT j, u, name FROM t_meta WHERE id = ?", prepare: true},
	}
	for _, extended := range []bool{true, false} {
		proxied := dialMeta(t, e.addr, "app", "app-secret", "sharding_db", extended)
		direct := dialMeta(t, ref.Addr(), "root", "", "extmeta_ref", extended)
		for _, q := range queries {
			t.Run(fmt.Sprintf("%s extended=%v", q.name, extended), func(t *testing.T) {
				want, wantParams := direct.response(t, q.sql, q.prepare)
				got, gotParams := proxied.response(t, q.sql, q.prepare)
				if len(got) != len(want) || len(gotParams) != len(wantParams) {
					t.Fatalf("%d definitions and %d of parameters through the proxy, %d and %d directly", len(got), len(gotParams), len(want), len(wantParams))
				}
				// The proxy describes a parameter itself, as VAR_STRING
				// where MariaDB says NULL: its block, empty, is compared.
				for i := range wantParams {
					if !extended {
						if _, rest := lenEncStrings(t, gotParams[i], 6); len(rest) != 13 {
							t.Errorf("parameter %d: %q has a block", i, gotParams[i])
						}
						continue
					}
					if g, w := extendedBlock(t, gotParams[i]), extendedBlock(t, wantParams[i]); !bytes.Equal(g, w) {
						t.Errorf("parameter %d's extended metadata %q through the proxy, %q directly", i, g, w)
					}
				}
				sameDefinitions(t, got, want, "extmeta_ref")
			})
		}
		if !extended {
			continue
		}
		// The reference must be what this test assumes: MariaDB tells
		// the JSON, UUID, INET6 and INET4 columns by the block alone.
		defs := direct.columns(t, "SELECT j, u, ip, ip4, name FROM t_meta", false)
		for i, want := range []string{"\x01\x04json", "\x00\x04uuid", "\x00\x05inet6", "\x00\x05inet4", ""} {
			if got := extendedBlock(t, defs[i]); string(got) != want {
				t.Fatalf("directly, column %d's extended metadata is %q, want %q: the reference is not what this test assumes", i, got, want)
			}
		}
	}

	// Definitions the proxy makes itself (SHOW, its own variables): an
	// empty block for the client that negotiated it, as MariaDB sends
	// for SHOW DATABASES, and none for the other.
	if got := extendedBlock(t, dialMeta(t, ref.Addr(), "root", "", "", true).columns(t, "SHOW DATABASES", false)[0]); len(got) != 0 {
		t.Fatalf("directly, SHOW DATABASES's column has extended metadata %q: the reference is not what this test assumes", got)
	}
	for _, sql := range []string{"SHOW DATABASES", "SHOW TABLES", "SELECT @@shardflake_transaction_mode", "SHOW SHARDING TABLE RULES"} {
		plain := dialMeta(t, e.addr, "app", "app-secret", "sharding_db", false).columns(t, sql, false)
		ext := dialMeta(t, e.addr, "app", "app-secret", "sharding_db", true).columns(t, sql, false)
		if len(plain) == 0 || len(plain) != len(ext) {
			t.Fatalf("%s: %d definitions without the capability, %d with", sql, len(plain), len(ext))
		}
		for i := range plain {
			if block := extendedBlock(t, ext[i]); len(block) != 0 {
				t.Errorf("%s: definition %d has extended metadata %q", sql, i, block)
			}
			at := len(plain[i]) - 13
			want := append(append(append([]byte(nil), plain[i][:at]...), 0), plain[i][at:]...)
			if !bytes.Equal(ext[i], want) {
				t.Errorf("%s: definition %d with the capability %q, want %q (without it %q)", sql, i, ext[i], want, plain[i])
			}
		}
	}
}

// metaTables makes t_meta through the proxy of e and, as the reference,
// in database extmeta_ref of its first MariaDB, with the same rows:
// columns of types that MariaDB's extended metadata tells (JSON, UUID,
// INET6, INET4) and a plain one. It returns the reference's server.
func metaTables(t *testing.T, e *testEnv) *mariadbtest.Server {
	t.Helper()
	const columns = "(id BIGINT PRIMARY KEY, j JSON, u UUID, ip INET6, ip4 INET4, name VARCHAR(20))"
	ref := e.backends[0]
	ref.Exec(t, "", "DROP DATABASE IF EXISTS extmeta_ref", "CREATE DATABASE extmeta_ref")
	ref.Exec(t, "extmeta_ref", "CREATE TABLE t_meta "+columns)
	for i, b := range e.backends {
		b.Exec(t, fmt.Sprintf("ds_%d", i), "DROP TABLE IF EXISTS t_meta_0, t_meta_1")
	}
	t.Cleanup(func() {
		ref.Exec(t, "", "DROP DATABASE IF EXISTS extmeta_ref")
		for i, b := range e.backends {
			b.Exec(t, fmt.Sprintf("ds_%d", i), "DROP TABLE IF EXISTS t_meta_0, t_meta_1")
		}
	})
	db := e.open(t)
	if _, err := db.Exec("CREATE TABLE t_meta " + columns); err != nil {
		t.Fatal(err)
	}
	for id := 1; id <= 4; id++ {
		ins := fmt.Sprintf(`INSERT INTO t_meta VALUES (%d, '{"a": %d}', '123e4567-e89b-12d3-a456-42661417400%d', '::%d', '10.0.0.%d', 'n%d')`, id, id, id, id, id, id)
		if _, err := db.Exec(ins); err != nil {
			t.Fatal(err)
		}
		ref.Exec(t, "extmeta_ref", ins)
	}
	return ref
}

// TestMysql2ExtendedMetadata runs testdata/sequelize/extmeta.js, Node's
// mysql2 driver reading JSON, UUID, INET6 and INET4 columns and JSON
// expressions, against MariaDB and through the proxy: both print the
// same, a JSON value parsed into an object (mysql2 parses it only when
// the extended metadata says format=json).
func TestMysql2ExtendedMetadata(t *testing.T) {
	app := nodeApp{dir: "sequelize", script: "extmeta.js", packages: []string{"mysql2"}}
	app.runner(t) // before the servers start, when node is missing
	e := startEnv(t, envOptions{rules: extMetaRules})
	ref := metaTables(t, e)
	app.sameThroughProxy(t, e, ref, "extmeta_ref", `"o":{"a":1}`, `"j":{"a":3}`, `["u","uuid",null]`, `["j",null,"json"]`)
}
