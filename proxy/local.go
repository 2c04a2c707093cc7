package proxy

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/router"
)

// versionComment is @@version_comment, which clients print at login.
const versionComment = "shardflake MySQL sharding proxy"

// tablelessSelect answers a SELECT that names no table. Values only the
// proxy knows (DATABASE(), CONNECTION_ID(), LAST_INSERT_ID(), ROW_COUNT(), FOUND_ROWS(), VERSION(),
// USER(), @@version_comment, @@version, @@autocommit,
// @@shardflake_transaction_mode) are answered by the
// proxy: entirely when the statement holds nothing else, otherwise by
// writing them into the statement as literals and running it on the
// default data source (SELECT 1, NOW(), @@sql_mode are the backend's
// business): then it returns that plan.
//
// A select field that is only such a value is described to the client as
// MariaDB describes the value (out.local), not as the literal.
func (s *Session) tablelessSelect(ctx context.Context, sel *ast.SelectStmt, sql string, out *output) (*router.Plan, error) {
	if rows, ok := s.localSelect(sel); ok {
		return nil, s.writeRows(rows, *out)
	}
	keepLabels(sel)
	r := newLocalRewriter(s, sel)
	sel.Accept(r)
	out.local = r.columns
	renamed, err := s.srv.renameVars(ctx, sel)
	if err != nil {
		return nil, err
	}
	if r.changed || renamed {
		keepFieldNames(sel)
		var b strings.Builder
		if err := sel.Restore(format.NewRestoreCtx(restoreFlags, &b)); err != nil {
			return nil, &InternalError{Msg: "restore rewritten SELECT: " + err.Error()}
		}
		sql = b.String()
	}
	return s.srv.dataSourcePlan("", sql, router.KindSelect), nil
}

// keepLabels names every unaliased expression of sel's select list by
// its text as written, MySQL's column label: restoring the statement
// respells @@port as @@`port` and COUNT(*) as COUNT(1), which the backend
// would use as labels. Columns, string literals and NULL keep their labels
// anyway.
func keepLabels(sel *ast.SelectStmt) {
	if sel.Fields == nil {
		return
	}
	for _, f := range sel.Fields.Fields {
		if f.Expr == nil || f.AsName.O != "" {
			continue
		}
		switch x := f.Expr.(type) {
		case *ast.ColumnNameExpr:
			continue
		case ast.ValueExpr:
			switch x.GetValue().(type) {
			case string, nil:
				continue // labelled by its value, NULL as NULL
			}
		}
		if text := strings.TrimSpace(f.Text()); text != "" && len(text) <= 256 {
			f.AsName = ast.NewCIStr(text)
		}
	}
}

// localSelect returns the result of a SELECT made only of values the
// proxy knows, with at most a LIMIT.
func (s *Session) localSelect(sel *ast.SelectStmt) (RowStream, bool) {
	if sel.Fields == nil || sel.Where != nil || sel.GroupBy != nil || sel.Having != nil || sel.OrderBy != nil || sel.Distinct {
		return nil, false
	}
	var cols []*mysql.Field
	var row Row
	for _, f := range sel.Fields.Fields {
		if f.WildCard != nil {
			return nil, false
		}
		v, ok := s.localValue(f.Expr)
		if !ok {
			return nil, false
		}
		cols = append(cols, localColumn(f.Expr, fieldName(f), v))
		row = append(row, rowOf(v)[0])
	}
	rows := []Row{row}
	if zeroLimit(sel) {
		rows = nil
	}
	return newMemStream(cols, rows), true
}

// zeroLimit reports whether sel's LIMIT is 0, a literal (a prepared
// statement's argument written in): MariaDB reads nothing for it.
func zeroLimit(sel *ast.SelectStmt) bool {
	if sel.Limit == nil {
		return false
	}
	c, ok := sel.Limit.Count.(ast.ValueExpr)
	if !ok {
		return false
	}
	switch n := c.GetValue().(type) {
	case uint64:
		return n == 0
	case int64:
		return n == 0
	}
	return false
}

// fieldName is the column name MySQL gives a select field: its alias, or
// the expression as written.
func fieldName(f *ast.SelectField) string {
	if f.AsName.O != "" {
		return f.AsName.O
	}
	if t := strings.TrimSpace(f.Text()); t != "" {
		return t
	}
	var b strings.Builder
	f.Expr.Restore(format.NewRestoreCtx(restoreFlags, &b))
	return b.String()
}

// localValue returns the value of an expression only the proxy can
// answer: uint64, int64, string or nil (SQL NULL).
func (s *Session) localValue(e ast.ExprNode) (any, bool) {
	switch x := e.(type) {
	case *ast.FuncCallExpr:
		if len(x.Args) > 0 {
			return nil, false
		}
		switch x.FnName.L {
		case "database", "schema":
			if s.db == "" {
				return nil, true
			}
			return s.db, true
		case "connection_id":
			return uint64(s.id), true
		case "last_insert_id":
			return s.lastInsertID, true
		case "row_count":
			// The last statement's, which may have run on any data
			// source's connection.
			return s.rowCount, true
		case "found_rows":
			// As ROW_COUNT() (calcfoundrows.go).
			return s.found, true
		case "version":
			return s.srv.version(), true
		case "user", "session_user", "system_user":
			return s.user + "@" + s.remoteHost(), true
		case "current_user":
			return s.user + "@%", true
		}
	case *ast.VariableExpr:
		if !x.IsSystem || x.IsGlobal {
			return nil, false
		}
		switch strings.ToLower(x.Name) {
		case "version_comment":
			return versionComment, true
		case "warning_count":
			n, _ := s.diag.counts()
			return n, true
		case "error_count":
			_, n := s.diag.counts()
			return n, true
		case "version":
			return s.srv.version(), true
		case "last_insert_id", "identity":
			// As LAST_INSERT_ID(): the proxy's generated key.
			return s.lastInsertID, true
		case "autocommit":
			if s.autocommit {
				return int64(1), true
			}
			return int64(0), true
		case "unique_checks":
			// The session's own (uniqueChecksValue).
			if s.uniqueChecksOff {
				return int64(0), true
			}
			return int64(1), true
		case "in_transaction":
			if s.txn.active {
				return int64(1), true
			}
			return int64(0), true
		case "shardflake_transaction_mode", "transaction_type":
			// What SET shardflake_transaction_mode (or transaction_type) set.
			return strings.ToUpper(s.txnMode.String()), true
		}
	}
	return nil, false
}

// MariaDB's lengths, in characters, of names: NAME_CHAR_LEN, and
// USERNAME_CHAR_LENGTH + HOSTNAME_LENGTH + 1 for user@host.
const (
	nameChars     = 64
	userHostChars = 128 + 255 + 1
)

// localColumn is the column definition MariaDB gives e, a value only the
// proxy knows (localValue), whose value is v: drivers type the value by
// it (LAST_INSERT_ID() is a BIGINT UNSIGNED NOT NULL, CONNECTION_ID() an
// INT UNSIGNED NOT NULL, @@autocommit a BIGINT of length 1). A string
// variable or VERSION() is as long as its value, as in MariaDB.
func localColumn(e ast.ExprNode, name string, v any) *mysql.Field {
	valueChars := 0
	if str, ok := v.(string); ok {
		valueChars = utf8.RuneCountInString(str)
	}
	switch x := e.(type) {
	case *ast.FuncCallExpr:
		switch x.FnName.L {
		case "database", "schema":
			return itemString(name, nameChars, 0)
		case "connection_id":
			return itemInt(name, mysql.MYSQL_TYPE_LONG, 10, mysql.NOT_NULL_FLAG|mysql.UNSIGNED_FLAG)
		case "last_insert_id":
			return itemInt(name, mysql.MYSQL_TYPE_LONGLONG, 21, mysql.NOT_NULL_FLAG|mysql.UNSIGNED_FLAG)
		case "row_count", "found_rows":
			return itemInt(name, mysql.MYSQL_TYPE_LONGLONG, 21, mysql.NOT_NULL_FLAG)
		case "version":
			return itemString(name, valueChars, mysql.NOT_NULL_FLAG)
		case "user", "session_user", "system_user", "current_user":
			return itemString(name, userHostChars, 0)
		}
	case *ast.VariableExpr:
		switch strings.ToLower(x.Name) {
		case "warning_count", "error_count", "last_insert_id", "identity", "in_transaction":
			return itemInt(name, mysql.MYSQL_TYPE_LONGLONG, 21, mysql.UNSIGNED_FLAG)
		case "autocommit", "unique_checks":
			return itemInt(name, mysql.MYSQL_TYPE_LONGLONG, 1, 0)
		}
	}
	switch v.(type) {
	case uint64:
		return itemInt(name, mysql.MYSQL_TYPE_LONGLONG, 21, mysql.UNSIGNED_FLAG)
	case int64:
		return itemInt(name, mysql.MYSQL_TYPE_LONGLONG, 21, 0)
	}
	return itemString(name, valueChars, 0)
}

func (s *Session) remoteHost() string {
	if s.nc == nil {
		return "localhost"
	}
	host := s.nc.RemoteAddr().String()
	if i := strings.LastIndexByte(host, ':'); i > 0 {
		host = strings.Trim(host[:i], "[]")
	}
	return host
}

// localRewriter replaces the proxy's own values in a statement with
// literals, keeping each select field's column name.
type localRewriter struct {
	s       *Session
	changed bool
	// top are the select fields of the statement's result; columns are,
	// by position, the column definitions of those replaced whole
	// (localColumn), nil when none was.
	top     []*ast.SelectField
	columns map[int]*mysql.Field
}

// newLocalRewriter is a localRewriter of sel.
func newLocalRewriter(s *Session, sel *ast.SelectStmt) *localRewriter {
	r := &localRewriter{s: s}
	if sel.Fields != nil {
		r.top = sel.Fields.Fields
	}
	return r
}

func (r *localRewriter) Enter(n ast.Node) (ast.Node, bool) {
	if f, ok := n.(*ast.SelectField); ok && f.Expr != nil {
		if v, ok := r.s.localValue(f.Expr); ok {
			if f.AsName.O == "" {
				f.AsName = ast.NewCIStr(fieldName(f))
			}
			if i := slices.Index(r.top, f); i >= 0 {
				if r.columns == nil {
					r.columns = map[int]*mysql.Field{}
				}
				r.columns[i] = localColumn(f.Expr, f.AsName.O, v)
			}
			f.Expr = ast.NewValueExpr(v, "", "")
			r.changed = true
			return n, true
		}
	}
	return n, false
}

func (r *localRewriter) Leave(n ast.Node) (ast.Node, bool) {
	if e, ok := n.(ast.ExprNode); ok {
		if _, isField := n.(*ast.SelectField); !isField {
			if v, ok := r.s.localValue(e); ok {
				r.changed = true
				return ast.NewValueExpr(v, "", ""), true
			}
		}
	}
	return n, true
}

// tablelessParams returns the SELECT of prepared statement ps when it
// names no table and has parameters. MariaDB describes a bare
// parameter's column by the type its value was bound with and names it
// ? (SELECT ? is a BIGINT column named ? for an integer): written into
// the text as literals, the values would name the columns and type them
// as literals. Such a statement runs as a backend prepared statement with
// the client's values under the client's types (withArgs).
func (s *Session) tablelessParams(ps *preparedStmt) (*ast.SelectStmt, bool) {
	if ps.pp != nil || ps.params == 0 {
		return nil, false
	}
	stmts, err := s.parse(ps.parsed)
	if err != nil || len(stmts) != 1 {
		return nil, false
	}
	sel, ok := stmts[0].(*ast.SelectStmt)
	if !ok || sel.From != nil || hasTable(sel) || schemaOf(sel) == infoSchema {
		return nil, false
	}
	return sel, true
}

// withArgs gives the route of a tableless SELECT's plan the arguments of
// the prepared execute st; when the statement was rewritten into one
// with other placeholders, they are written in as literals.
func withArgs(plan *router.Plan, st *statement) *router.Plan {
	if st.args == nil || len(plan.Routes) != 1 {
		return plan
	}
	r := &plan.Routes[0]
	if sqlarg.Count(r.SQL) != len(st.args) {
		if sql, err := sqlarg.Interpolate(r.SQL, st.args, sqlarg.Backslash); err == nil {
			r.SQL = sql
		}
		return plan
	}
	r.Args, r.ArgTypes = st.args, st.argTypes
	return plan
}
