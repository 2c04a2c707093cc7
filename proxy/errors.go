package proxy

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/merge"
	"github.com/shardflake/shardflake/proxy/traffic"
	"github.com/shardflake/shardflake/router"
)

// Errors the proxy itself reports. mysqlError maps each to its MySQL error
// number and SQLSTATE; everything else in the package wraps them with %w.
var (
	// ErrTooManyConnections: the server is at server.maxConnections.
	ErrTooManyConnections = errors.New("Too many connections")
	// ErrQueryInterrupted: KILL QUERY (or KILL) stopped the statement.
	ErrQueryInterrupted = errors.New("Query execution was interrupted")
	// ErrStatementTimeout: the statement ran longer than server.statementTimeout.
	ErrStatementTimeout = errors.New("Query execution was interrupted (statementTimeout exceeded)")
	// ErrNoDatabase: a statement names a table without a database and none is selected.
	ErrNoDatabase = errors.New("No database selected")
	// ErrShuttingDown: the proxy is stopping and takes no new statements.
	ErrShuttingDown = errors.New("shardflake is shutting down")
	// ErrMultiStatementsOff: a query holds several statements but the
	// client did not enable CLIENT_MULTI_STATEMENTS.
	// ErrEmptyQuery: a query with no text at all but spaces and
	// semicolons (one that is only a comment is answered with OK, as by
	// MySQL), text or prepared.
	ErrEmptyQuery         = errors.New("Query was empty")
	ErrMultiStatementsOff = errors.New("the query holds several statements but the client did not enable multi-statements (CLIENT_MULTI_STATEMENTS, e.g. multiStatements=true); nothing was run")
)

// UnknownDatabaseError: USE or COM_INIT_DB named a schema other than the
// logical one.
type UnknownDatabaseError struct{ Name string }

func (e *UnknownDatabaseError) Error() string { return fmt.Sprintf("Unknown database '%s'", e.Name) }

// NotSupportedError: a statement shardflake cannot run correctly.
type NotSupportedError struct{ What string }

func (e *NotSupportedError) Error() string {
	return "shardflake does not support " + e.What + " yet"
}

// DataSourceError: a data source could not be reached, or the connection
// to it was lost while a statement ran on it.
type DataSourceError struct {
	DataSource string
	// Lost is true when an established connection broke mid-statement,
	// false when no connection could be had (down, pool exhausted).
	Lost bool
	Err  error
}

func (e *DataSourceError) Error() string {
	// A server's answer reads as it: its message and number, without
	// the client library's call path (handleAuthResult: ...).
	cause := e.Err.Error()
	var my *mysql.MyError
	if errors.As(e.Err, &my) {
		cause = fmt.Sprintf("%s (%d)", my.Message, my.Code)
	}
	if e.Lost {
		return fmt.Sprintf("Lost connection to data source %s during query: %s", e.DataSource, cause)
	}
	return fmt.Sprintf("data source %s is unavailable: %s", e.DataSource, cause)
}

func (e *DataSourceError) Unwrap() error { return e.Err }

// MultiSourceError: multiSourceTransactions: reject, and a statement in a
// transaction would touch a second data source.
type MultiSourceError struct {
	InUse, Wanted string
}

func (e *MultiSourceError) Error() string {
	return fmt.Sprintf("this transaction already uses data source %s and multiSourceTransactions: reject forbids adding %s; commit first or keep the transaction on one data source", e.InUse, e.Wanted)
}

// CommitError: COMMIT failed on a data source, possibly after others had
// committed (commits over several data sources are not atomic).
type CommitError struct {
	DataSource string
	Committed  []string
	Err        error
}

func (e *CommitError) Error() string {
	if len(e.Committed) == 0 {
		return fmt.Sprintf("commit failed on data source %s: %v", e.DataSource, e.Err)
	}
	return fmt.Sprintf("commit failed on data source %s after %v committed (multi-source commits are not atomic): %v", e.DataSource, e.Committed, e.Err)
}

func (e *CommitError) Unwrap() error { return e.Err }

// UnknownThreadError: KILL named no connection of this proxy.
type UnknownThreadError struct{ ID uint64 }

func (e *UnknownThreadError) Error() string { return fmt.Sprintf("Unknown thread id: %d", e.ID) }

// PrivilegeError: the proxy user lacks a privilege the statement needs
// (authz.go). Code is MariaDB's number for the refusal (1044, 1045, 1142,
// 1227, 1370), Msg its text.
type PrivilegeError struct {
	Code uint16
	Msg  string
	// infoTable is the information_schema table refused, if that was
	// the refusal: MariaDB answers 1109 for one that does not exist
	// (Session.unknownInfoTable).
	infoTable string
}

func (e *PrivilegeError) Error() string { return e.Msg }

// SnapshotGoneError: the session's transaction outlived the grace period
// of the rules reload that replaced its rules; it was rolled back.
type SnapshotGoneError struct{ Reason string }

func (e *SnapshotGoneError) Error() string {
	return "the transaction was rolled back: " + e.Reason
}

// KillDeniedError: KILL named another user's connection.
type KillDeniedError struct{ ID uint64 }

func (e *KillDeniedError) Error() string { return fmt.Sprintf("You are not owner of thread %d", e.ID) }

// UnknownStmtError: a COM_STMT_* command named no prepared statement.
type UnknownStmtError struct {
	ID      uint32
	Command string
}

func (e *UnknownStmtError) Error() string {
	return fmt.Sprintf("Unknown prepared statement handler (%d) given to %s", e.ID, e.Command)
}

// ParseError: the SQL parser rejected a statement.
type ParseError struct{ Err error }

// Error words the parser's message as MySQL's syntax error.
func (e *ParseError) Error() string { return router.SyntaxMessage(e.Err.Error()) }
func (e *ParseError) Unwrap() error { return e.Err }

// InternalError: a bug (a recovered panic, an impossible state).
type InternalError struct{ Msg string }

func (e *InternalError) Error() string { return "internal error: " + e.Msg }

// mysqlError is the one boundary where an error becomes what the client
// sees: a MySQL error number, SQLSTATE and message. A backend's own error
// passes through unchanged.
func mysqlError(err error) *mysql.MyError {
	if m := wrapperError(err); m != nil {
		return m
	}
	var (
		my *mysql.MyError
		re *router.Error
	)
	switch {
	case errors.As(err, &my):
		return my
	case errors.As(err, &re):
		return &mysql.MyError{Code: re.Code, State: state(re.State), Message: re.Message}
	}
	code, st := catalogCode(err)
	return &mysql.MyError{Code: code, State: st, Message: err.Error()}
}

// wrapperError answers the errors that wrap another and say more than it
// (the cause, or another proxy's answer, decides the number); nil for
// any other error.
func wrapperError(err error) *mysql.MyError {
	var gke *GeneratedKeyError
	if errors.As(err, &gke) {
		m := mysqlError(gke.Err)
		return &mysql.MyError{Code: m.Code, State: m.State, Message: gke.Error()}
	}
	var xe *XAInDoubtError
	if errors.As(err, &xe) {
		// Neither committed nor rolled back yet: 1180, whatever the cause.
		return &mysql.MyError{Code: mysql.ER_ERROR_DURING_COMMIT, State: "HY000", Message: xe.Error()}
	}
	var fpe *FleetPeerError
	if errors.As(err, &fpe) {
		// Another proxy's answer (a forwarded KILL), as it gave it.
		return &mysql.MyError{Code: fpe.Code, State: fpe.State, Message: fpe.Msg}
	}
	var ce *CommitError
	if errors.As(err, &ce) {
		// The cause decides the number; the message says what committed.
		m := mysqlError(ce.Err)
		if m.Code == mysql.ER_UNKNOWN_ERROR {
			m.Code = mysql.ER_ERROR_DURING_COMMIT
		}
		return &mysql.MyError{Code: m.Code, State: m.State, Message: ce.Error()}
	}
	if unavailable(err) != nil {
		// A data source that refused the proxy's login (1045, 1049,
		// 1040 ...) is down like one that does not answer: 1105 naming
		// it, not the backend's number about the proxy's own account or
		// database, which the client would read as about its own.
		return &mysql.MyError{Code: mysql.ER_UNKNOWN_ERROR, State: "HY000", Message: err.Error()}
	}
	return nil
}

// unavailable is err's DataSourceError when no connection to its data
// source could be had (not a connection lost mid-statement); nil
// otherwise.
func unavailable(err error) *DataSourceError {
	var dse *DataSourceError
	if errors.As(err, &dse) && !dse.Lost {
		return dse
	}
	return nil
}

// catalogCode is the number and SQLSTATE of one of the proxy's own
// errors; 1105 (ER_UNKNOWN_ERROR) for an error it does not know.
func catalogCode(err error) (code uint16, st string) {
	var (
		udb *UnknownDatabaseError
		ns  *NotSupportedError
		dse *DataSourceError
		mse *MultiSourceError
		ute *UnknownThreadError
		kde *KillDeniedError
		use *UnknownStmtError
		pe  *ParseError
		nsr *NoShardingRuleError
		mns *merge.NotSupportedError
		sre *merge.ScatterRowsError
		mme *merge.MemoryError
		tle *traffic.LimitError
		tre *traffic.RuleError
		pve *PrivilegeError
	)
	switch {
	case errors.Is(err, ErrTooManyConnections):
		code, st = mysql.ER_CON_COUNT_ERROR, "08004"
	case errors.Is(err, ErrStatementTimeout):
		code, st = 1969, "70100" // ER_STATEMENT_TIMEOUT, as MariaDB's max_statement_time
	case errors.Is(err, ErrQueryInterrupted), errors.Is(err, context.Canceled):
		code, st = mysql.ER_QUERY_INTERRUPTED, "70100"
	case errors.Is(err, ErrNoDatabase):
		code, st = mysql.ER_NO_DB_ERROR, "3D000"
	case errors.Is(err, ErrEmptyQuery):
		code, st = mysql.ER_EMPTY_QUERY, "42000"
	case errors.Is(err, ErrMultiStatementsOff):
		code, st = mysql.ER_PARSE_ERROR, "42000"
	case errors.As(err, &udb):
		code, st = mysql.ER_BAD_DB_ERROR, "42000"
	case errors.As(err, &ns), errors.As(err, &mns), errors.As(err, &mse):
		code, st = mysql.ER_NOT_SUPPORTED_YET, "42000"
	case errors.As(err, &dse):
		// Also when the connection broke mid-statement (dse.Lost, the
		// message says so): not 2013, CR_SERVER_LOST, a client
		// library's own code that no server sends, which libmariadb
		// (the mariadb CLI, mysqlclient, sysbench) reads as a
		// malformed packet (2027), losing the message.
		code, st = mysql.ER_UNKNOWN_ERROR, "HY000"
	case errors.As(err, &ute):
		code, st = mysql.ER_NO_SUCH_THREAD, "HY000"
	case errors.As(err, &kde):
		code, st = mysql.ER_KILL_DENIED_ERROR, "HY000"
	case errors.As(err, &use):
		code, st = mysql.ER_UNKNOWN_STMT_HANDLER, "HY000"
	case errors.As(err, &pe):
		code, st = mysql.ER_PARSE_ERROR, "42000"
	case errors.As(err, &nsr):
		code, st = mysql.ER_NO_SUCH_TABLE, "42S02"
	case errors.As(err, &sre):
		code, st = mysql.ER_TOO_BIG_SELECT, "42000"
	case errors.As(err, &mme):
		code, st = mysql.ER_OUT_OF_SORTMEMORY, "HY001"
	case errors.As(err, &tle):
		code, st = tle.Code(), "42000"
	case errors.As(err, &tre) && tre.Unknown:
		code, st = mysql.ER_UNKNOWN_ERROR, "HY000"
	case errors.As(err, &tre):
		code, st = mysql.ER_WRONG_VALUE_FOR_VAR, "42000"
	case errors.As(err, &pve):
		code, st = pve.Code, "42000"
		if code == errAccessDenied {
			st = "28000"
		}
	default:
		code, st = mysql.ER_UNKNOWN_ERROR, "HY000"
	}
	return code, st
}

func state(s string) string {
	if len(s) != 5 {
		return "HY000"
	}
	return s
}
