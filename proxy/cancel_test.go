package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
)

// backendRunning counts statements containing marker that the backends
// are running now.
func backendRunning(t *testing.T, e *testEnv, marker string) int {
	t.Helper()
	n := 0
	for i := range e.backends {
		var c int
		err := e.backend(t, i).QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE ? AND INFO NOT LIKE '%PROCESSLIST%'", "%"+marker+"%").Scan(&c)
		if err != nil {
			t.Fatal(err)
		}
		n += c
	}
	return n
}

// slowScatter is a statement that runs for 30 s on every data node.
const slowScatter = "SELECT order_id, SLEEP(30) FROM t_order"

// seedSlow puts one row in each of the four data nodes. It makes the
// tables through a proxy of its own on e's data sources, without e's
// server settings: a statementTimeout of e's (500ms) ended the DROP
// TABLE of createTables on a loaded machine (1969 before the test began).
func seedSlow(t *testing.T, e *testEnv) {
	t.Helper()
	seed := startEnv(t, envOptions{backends: e.backends})
	createTables(t, seed)
	db := seed.open(t)
	if _, err := db.Exec("INSERT INTO t_order (order_id, user_id) VALUES (0, 0), (1, 0), (2, 1), (3, 1)"); err != nil {
		t.Fatal(err)
	}
}

func TestKillQueryStopsTheBackends(t *testing.T) {
	e := startEnv(t, envOptions{})
	seedSlow(t, e)
	ctx := context.Background()
	victim := e.conn(t)
	var id int64
	victim.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id)
	errc := make(chan error, 1)
	go func() {
		rows, err := victim.QueryContext(ctx, slowScatter)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
			rows.Close()
		}
		errc <- err
	}()
	waitFor(t, func() bool { return backendRunning(t, e, "SLEEP(30)") == 4 })

	killer := e.conn(t)
	start := time.Now()
	if _, err := killer.ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", id)); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	if errCode(err) != 1317 {
		t.Errorf("killed statement: got %v, want 1317", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("KILL QUERY took %s to take effect", took)
	}
	waitFor(t, func() bool { return backendRunning(t, e, "SLEEP(30)") == 0 })
	// The connection survives KILL QUERY.
	var one int
	if err := victim.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		t.Errorf("after KILL QUERY: %v", err)
	}

	// KILL of another user's connection is refused; of an unknown one, 1094.
	db2, _ := sql.Open("mysql", e.dsn("other", "other-secret"))
	defer db2.Close()
	if _, err := db2.Exec(fmt.Sprintf("KILL QUERY %d", id)); errCode(err) != 1095 {
		t.Errorf("another user's KILL: %v, want 1095", err)
	}
	if _, err := killer.ExecContext(ctx, "KILL 999999"); errCode(err) != 1094 {
		t.Errorf("KILL of an unknown id: %v, want 1094", err)
	}

	// KILL closes the connection.
	if _, err := killer.ExecContext(ctx, fmt.Sprintf("KILL %d", id)); err != nil {
		t.Fatal(err)
	}
	if err := victim.QueryRowContext(ctx, "SELECT 1").Scan(&one); err == nil {
		t.Error("the killed connection still answers")
	}
}

// TestKillQuotedID: KILL with the id as a quoted string, as DBD::mysql
// sends pt-kill's KILL ? (KILL '4194305'), kills as KILL 4194305 does,
// as on MariaDB, which reads an expression there; it was 1064 from the
// parser, and pt-kill --kill left its victims running. An id no session
// has is 1094 both ways.
func TestKillQuotedID(t *testing.T) {
	e := startEnv(t, envOptions{})
	ctx := context.Background()
	victim := e.conn(t)
	var id int64
	if err := victim.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	sleep := func() chan error {
		errc := make(chan error, 1)
		go func() {
			var v int
			errc <- victim.QueryRowContext(ctx, "SELECT SLEEP(20) AS killed_by_quoted_id").Scan(&v)
		}()
		waitFor(t, func() bool { return backendRunning(t, e, "killed_by_quoted_id") == 1 })
		return errc
	}
	killer := e.conn(t)
	errc := sleep()
	if _, err := killer.ExecContext(ctx, fmt.Sprintf("KILL QUERY '%d'", id)); err != nil {
		t.Fatalf("KILL QUERY '%d': %v", id, err)
	}
	if err := <-errc; errCode(err) != 1317 {
		t.Errorf("the statement KILL QUERY '%d' killed: %v, want 1317", id, err)
	}
	errc = sleep()
	if _, err := killer.ExecContext(ctx, fmt.Sprintf("/* pt-kill */ KILL CONNECTION \"%d\" ;", id)); err != nil {
		t.Fatalf("KILL CONNECTION \"%d\": %v", id, err)
	}
	if err := <-errc; err == nil {
		t.Error("the statement of the connection KILL CONNECTION killed ended well")
	}
	var one int
	if err := victim.QueryRowContext(ctx, "SELECT 1").Scan(&one); err == nil {
		t.Error("the killed connection still answers")
	}
	ref := e.backend(t, 0)
	for _, q := range []string{"KILL '999999'", "KILL QUERY '999999'"} {
		_, got := killer.ExecContext(ctx, q)
		_, want := ref.Exec(q)
		if errCode(got) != 1094 || errCode(want) != 1094 {
			t.Errorf("%s: proxy %v, MariaDB %v; want 1094", q, got, want)
		}
	}
}

func TestStatementTimeout(t *testing.T) {
	e := startEnv(t, envOptions{server: "statementTimeout: 500ms"})
	seedSlow(t, e)
	c := e.conn(t)
	ctx := context.Background()
	start := time.Now()
	rows, err := c.QueryContext(ctx, slowScatter)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Err()
		rows.Close()
	}
	if errCode(err) != 1969 {
		t.Errorf("got %v, want 1969", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("timeout of 500ms took %s", took)
	}
	waitFor(t, func() bool { return backendRunning(t, e, "SLEEP(30)") == 0 })
	var one int
	if err := c.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		t.Errorf("after the timeout: %v", err)
	}
}

func TestClientDisconnectStopsTheBackends(t *testing.T) {
	e := startEnv(t, envOptions{})
	seedSlow(t, e)
	c, err := client.Connect(e.addr, "app", "app-secret", "sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	clients := e.srv.Clients()
	go c.Execute(slowScatter)
	waitFor(t, func() bool { return backendRunning(t, e, "SLEEP(30)") == 4 })
	// Hang up without a word (no COM_QUIT), mid-statement.
	c.Conn.Conn.(*net.TCPConn).SetLinger(0)
	c.Close()
	start := time.Now()
	waitFor(t, func() bool { return backendRunning(t, e, "SLEEP(30)") == 0 })
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("backends stopped %s after the client left", took)
	}
	waitFor(t, func() bool { return e.srv.Clients() == clients-1 })
}
