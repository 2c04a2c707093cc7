package proxy

import (
	"context"
	"regexp"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/charset"

	"github.com/shardflake/shardflake/internal/sqllex"
	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
)

// Session state that drivers and tools set, beyond plain SET var = value
// (vars.go): the transaction access mode, values that name variables, and
// the collation asked for in the handshake.

// isReadOnlyVar reports whether name is the transaction access mode
// variable (SET [SESSION] TRANSACTION READ ONLY parses to tx_read_only).
func isReadOnlyVar(name string) bool {
	return name == "tx_read_only" || name == "transaction_read_only"
}

// oneShotTransaction matches SET TRANSACTION without SESSION or GLOBAL:
// its characteristics are for the next transaction only. The parser gives
// SET TRANSACTION READ ONLY and SET SESSION TRANSACTION READ ONLY the same
// tree, so the statement's text tells them apart.
var oneShotTransaction = regexp.MustCompile(`(?is)^(?:\s+|/\*[^!].*?\*/|#[^\n]*\n|--\s[^\n]*\n)*(?:/\*M?!\d*)?\s*SET\s+TRANSACTION\b`)

// readOnlySetting reads the value of tx_read_only as MariaDB wants it: an
// integer (the parser gives the string '1', which MariaDB refuses with
// 1231).
func readOnlySetting(e ast.ExprNode) (string, bool, error) {
	on, err := boolSetting(e)
	if err != nil {
		return "", false, err
	}
	if on {
		return "1", true, nil
	}
	return "0", false, nil
}

// namesVariables reports whether e reads a variable (@saved_cs_client,
// @@character_set_client): such a value is evaluated once, when it is
// set, and recorded as the literal it gave. Replayed as written, it would
// read whatever the variable holds when it is replayed on another
// connection, or NULL where the variable was set later in the list
// (mysqldump's SET character_set_client = @saved_cs_client got 1231).
func namesVariables(e ast.ExprNode) bool {
	if e == nil {
		return false
	}
	f := &variableFinder{}
	e.Accept(f)
	return f.found
}

type variableFinder struct{ found bool }

func (f *variableFinder) Enter(n ast.Node) (ast.Node, bool) {
	if _, ok := n.(*ast.VariableExpr); ok {
		f.found = true
		return n, true
	}
	return n, false
}

func (f *variableFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// systemValue is the value a SET of a system variable records: the
// expression as written, or its value when it reads variables.
func (s *Session) systemValue(ctx context.Context, e ast.ExprNode) (string, error) {
	if namesVariables(e) {
		return s.userVarValue(ctx, e)
	}
	return restoreExpr(e)
}

// handshakeNames is the SET NAMES a session starts with for the
// collation the client named in its handshake (charset and collation;
// ok false for the baseline, utf8mb4_general_ci, or a collation MariaDB
// would not know, for which MariaDB too keeps its default). MySQL 8's
// utf8mb4_0900_* collations are not MariaDB 10.11's.
func handshakeNames(id uint8) (cs, collation string, ok bool) {
	c, err := charset.GetCollationByID(int(id))
	if err != nil || strings.Contains(c.Name, "_0900_") {
		return "", "", false
	}
	if c.CharsetName == "utf8mb4" && strings.EqualFold(c.Name, backendCollation) {
		return "", "", false
	}
	// Always with the collation: TiDB's defaults are not MariaDB's
	// (utf8mb4_bin is TiDB's default utf8mb4 collation).
	return c.CharsetName, c.Name, true
}

// oneShotReadOnly gives a pooled connection that runs a statement in
// autocommit mode the session's pending SET TRANSACTION READ ONLY, so the
// backend applies it as MariaDB does (the statement's write fails with
// 1792, and the mode lasts until a statement succeeds). The connection
// is reset before it carries anything else (applied no longer matches).
func (s *Session) oneShotReadOnly(bc *backendConn) error {
	if !s.txn.readOnlyNext || s.txn.active || !s.autocommit {
		return nil
	}
	bc.applied = "\x00one-shot READ ONLY"
	_, err := bc.exec("SET TRANSACTION READ ONLY")
	return err
}

// afterAutocommitStatement drops a pending SET TRANSACTION READ ONLY once
// a statement outside a transaction succeeded: that statement was the
// transaction it applied to.
func (s *Session) afterAutocommitStatement(err error) {
	if err == nil && !s.txn.active && s.autocommit {
		s.txn.readOnlyNext = false
	}
}

// clientSQL is a statement's text as the proxy reads it: under sql_mode
// NO_BACKSLASH_ESCAPES, turned into the backslash form, which the parser,
// the router and the backends (backendConn.send) all work in; under
// ANSI_QUOTES, with the backslashes of "..." names doubled, as the parser
// reads them (sqlarg.QuotedNamesToBackslashEscapes).
func (s *Session) clientSQL(sql string) string {
	switch {
	case s.sqlMode.HasNoBackslashEscapesMode():
		return sqlarg.ToBackslashEscapes(sql)
	case s.sqlMode.HasANSIQuotesMode():
		return sqlarg.QuotedNamesToBackslashEscapes(sql)
	}
	return sql
}

// carryMode tells bc, which carries the session's settings, whether its
// sql_mode has ANSI_QUOTES, so that send writes "..." names in its form.
func (s *Session) carryMode(bc *backendConn) {
	bc.ansiQuotes = s.sqlMode.HasANSIQuotesMode()
}

// readOnly reports whether the settings make the session's transactions
// read only (SET SESSION TRANSACTION READ ONLY).
func (v settings) readOnly() bool {
	for _, it := range v.items {
		if it.key == "@@tx_read_only" || it.key == "@@transaction_read_only" {
			return strings.HasSuffix(it.sql, "= 1")
		}
	}
	return false
}

// lexMode is how the client's literals are written under the session's
// sql_mode.
func (s *Session) lexMode() sqlarg.Mode {
	if s.sqlMode.HasNoBackslashEscapesMode() {
		return sqlarg.NoBackslashEscapes
	}
	return sqlarg.Backslash
}

// switchesSQLMode reports whether text is a multi-statement query that
// may change sql_mode before its last statement. MariaDB reads each
// statement of such a query in the mode the ones before it left
// (NO_BACKSLASH_ESCAPES decides what a backslash in a literal means, and
// where a literal ends; ANSI_QUOTES what "..." is), so it cannot be
// converted and parsed as a whole (runAsRead).
func (s *Session) switchesSQLMode(text string) bool {
	if !s.multiStatements || strings.IndexByte(text, ';') < 0 || !containsFold(text, "sql_mode") {
		return false
	}
	first, rest := sqlarg.SplitFirst(text, s.lexMode())
	next, _ := sqlarg.SplitFirst(rest, s.lexMode())
	return first != "" && next != ""
}

// containsFold reports whether s contains the ASCII word sub in any case.
func containsFold(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// runAsRead runs a multi-statement query that may change sql_mode
// (switchesSQLMode) as MariaDB reads it: each statement is cut from the
// client's text, converted (clientSQL) and parsed in the mode the
// statements before it left, then passes the door on its own, flagged
// when another follows; the first error stops it.
func (s *Session) runAsRead(st *statement) error {
	piece, rest := sqlarg.SplitFirst(st.rest, s.lexMode())
	for piece != "" {
		more := moreStatements(rest, s.lexMode())
		one := statement{sql: s.clientSQL(piece), out: st.out.followedBy(more)}
		if err := s.runStatement(&one); err != nil {
			return err
		}
		if s.quit || !more {
			return nil
		}
		// The statement may have changed the mode: what follows it is
		// cut in the new one.
		piece, rest = sqlarg.SplitFirst(rest, s.lexMode())
	}
	return nil
}

// moreStatements reports whether rest, what follows a statement of a
// multi-statement query, holds another one: comments alone at the end
// are not one (MariaDB sends no result for them).
func moreStatements(rest string, mode sqlarg.Mode) bool {
	next, after := sqlarg.SplitFirst(rest, mode)
	if next == "" {
		return false
	}
	if i, stop := sqllex.SkipSpace(next, 0, mode); i == len(next) && stop.Kind == 0 {
		last, _ := sqlarg.SplitFirst(after, mode)
		return last != ""
	}
	return true
}
