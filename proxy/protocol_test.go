package proxy

import (
	"context"
	"database/sql"
	"encoding/binary"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// readGreeting connects to addr and returns the server version and
// capabilities of its greeting.
func readGreeting(t *testing.T, addr string) (string, uint32) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	p, err := wire.NewConn(nc).ReadPacket()
	if err != nil {
		t.Fatal(err)
	}
	if len(p) < 1 || p[0] != 10 {
		t.Fatalf("greeting %q is not protocol 10", p)
	}
	end := 1
	for end < len(p) && p[end] != 0 {
		end++
	}
	at := end + 1 + 4 + 8 + 1
	if at+7 > len(p) {
		t.Fatalf("greeting too short: %q", p)
	}
	caps := uint32(binary.LittleEndian.Uint16(p[at:])) | uint32(binary.LittleEndian.Uint16(p[at+5:]))<<16
	return string(p[1:end]), caps
}

// TestServerVersionIsTheDataSources: with no server.version, the proxy
// announces the default data source's version with a shardflake suffix,
// in the greeting with MariaDB's 5.5.5- prefix as MariaDB sends it, so a
// MariaDB-aware client (Django's RETURNING, Connector/J) sees MariaDB.
func TestServerVersionIsTheDataSources(t *testing.T) {
	e := startEnv(t, envOptions{})
	direct := e.backend(t, 0)
	var backendVersion string
	if err := direct.QueryRow("SELECT VERSION()").Scan(&backendVersion); err != nil {
		t.Fatal(err)
	}
	c := e.conn(t)
	got := queryOne(t, c, "SELECT VERSION()")
	if !isMariaDB(backendVersion) || !strings.HasPrefix(backendVersion, strings.TrimSuffix(got, "-shardflake")) || !strings.HasSuffix(got, "-MariaDB-shardflake") {
		t.Errorf("VERSION() = %q through the proxy, %q directly: want the data source's version-MariaDB-shardflake", got, backendVersion)
	}
	if v := queryOne(t, c, "SELECT @@version"); v != got {
		t.Errorf("@@version = %q, VERSION() = %q", v, got)
	}
	greeting, caps := readGreeting(t, e.addr)
	directGreeting, directCaps := readGreeting(t, e.backends[0].Addr())
	if greeting != "5.5.5-"+got || !strings.HasPrefix(directGreeting, "5.5.5-") {
		t.Errorf("greeting version %q through the proxy (directly %q), want 5.5.5-%s", greeting, directGreeting, got)
	}
	for _, f := range []uint32{mysql.CLIENT_MULTI_STATEMENTS, mysql.CLIENT_MULTI_RESULTS, mysql.CLIENT_PROTOCOL_41} {
		if directCaps&f == 0 || caps&f == 0 {
			t.Errorf("capability %#x: directly %v, through the proxy %v", f, directCaps&f != 0, caps&f != 0)
		}
	}
}

// TestCommentOnlyAndEmptyQuery: a query that is only a comment is
// answered OK, an empty one with 1065, as by MariaDB; the connection
// stays usable.
func TestCommentOnlyAndEmptyQuery(t *testing.T) {
	e := startEnv(t, envOptions{})
	direct := e.backend(t, 0)
	proxied := e.open(t)
	tests := []string{"--", "-- just a comment", "/* a comment */", "# hash comment\n", " ", ""}
	for _, q := range tests {
		want := execOutcome(direct, q)
		if got := execOutcome(proxied, q); got != want {
			t.Errorf("%q: through the proxy %s, directly %s", q, got, want)
		}
	}
	if execOutcome(proxied, "--") != "ok" {
		t.Errorf("a comment-only query is not OK")
	}
	if got := queryOne(t, proxied, "SELECT 1"); got != "1" {
		t.Errorf("after: SELECT 1 = %s", got)
	}
}

// execOutcome runs q as a text query and returns "ok" or the error code.
func execOutcome(db *sql.DB, q string) string {
	rows, err := db.QueryContext(context.Background(), q)
	if err != nil {
		if c := errCode(err); c != 0 {
			return "error " + strconv.Itoa(int(c))
		}
		return err.Error()
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		return err.Error()
	}
	rows.Close()
	return "ok"
}
