package proxy

import (
	"database/sql"
	"net"
	"testing"
)

// TestHandlerThroughGoMySQLLoop drives a Session with go-mysql's own
// command loop (server.Conn.HandleCommand), which calls the
// server.Handler methods, and checks what a client sees.
func TestHandlerThroughGoMySQLLoop(t *testing.T) {
	e := startEnv(t, envOptions{})
	createTables(t, e)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				sess := newSession(e.srv)
				sc, err := e.srv.mysql.NewCustomizedConn(nc, e.srv.auth, sess)
				if err != nil {
					return
				}
				sess.attachHandler(sc)
				defer sess.close()
				for sc.HandleCommand() == nil {
				}
			}()
		}
	}()
	db, err := sql.Open("mysql", "app:app-secret@tcp("+l.Addr().String()+")/sharding_db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.Exec("INSERT INTO t_order (user_id, status) VALUES (?, 'h')", 3)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	var status string
	if err := db.QueryRow("SELECT status FROM t_order WHERE user_id = 3 AND order_id = ?", id).Scan(&status); err != nil || status != "h" {
		t.Errorf("prepared SELECT through HandleStmtExecute: %q, %v", status, err)
	}
	var v string
	if err := db.QueryRow("SELECT @@version_comment").Scan(&v); err != nil || v != versionComment {
		t.Errorf("HandleQuery: %q, %v", v, err)
	}
	if _, err := db.Exec("SELECT * FROM no_such"); errCode(err) != 1146 {
		t.Errorf("error through HandleQuery: %v", err)
	}
}
