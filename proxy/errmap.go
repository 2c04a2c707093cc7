package proxy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/internal/sqllex"
	"github.com/shardflake/shardflake/router"
)

// DDLError: DDL that runs on several data nodes failed on some of them.
// DDL cannot be rolled back in MySQL, so the data nodes where it
// succeeded keep the change: the error says which failed (and why) and
// which succeeded, so the operator can bring the failed ones in line.
// The client sees the first failure's error number and SQLSTATE.
type DDLError struct {
	Failed    []NodeError
	Succeeded []string // data nodes (ds.table) that ran the statement
	NotRun    []string // data nodes not reached (their connection broke)
}

// NodeError is one data node's failure.
type NodeError struct {
	Node string // ds.table, or the data source for a statement on it
	Err  error
}

func (e *DDLError) Error() string { return e.message(func(s string) string { return s }) }

// message writes the error with each data node's own message passed
// through names (clientError maps physical names there).
func (e *DDLError) message(names func(string) string) string {
	first := e.Failed[0]
	var b strings.Builder
	fmt.Fprintf(&b, "%s (on data node %s", names(mysqlError(first.Err).Message), first.Node)
	if len(e.Failed) > 1 {
		b.WriteString("; also failed on")
		for i, f := range e.Failed[1:] {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %s (%s)", f.Node, names(errorText(f.Err)))
		}
	}
	b.WriteString(")")
	if len(e.Succeeded) > 0 {
		fmt.Fprintf(&b, "; it succeeded on %s, which keep the change: DDL cannot be rolled back, so bring the failed data nodes in line by hand", dataNodeList(e.Succeeded))
	} else {
		b.WriteString("; no data node was changed")
	}
	if len(e.NotRun) > 0 {
		fmt.Fprintf(&b, "; not run on %s", dataNodeList(e.NotRun))
	}
	return b.String()
}

func (e *DDLError) Unwrap() error { return e.Failed[0].Err }

// errorText is a data node's error: number and message.
func errorText(err error) string {
	var my *mysql.MyError
	if errors.As(err, &my) {
		return fmt.Sprintf("%d %s", my.Code, my.Message)
	}
	return err.Error()
}

// dataNodeList names data nodes, all of them up to a dozen.
func dataNodeList(nodes []string) string {
	const most = 12
	if len(nodes) <= most {
		return strings.Join(nodes, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(nodes[:most], ", "), len(nodes)-most)
}

// ddlError describes a DDL execution where some route failed. When every
// route failed the same way, the client gets that error alone, as from
// one server (CREATE TABLE of a table that exists everywhere).
func (ex *execution) ddlError() error {
	e := &DDLError{}
	for _, r := range ex.routes {
		nodes := routeNodes(r)
		switch {
		case r.err != nil:
			for _, n := range nodes {
				e.Failed = append(e.Failed, NodeError{Node: n, Err: r.err})
			}
		case r.sent:
			e.Succeeded = append(e.Succeeded, nodes...)
		default:
			e.NotRun = append(e.NotRun, nodes...)
		}
	}
	if len(e.Succeeded) == 0 && len(e.NotRun) == 0 && sameErrors(e.Failed) {
		return e.Failed[0].Err
	}
	return e
}

func routeNodes(r *routeRun) []string {
	if len(r.route.Nodes) == 0 {
		return []string{r.route.DataSource}
	}
	out := make([]string, len(r.route.Nodes))
	for i, n := range r.route.Nodes {
		out[i] = n.String()
	}
	return out
}

// sameErrors reports whether every failure has the same error number
// (their messages differ by the physical table they name).
func sameErrors(failed []NodeError) bool {
	for _, f := range failed[1:] {
		if mysqlError(f.Err).Code != mysqlError(failed[0].Err).Code {
			return false
		}
	}
	return true
}

// clientError is the error a client sees for err (mysqlError), with the
// data sources' database names and the physical table names in a
// backend's message replaced by the logical schema and tables, so the
// message reads as from one MySQL server: "Table 'ds_0.nosuch' doesn't
// exist" becomes "Table 'sharding_db.nosuch' doesn't exist". Number and
// SQLSTATE stay. Errors that name data nodes on purpose (DDLError,
// CommitError) keep them, with the backend message inside mapped; a data
// source that is unavailable is named with its database as it is.
func (srv *Server) clientError(err error) *mysql.MyError {
	m := mysqlError(err)
	if m.Code == mysql.ER_PARSE_ERROR && strings.Contains(m.Message, mysqlManual) && isMariaDB(srv.version()) {
		// The proxy's own syntax errors read as its data sources' do:
		// MariaDB points to its own manual and cuts a long text with
		// "...", from the parser's own words where they are at hand.
		var pe *ParseError
		var re *router.Error
		var parsed string
		if errors.As(err, &pe) {
			parsed = pe.Err.Error()
		} else if errors.As(err, &re) && re.Err != nil {
			parsed = re.Err.Error()
		}
		if msg := router.MariaDBSyntaxMessage(parsed); msg != parsed {
			return &mysql.MyError{Code: m.Code, State: m.State, Message: msg}
		}
		return &mysql.MyError{Code: m.Code, State: m.State, Message: strings.Replace(m.Message, mysqlManual, mariaDBManual, 1)}
	}
	var ddl *DDLError
	if errors.As(err, &ddl) {
		return &mysql.MyError{Code: m.Code, State: m.State, Message: ddl.message(srv.logicalNames)}
	}
	var ce *CommitError
	var my *mysql.MyError
	if errors.As(err, &ce) || !errors.As(err, &my) || unavailable(err) != nil {
		return m
	}
	if msg := srv.logicalNames(m.Message); msg != m.Message {
		return &mysql.MyError{Code: m.Code, State: m.State, Message: msg}
	}
	return m
}

// mysqlManual and mariaDBManual are how MySQL's and MariaDB's syntax
// errors name their manuals.
const (
	mysqlManual   = "corresponds to your MySQL server version"
	mariaDBManual = "corresponds to your MariaDB server version"
)

// dropForeignKeyMessage begins MariaDB's 1091 for a foreign key that
// ALTER TABLE ... DROP FOREIGN KEY does not find.
const dropForeignKeyMessage = "Can't DROP FOREIGN KEY `"

// logicalNames replaces, in a backend's message, every word that is a
// data source's database or a physical table with the logical name, and
// a constraint's physical name after CONSTRAINT (in the messages of
// foreign keys, 1451 and 1452, and CHECK, 4025) or in 1091's "Can't DROP
// FOREIGN KEY" with the client's.
func (srv *Server) logicalNames(msg string) string {
	var b strings.Builder
	changed := false
	var last string // the word before this one
	snap := srv.current()
	for i := 0; i < len(msg); {
		if !sqllex.IsWordByte(msg[i]) {
			b.WriteByte(msg[i])
			i++
			continue
		}
		j := i
		for j < len(msg) && sqllex.IsWordByte(msg[j]) {
			j++
		}
		word := msg[i:j]
		constraint := word
		switch {
		case strings.EqualFold(last, "CONSTRAINT"):
			constraint = snap.messageConstraint(msg, word)
		case strings.EqualFold(last, "KEY") && strings.HasPrefix(msg, dropForeignKeyMessage):
			constraint = snap.droppedConstraint(word)
		}
		switch {
		case constraint != word:
			b.WriteString(constraint)
			changed = true
		case snap.physicalDB[word]:
			b.WriteString(snap.rules.DatabaseName)
			changed = true
		case snap.physicalTable[word] != "":
			b.WriteString(snap.physicalTable[word])
			changed = true
		default:
			b.WriteString(word)
		}
		last = word
		i = j
	}
	if !changed {
		return msg
	}
	return b.String()
}
