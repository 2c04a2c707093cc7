package proxy

import (
	"net"
	"sync/atomic"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// Status flags.
//
// Every OK and EOF packet carries the server's status flags, and so does
// the greeting. Drivers act on them: PyMySQL and mysqlclient read
// AUTOCOMMIT from the greeting to decide whether they must send SET
// AUTOCOMMIT = 0 for a transactional connection, so a greeting without it
// leaves them in autocommit while they believe they are not, and
// ROLLBACK undoes nothing. The proxy's flags are MariaDB's: AUTOCOMMIT and
// IN_TRANS from the session's own state (results.go: status),
// IN_TRANS_READONLY for START TRANSACTION READ ONLY, MORE_RESULTS for a
// multi-statement query, NO_BACKSLASH_ESCAPES from the session's sql_mode,
// and NO_INDEX_USED / NO_GOOD_INDEX_USED where a backend that ran the
// statement said so.

// serverStatusInTransReadOnly is MariaDB's SERVER_STATUS_IN_TRANS_READONLY
// (go-mysql has no name for it).
const serverStatusInTransReadOnly = 0x2000

// backendStatusFlags are the flags a statement's backends report that the
// client is told too: they describe how the statement ran.
const backendStatusFlags = mysql.SERVER_STATUS_NO_INDEX_USED | mysql.SERVER_STATUS_NO_GOOD_INDEX_USED

// greetingStatus is the status of the greeting and of the OK that ends
// the login: a fresh session is in autocommit mode.
const greetingStatus = mysql.SERVER_STATUS_AUTOCOMMIT

// unwrapGreeting returns the connection under an announceConn, once the
// handshake is done and the greeting long written.
func unwrapGreeting(nc net.Conn) net.Conn {
	if a, ok := nc.(*announceConn); ok {
		nc = a.Conn
	}
	return nc
}

// statusSink collects the backendStatusFlags of the backends a statement
// runs on. A multi-route statement's lanes report from their own
// goroutines.
type statusSink struct{ flags atomic.Uint32 }

func (k *statusSink) add(status uint16) {
	if k != nil && status&backendStatusFlags != 0 {
		k.flags.Or(uint32(status & backendStatusFlags))
	}
}

func (k *statusSink) get() uint16 { return uint16(k.flags.Load()) }

func (k *statusSink) reset() { k.flags.Store(0) }

// statusReporter is a connSource that wants to hear the backends' status
// flags (the session's own sources).
type statusReporter interface {
	statusSink() *statusSink
}

func (t txnSource) statusSink() *statusSink  { return &t.s.backendStatus }
func (p poolSource) statusSink() *statusSink { return &p.s.backendStatus }
func (g *stmtGuard) statusSink() *statusSink { return &g.s.backendStatus }

// sinkOf returns the statusSink of a connSource, nil if it has none.
func sinkOf(conns connSource) *statusSink {
	if r, ok := conns.(statusReporter); ok {
		return r.statusSink()
	}
	return nil
}
