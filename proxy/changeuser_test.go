package proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// TestChangeUser: COM_CHANGE_USER (mysqljs's changeUser, the MariaDB
// connectors' changeUser) logs in again on the connection, through the
// proxy as on one MariaDB: the session starts afresh (a user variable,
// a temporary table and a prepared statement gone) in the schema named
// and with the character set named; a wrong password gets 1045. It was
// 1047 "Unknown command" through the proxy.
func TestChangeUser(t *testing.T) {
	e := startEnv(t, envOptions{planner: toDefault})
	db := e.open(t)
	if _, err := db.Exec("CREATE TABLE IF NOT EXISTS t_change_user (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Exec("DROP TABLE IF EXISTS t_change_user") })
	e.backends[0].Exec(t, "", "CREATE DATABASE IF NOT EXISTS change_user_ref",
		"CREATE TABLE IF NOT EXISTS change_user_ref.t_change_user (id INT PRIMARY KEY)")
	t.Cleanup(func() { e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS change_user_ref") })

	got := changeUserSteps(t, e.addr, "app", "app-secret", "sharding_db")
	want := changeUserSteps(t, e.backends[0].Addr(), "root", "", "change_user_ref")
	referencePrinted(t, "COM_CHANGE_USER", want, "OK", "SELECT @m [<nil>]", "ERR 1045")
	sameSteps(t, got, want)
}

// changeUserSteps logs in to addr, leaves state in the session, changes
// to the same account (with character set latin1) and reports what
// remains, then changes with a wrong password and reports the answer and
// whether the connection still answers.
func changeUserSteps(t *testing.T, addr, user, password, db string) []string {
	t.Helper()
	// The login's packets from the server, to learn the scramble a
	// COM_CHANGE_USER answers: the greeting's, or an authentication
	// switch's.
	var login []byte
	var mu sync.Mutex
	recording := true
	dial := func(ctx context.Context, network, address string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, address)
		if err != nil {
			return nil, err
		}
		return &readTap{Conn: nc, tap: func(b []byte) {
			mu.Lock()
			defer mu.Unlock()
			if recording {
				login = append(login, b...)
			}
		}}, nil
	}
	gc, err := client.ConnectWithDialer(context.Background(), "tcp", addr, user, password, db, dial, func(c *client.Conn) error {
		c.UnsetCapability(mysql.CLIENT_DEPRECATE_EOF)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gc.Close() })
	mu.Lock()
	recording = false
	mu.Unlock()
	var scramble []byte
	for len(login) >= 4 {
		n := int(login[0]) | int(login[1])<<8 | int(login[2])<<16
		payload := login[4 : 4+n]
		if s, ok := wire.GreetingScramble(payload); ok && scramble == nil {
			scramble = s
		} else if s, ok := wire.AuthSwitchScramble(payload); ok {
			scramble = s
		}
		login = login[4+n:]
	}
	if scramble == nil {
		t.Fatal("no scramble in the login")
	}
	for _, q := range []string{"SET @m = 1", "CREATE TEMPORARY TABLE tmp_change_user (a INT)", "PREPARE ps FROM 'SELECT 1'", "INSERT INTO t_change_user VALUES (1)"} {
		if _, err := gc.Execute(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	gc.Begin()
	gc.Execute("INSERT INTO t_change_user VALUES (2)")
	c := wire.NewConn(gc.Conn.Conn)
	changeUser := func(auth []byte) string {
		p := append([]byte{mysql.COM_CHANGE_USER}, user...)
		p = append(p, 0, byte(len(auth)))
		p = append(p, auth...)
		p = append(p, db...)
		p = append(p, 0, 8, 0) // latin1_swedish_ci
		p = append(p, mysql.AUTH_NATIVE_PASSWORD...)
		p = append(p, 0, 0) // and no connection attributes
		reply := command(t, c, p)
		if s, ok := wire.AuthSwitchScramble(reply); ok {
			// MariaDB asks again for the account's plugin.
			var again []byte
			if len(auth) > 0 {
				again = mysql.CalcNativePassword(s, []byte(password))
			}
			if !bytes.Equal(auth, mysql.CalcNativePassword(scramble, []byte(password))) && len(auth) > 0 {
				again = auth // the wrong answer stays wrong
			}
			if err := c.WritePacket(again); err != nil {
				t.Fatal(err)
			}
			if err := c.Flush(); err != nil {
				t.Fatal(err)
			}
			reply = readPacket(t, c)
		}
		if wire.IsErr(reply) {
			return fmt.Sprint("ERR ", wire.ParseErr(reply).Code)
		}
		if reply[0] != wire.HeaderOK {
			t.Fatalf("COM_CHANGE_USER answered %q", reply)
		}
		return "OK"
	}
	var auth []byte
	if password != "" {
		auth = mysql.CalcNativePassword(scramble, []byte(password))
	}
	steps := []string{changeUser(auth)}
	for _, q := range []string{"SELECT @m", "SELECT DATABASE() = '" + db + "' AS same_db", "SELECT @@character_set_client, @@collation_connection",
		"SELECT COUNT(*) FROM t_change_user", "SELECT COUNT(*) FROM tmp_change_user", "EXECUTE ps"} {
		r, err := gc.Execute(q)
		if err != nil {
			var my *mysql.MyError
			errors.As(err, &my)
			steps = append(steps, strings.ReplaceAll(fmt.Sprintf("%s: %v", q, my), db, "db"))
			continue
		}
		var vals []any
		for i := range r.ColumnNumber() {
			v, _ := r.GetValue(0, i)
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			vals = append(vals, v)
		}
		steps = append(steps, fmt.Sprint(strings.ReplaceAll(q, db, "db"), " ", vals))
	}
	wrong := make([]byte, 20)
	rand.Read(wrong)
	steps = append(steps, changeUser(wrong))
	if _, err := gc.Execute("SELECT 1"); err != nil {
		steps = append(steps, "after a refused change: the connection is gone")
	} else {
		steps = append(steps, "after a refused change: the connection answers")
	}
	return steps
}

// readTap hands the bytes it reads to tap.
type readTap struct {
	net.Conn
	tap func([]byte)
}

func (c *readTap) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.tap(b[:n])
	}
	return n, err
}
