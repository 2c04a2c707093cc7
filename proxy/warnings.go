package proxy

import (
	"context"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/internal/sqllex"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/proxy/merge"
)

// SHOW WARNINGS, SHOW ERRORS and @@warning_count/@@error_count describe
// the session's last statement, as on MariaDB. Its warnings live on the
// backend connections that ran it, which go back to their pools (or run
// the next statement) as soon as it is done: so when a backend's
// response reports warnings, the lane asks that connection SHOW WARNINGS
// before giving it back, and the session keeps the rows. The error the
// client was last sent is kept too. Any statement other than these
// diagnostics starts afresh.

// diagnostics is the session's record of its last statement.
type diagnostics struct {
	mu       sync.Mutex // lanes of a multi-route statement add in parallel
	warnings []Row      // Level, Code, Message
	err      *mysql.MyError
	// beyond counts the warnings the statement raised but did not keep
	// (a LOAD DATA keeps the first max_error_count), for @@warning_count.
	beyond int64
	// stale: a statement without tables runs; the first condition it
	// raises replaces what is kept.
	stale bool
	// concatMerged: the merge joins the statement's GROUP_CONCATs, and
	// the data nodes' warnings 1260 are dropped (MergesConcat).
	concatMerged bool
}

// reset starts afresh, for a statement that uses tables.
func (d *diagnostics) reset() {
	d.mu.Lock()
	d.warnings, d.err, d.stale, d.beyond, d.concatMerged = nil, nil, false, 0, false
	d.mu.Unlock()
}

// keep starts a statement that uses no table.
func (d *diagnostics) keep() {
	d.mu.Lock()
	d.stale = true
	d.mu.Unlock()
}

func (d *diagnostics) clearStale() {
	if d.stale {
		d.warnings, d.err, d.stale, d.beyond, d.concatMerged = nil, nil, false, 0, false
	}
}

func (d *diagnostics) add(rows []Row) {
	d.mu.Lock()
	d.clearStale()
	if d.concatMerged {
		rows = slices.DeleteFunc(rows, concatCut)
	}
	d.warnings = append(d.warnings, rows...)
	d.mu.Unlock()
}

func (d *diagnostics) fail(m *mysql.MyError) {
	d.mu.Lock()
	d.clearStale()
	d.err = m
	d.mu.Unlock()
}

// rows returns the diagnostics as SHOW WARNINGS (errorsOnly: SHOW ERRORS)
// lists them: the backends' warnings, then the error.
func (d *diagnostics) rows(errorsOnly bool) []Row {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []Row
	for _, w := range d.warnings {
		if !errorsOnly || strings.EqualFold(string(w[0]), "Error") {
			out = append(out, w)
		}
	}
	if d.err != nil {
		out = append(out, rowOf("Error", uint64(d.err.Code), d.err.Message))
	}
	return out
}

// addBeyond counts n warnings raised but not kept.
func (d *diagnostics) addBeyond(n int64) {
	d.mu.Lock()
	d.beyond += n
	d.mu.Unlock()
}

// statementWarnings is the warning count of the EOF that ends a result,
// as MariaDB sends it: the conditions the statement raised (none for a
// statement without tables that raised none: the list kept is the one
// before it). Connector/J's getWarnings and the mariadb CLI read it.
func (d *diagnostics) statementWarnings() uint16 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stale {
		return 0
	}
	return uint16(min(int64(len(d.warnings))+d.beyond, math.MaxUint16))
}

// distinct drops the repeats of a condition (same level, code and
// message once logical names replace physical ones, logical) and returns
// the statement's warning count that remains.
func (d *diagnostics) distinct(logical func(string) string) uint16 {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, w := range d.warnings {
		if len(w) == 3 {
			d.warnings[i] = Row{w[0], w[1], []byte(logical(string(w[2])))}
		}
	}
	d.warnings = distinctRows(d.warnings)
	return uint16(min(int64(len(d.warnings))+d.beyond, math.MaxUint16))
}

// counts returns @@warning_count (every condition) and @@error_count.
func (d *diagnostics) counts() (warnings, errs int64) {
	all, errRows := d.rows(false), d.rows(true)
	d.mu.Lock()
	beyond := d.beyond
	d.mu.Unlock()
	return int64(len(all)) + beyond, int64(len(errRows))
}

// diagnosticsKey is the merge's key for the statement's Warner, which
// the diagnostics are: one key, so a merge's own warnings (a
// GROUP_CONCAT it cut) join the backends' at no cost to a statement that
// raises none.
type diagnosticsKey = merge.WarnerKey

// MergeWarning implements merge.Warner: the statement keeps the first
// loadMaxWarnings warnings (MariaDB's max_error_count, 64 by default) and
// counts the others.
func (d *diagnostics) MergeWarning(level string, code uint16, message string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clearStale()
	if len(d.warnings) >= loadMaxWarnings {
		d.beyond++
		return
	}
	d.warnings = append(d.warnings, rowOf(level, uint64(code), message))
}

// MergesConcat implements merge.Warner: the data nodes' warnings 1260
// kept so far are dropped, and those that come later are not kept. The
// merge's own come after it says so.
func (d *diagnostics) MergesConcat() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.clearStale()
	d.concatMerged = true
	d.warnings = slices.DeleteFunc(d.warnings, concatCut)
}

// concatCut reports whether w is warning 1260, a GROUP_CONCAT cut.
func concatCut(w Row) bool {
	return len(w) == 3 && string(w[1]) == "1260"
}

// withDiagnostics gives a statement's context the session's diagnostics,
// where the lanes of its execution put the backends' warnings.
func withDiagnostics(ctx context.Context, d *diagnostics) context.Context {
	if sc, ok := ctx.(*stmtCtx); ok {
		// Still a stmtCtx, so that backend watches find the watch.
		c := *sc
		c.diag = d
		return &c
	}
	return context.WithValue(ctx, diagnosticsKey{}, d)
}

func diagnosticsOf(ctx context.Context) *diagnostics {
	d, _ := ctx.Value(diagnosticsKey{}).(*diagnostics)
	return d
}

// collectWarnings asks bc, whose last response reported warnings, for
// them and adds them to the statement's diagnostics, if it has any.
func (bc *backendConn) collectWarnings(ctx context.Context) {
	n := bc.warnings
	bc.warnings = 0
	d := diagnosticsOf(ctx)
	if n == 0 || d == nil || bc.broken {
		return
	}
	if err := bc.send(mysql.COM_QUERY, "SHOW WARNINGS"); err != nil {
		return
	}
	h, err := bc.readHead()
	if err != nil || len(h.columns) != 3 {
		if err == nil && h.columns != nil {
			bc.discardRows()
		}
		return
	}
	var rows []Row
	for {
		p, err := bc.readRow()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return
		}
		vals, err := wire.SplitTextRow(p, 3, nil)
		if err != nil {
			bc.broken = true
			return
		}
		rows = append(rows, Row(vals).Clone())
	}
	d.add(rows)
}

// collectWarnings keeps the warnings of the lane's statement that ran
// last, route r (nil: none known).
func (l *lane) collectWarnings(r *routeRun) {
	if r != nil && r.route.Rows != nil && l.bc.warnings > 0 {
		// It inserted some of the client's rows: "at row N" names the
		// client's row.
		l.collectInsertWarnings(r.route.Rows)
		return
	}
	l.bc.collectWarnings(l.ex.ctx)
}

// collectInsertWarnings is collectWarnings for a route that inserted the
// client's rows at positions rows (Route.Rows).
func (l *lane) collectInsertWarnings(rows []int) {
	d := diagnosticsOf(l.ex.ctx)
	if d == nil {
		l.bc.warnings = 0
		return
	}
	var own diagnostics
	l.bc.collectWarnings(withDiagnostics(l.ex.ctx, &own))
	for i, w := range own.warnings {
		if len(w) == 3 {
			own.warnings[i] = Row{w[0], w[1], []byte(clientRow(string(w[2]), rows))}
		}
	}
	if len(own.warnings) > 0 {
		d.add(own.warnings)
	}
}

// clientRow renumbers the row of a message about a row ("at row 2", "Row
// 2 was truncated") of a statement that inserted the client's rows at
// positions rows (0-based) to the client's row number; other messages
// are unchanged.
func clientRow(msg string, rows []int) string {
	m := warningRow.FindStringSubmatchIndex(msg)
	if m == nil {
		return msg
	}
	n, err := strconv.Atoi(msg[m[4]:m[5]])
	if err != nil || n < 1 || n > len(rows) {
		return msg
	}
	return msg[:m[4]] + strconv.Itoa(rows[n-1]+1) + msg[m[5]:]
}

// clientRowError is clientRow for a backend's error of such a statement
// (rows nil: any other statement, unchanged).
func clientRowError(err error, rows []int) error {
	my, ok := err.(*mysql.MyError)
	if !ok || rows == nil {
		return err
	}
	msg := clientRow(my.Message, rows)
	if msg == my.Message {
		return err
	}
	return &mysql.MyError{Code: my.Code, State: my.State, Message: msg}
}

// isDiagnostics reports whether stmt reads the last statement's
// diagnostics (SHOW WARNINGS/ERRORS, @@warning_count, @@error_count), so
// it must not start afresh.
func isDiagnostics(stmt ast.StmtNode) bool {
	switch st := stmt.(type) {
	case *ast.ShowStmt:
		return st.Tp == ast.ShowWarnings || st.Tp == ast.ShowErrors
	case *ast.SelectStmt:
		f := &diagVarFinder{}
		st.Accept(f)
		return f.found
	}
	return false
}

type diagVarFinder struct{ found bool }

func (f *diagVarFinder) Enter(n ast.Node) (ast.Node, bool) {
	if v, ok := n.(*ast.VariableExpr); ok && v.IsSystem {
		switch strings.ToLower(v.Name) {
		case "warning_count", "error_count":
			f.found = true
		}
	}
	return n, f.found
}

func (f *diagVarFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// errmsgSize is MariaDB's MYSQL_ERRMSG_SIZE, the characters of a
// message of SHOW WARNINGS.
const errmsgSize = 512

// showDiagnostics answers SHOW WARNINGS, SHOW ERRORS and their COUNT(*)
// forms.
func (s *Session) showDiagnostics(st *ast.ShowStmt, out output) error {
	errorsOnly := st.Tp == ast.ShowErrors
	rows := s.diag.rows(errorsOnly)
	if st.CountWarningsOrErrors {
		return s.writeRows(newMemStream(diagnosticsColumns(st), []Row{rowOf(int64(len(rows)))}), out)
	}
	if st.Limit != nil {
		// SHOW WARNINGS LIMIT (diagnosticsLimit).
		if o, ok := st.Limit.Offset.(ast.ValueExpr); ok {
			n, _ := strconv.ParseUint(valueText(o), 10, 64)
			rows = rows[min(n, uint64(len(rows))):]
		}
		if c, ok := st.Limit.Count.(ast.ValueExpr); ok {
			n, _ := strconv.ParseUint(valueText(c), 10, 64)
			rows = rows[:min(n, uint64(len(rows)))]
		}
	}
	// A backend's message names its database and physical tables: the
	// client sees the logical ones, as in its errors (clientError).
	for i, r := range rows {
		if msg := s.srv.logicalNames(string(r[2])); msg != string(r[2]) {
			rows[i] = Row{r[0], r[1], []byte(msg)}
		}
	}
	return s.writeRows(newMemStream(diagnosticsColumns(st), rows), out)
}

// diagnosticsColumns are the columns of SHOW WARNINGS, SHOW ERRORS or
// their COUNT(*) forms, st.
func diagnosticsColumns(st *ast.ShowStmt) []*mysql.Field {
	if st.CountWarningsOrErrors {
		name := "@@session.warning_count"
		if st.Tp == ast.ShowErrors {
			name = "@@session.error_count"
		}
		return []*mysql.Field{itemInt(name, mysql.MYSQL_TYPE_LONGLONG, 21, mysql.UNSIGNED_FLAG)}
	}
	// MariaDB's: Level VARCHAR(7), Code INT UNSIGNED of length 4, Message
	// VARCHAR(MYSQL_ERRMSG_SIZE, 512), none NULL.
	return []*mysql.Field{
		itemString("Level", 7, mysql.NOT_NULL_FLAG),
		itemInt("Code", mysql.MYSQL_TYPE_LONG, 4, mysql.NOT_NULL_FLAG|mysql.UNSIGNED_FLAG),
		itemString("Message", errmsgSize, mysql.NOT_NULL_FLAG),
	}
}

// diagnosticsLimit reads SHOW WARNINGS or SHOW ERRORS with MariaDB's
// LIMIT [offset,] count or LIMIT count OFFSET offset, which the parser
// does not: nil for any other text.
func diagnosticsLimit(sql string, mode sqllex.Mode) *ast.ShowStmt {
	toks, ok := statementTokens(sql, mode) // authz.go
	if !ok {
		return nil
	}
	var words []string
	for _, t := range toks {
		if !t.word && t.text != "," {
			return nil
		}
		words = append(words, t.text)
	}
	if len(words) < 4 || words[0] != "SHOW" || words[2] != "LIMIT" {
		return nil
	}
	st := &ast.ShowStmt{Tp: ast.ShowWarnings}
	switch words[1] {
	case "WARNINGS":
	case "ERRORS":
		st.Tp = ast.ShowErrors
	default:
		return nil
	}
	number := func(w string) ast.ExprNode {
		n, err := strconv.ParseUint(w, 10, 64)
		if err != nil {
			return nil
		}
		return ast.NewValueExpr(n, "", "")
	}
	var count, offset ast.ExprNode
	switch rest := words[3:]; {
	case len(rest) == 1:
		count = number(rest[0])
	case len(rest) == 3 && rest[1] == ",":
		offset, count = number(rest[0]), number(rest[2])
	case len(rest) == 3 && rest[1] == "OFFSET":
		count, offset = number(rest[0]), number(rest[2])
	default:
		return nil
	}
	if count == nil || len(words) > 4 && offset == nil {
		return nil
	}
	st.Limit = &ast.Limit{Count: count, Offset: offset}
	return st
}
