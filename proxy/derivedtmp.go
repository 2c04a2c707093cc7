package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/charset"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/router"
)

// A SELECT whose only table is one derived table that groups, orders,
// limits or is DISTINCT over a sharded table (SELECT * FROM (SELECT k,
// COUNT(*) n FROM t GROUP BY k) t ORDER BY n DESC LIMIT 3; Django's,
// SQLAlchemy's and Drizzle's aggregate over an aggregate) is what the
// router cannot merge across data nodes: the statement around the
// derived table reads rows only the whole derived table has. The proxy
// does what MariaDB does with such a derived table, materializes it: it
// reads the derived table's query as a SELECT of its own, merged across
// data nodes as any, on the statement's connections (a transaction's own
// writes included); writes its rows into a temporary table of its own on
// one connection of one data source, its columns declared as the read
// describes them; runs the statement there with the temporary table in
// the derived table's place, under the client's alias; and drops the
// temporary table. The client gets MariaDB's answer, its column
// definitions those of a derived table (no schema, the base table's
// logical name or none). More rows than maxSubqueryValues or
// maxSubqueryBytes, and columns the proxy cannot declare as they are
// (ENUM, SET, FLOAT, TIMESTAMP, BIT, GEOMETRY, ...) or name (longer than
// 64 characters), get 1235.

// derivedTempTable is the temporary table's name, which no statement of
// the client's sees.
const derivedTempTable = "_shardflake_derived"

// derivedTempPlan plans st, a SELECT the router refused, as its derived
// table read first into a temporary table (router.MaterializedDerived);
// ok is false for any other statement and for a derived table the router
// cannot plan alone.
func (s *Session) derivedTempPlan(st *statement) (plan *router.Plan, ok bool) {
	if st.returning != "" || st.out.into != nil || st.out.found != nil || st.out.count != nil ||
		len(s.state.tableLocks) > 0 || s.stmtVars.assignments != "" {
		return nil, false
	}
	sql, ok := textWithArgs(st)
	if !ok {
		return nil, false
	}
	parts, ok := s.derivedTempParts(sql)
	if !ok {
		return nil, false
	}
	inner, err := s.planRead(parts.inner)
	if err != nil || len(inner.Routes) == 0 || inner.First != nil {
		return nil, false
	}
	ds := inner.Routes[0].DataSource
	s.diag.reset()
	plan = &router.Plan{Kind: router.KindSelect, Type: inner.Type, Tables: inner.Tables, Access: inner.Access,
		First: &router.SubqueriesFirst{Selects: []*router.Plan{inner}, Statement: parts.outer,
			Materialize: &router.MaterializedDerived{DataSource: ds, Table: derivedTempTable, Origins: parts.origins}}}
	seen := map[string]bool{}
	for _, r := range inner.Routes {
		if !seen[r.DataSource] {
			seen[r.DataSource] = true
			plan.Routes = append(plan.Routes, router.Route{DataSource: r.DataSource})
		}
	}
	return plan, true
}

// isDerivedTemp reports whether a statement being prepared is a SELECT
// over one derived table the proxy materializes: its executes run as
// text.
func (s *Session) isDerivedTemp(sql string, into *selectInto) bool {
	_, ok := s.derivedTempParts(sql)
	return ok && into == nil
}

// derivedTempText is a SELECT over one derived table, split for
// reading the derived table into a temporary table.
type derivedTempText struct {
	// inner is the derived table's query; outer, the SELECT with
	// derivedTempTable in its place; both keep the column names the
	// client's text gives.
	inner, outer string
	origins      map[string]string // router.MaterializedDerived.Origins
}

// derivedTempParts splits sql, a SELECT whose FROM is one derived table
// (a SELECT with an alias) and which names no other table and nothing
// only the proxy answers.
func (s *Session) derivedTempParts(sql string) (parts derivedTempText, ok bool) {
	stmts, err := s.parse(sql)
	if err != nil || len(stmts) != 1 {
		return parts, false
	}
	sel, isSelect := stmts[0].(*ast.SelectStmt)
	if !isSelect || sel.Kind != ast.SelectStmtKindSelect || sel.LockInfo != nil || sel.SelectIntoOpt != nil || sel.With != nil ||
		sel.SelectStmtOpts != nil && sel.SelectStmtOpts.CalcFoundRows || sel.Fields == nil ||
		sel.From == nil || sel.From.TableRefs == nil || sel.From.TableRefs.Right != nil {
		return parts, false
	}
	src, isSource := sel.From.TableRefs.Left.(*ast.TableSource)
	if !isSource || src.AsName.L == "" {
		return parts, false
	}
	query, isQuery := src.Source.(*ast.SelectStmt)
	if !isQuery || query.With != nil || query.LockInfo != nil || query.SelectIntoOpt != nil || !hasTable(query) || s.sessionBound(query) {
		return parts, false
	}
	parts.origins = minMaxOrigins(query)
	keepFieldNames(query)
	var b strings.Builder
	if err := query.Restore(format.NewRestoreCtx(restoreFlags, &b)); err != nil {
		return parts, false
	}
	parts.inner = b.String()
	src.Source = &ast.TableName{Name: ast.NewCIStr(derivedTempTable)}
	if len(tablesOf(sel)) != 1 || s.sessionBound(sel) {
		// Another table, or a subquery over one.
		return parts, false
	}
	keepFieldNames(sel)
	b.Reset()
	if err := sel.Restore(format.NewRestoreCtx(restoreFlags, &b)); err != nil {
		return parts, false
	}
	parts.outer = b.String()
	return parts, true
}

// minMaxOrigins returns, by select field name (lower case), the table of
// each field of sel that is MIN or MAX of a column whose table is known:
// named by its alias or name, or the only table of sel's FROM.
func minMaxOrigins(sel *ast.SelectStmt) map[string]string {
	if sel.Fields == nil {
		return nil
	}
	tables := map[string]string{} // alias or name -> name
	var only string
	sources := 0
	router.EachTableSource(sel, func(ts *ast.TableSource) {
		sources++
		if tn, ok := ts.Source.(*ast.TableName); ok {
			alias := tn.Name.L
			if ts.AsName.L != "" {
				alias = ts.AsName.L
			}
			tables[alias], only = tn.Name.O, tn.Name.O
		}
	})
	var origins map[string]string
	for _, f := range sel.Fields.Fields {
		agg, ok := f.Expr.(*ast.AggregateFuncExpr)
		if f.WildCard != nil || !ok || len(agg.Args) != 1 || (!strings.EqualFold(agg.F, ast.AggFuncMax) && !strings.EqualFold(agg.F, ast.AggFuncMin)) {
			continue
		}
		col, ok := agg.Args[0].(*ast.ColumnNameExpr)
		if !ok {
			continue
		}
		table := tables[col.Name.Table.L]
		if col.Name.Table.L == "" && sources == 1 {
			table = only
		}
		if table != "" {
			if origins == nil {
				origins = map[string]string{}
			}
			origins[strings.ToLower(fieldName(f))] = table
		}
	}
	return origins
}

// sessionBound reports whether n reads what the proxy answers for the
// client's session (localValue: DATABASE(), CONNECTION_ID(), VERSION(),
// @@warning_count, ...), or a variable, or sets LAST_INSERT_ID(expr):
// run on a data source's connection, the data source's session would
// answer for itself.
func (s *Session) sessionBound(n ast.Node) bool {
	f := &sessionFinder{s: s}
	n.Accept(f)
	return f.found
}

type sessionFinder struct {
	s     *Session
	found bool
}

func (f *sessionFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.VariableExpr:
		f.found = true
	case *ast.FuncCallExpr:
		if _, local := f.s.localValue(x); local || x.FnName.L == "last_insert_id" {
			f.found = true
		}
	}
	return n, f.found
}

func (f *sessionFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// runDerivedTemp runs plan, a SELECT whose First.Materialize is set, on
// src: the derived table's query, its rows into the temporary table on
// one connection, the statement there, and the temporary table dropped.
// The rows are read as text and written again for the client's protocol.
func (s *Session) runDerivedTemp(ctx context.Context, plan *router.Plan, src connSource) (result, error) {
	first, m := plan.First, plan.First.Materialize
	read := first.Selects[0]
	rows, err := s.readRows(ctx, read, src, "a derived table")
	if err != nil {
		return result{}, err
	}
	derived := rows.Columns()
	create, err := s.derivedTempCreate(ctx, read, derived, m.Table)
	if err != nil {
		rows.Close()
		return result{}, err
	}
	inserts, err := derivedTempInserts(rows, derived, m.Table, s.lexMode())
	if err != nil {
		return result{}, err
	}
	bcs, err := src.acquire(ctx, m.DataSource, 1)
	if err != nil {
		return result{}, err
	}
	held := heldConn{bc: bcs[0]}
	quiet := withDiagnostics(ctx, nil) // the proxy's own statements warn nobody
	run := func(ctx context.Context, sql string, kind router.StatementKind) (result, error) {
		p := &router.Plan{Kind: kind, Routes: []router.Route{{DataSource: m.DataSource, SQL: sql}}}
		if kind == router.KindSelect {
			// sql_select_limit is the statement's, not the derived
			// table's.
			p = s.withStatementVars(p)
		}
		return runPlanMode(ctx, p, held, s.srv.merger, s.srv.rules.Server.MergeMemoryBytes, s.srv.obs, backendText, nil)
	}
	if _, err := run(quiet, create, router.KindOther); err != nil {
		src.release(held.bc)
		return result{}, readOnlyRefusal(err)
	}
	res, err := func() (result, error) {
		for _, ins := range inserts {
			if _, err := run(quiet, ins, router.KindOther); err != nil {
				return result{}, err
			}
		}
		res, err := run(ctx, first.Statement, router.KindSelect)
		if err != nil || res.rows == nil {
			return res, err
		}
		cols := derivedColumns(res.rows.Columns(), derived, m)
		all, err := drainClone(res.rows)
		if err != nil {
			return result{}, err
		}
		res.rows = newMemStream(cols, all)
		return res, nil
	}()
	// Dropped also after the client's KILL QUERY cancelled the
	// statement: closing a transaction's connection would end it.
	dropCtx, cancel := context.WithTimeout(context.WithoutCancel(quiet), metaTimeout)
	defer cancel()
	if _, derr := run(dropCtx, string(appendIdent([]byte("DROP TEMPORARY TABLE IF EXISTS "), m.Table)), router.KindOther); derr != nil && !held.bc.broken {
		// A connection that may keep the table goes no further.
		s.log.Warn("the temporary table of a derived table could not be dropped; closing the connection", "datasource", m.DataSource, "err", errLine(derr))
		held.bc.close()
	}
	src.release(held.bc)
	return res, err
}

// readOnlyRefusal is err, the error of creating a derived table's
// temporary table, as the client hears it: in a READ ONLY transaction or
// session MariaDB creates none (1792), where it reads the derived table
// itself, so the statement is one the proxy cannot run there (1235).
func readOnlyRefusal(err error) error {
	var my *mysql.MyError
	if errors.As(err, &my) && my.Code == mysql.ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION {
		return &NotSupportedError{What: "a derived table spanning data nodes read by a statement the proxy cannot merge, in a READ ONLY transaction (the proxy reads such a derived table into a temporary table, which MariaDB does not create there)"}
	}
	return err
}

// heldConn is one connection every route of the proxy's own statements
// runs on, kept from one to the next: a temporary table lives on it.
type heldConn struct{ bc *backendConn }

func (h heldConn) acquire(_ context.Context, ds string, _ int) ([]*backendConn, error) {
	if ds != h.bc.pool.name {
		return nil, &InternalError{Msg: "a derived table's temporary table is on " + h.bc.pool.name + ", not " + ds}
	}
	return []*backendConn{h.bc}, nil
}

func (h heldConn) release(*backendConn) {}

// derivedTempCreate is the CREATE TEMPORARY TABLE of table whose columns
// are cols, a derived table's as read merged (with their real
// collations, read from read's first route). Two columns of one name get
// MariaDB's 1060.
func (s *Session) derivedTempCreate(ctx context.Context, read *router.Plan, cols []*mysql.Field, table string) (string, error) {
	var collations []uint16
	if s.srv.collations != nil {
		var err error
		if collations, err = s.srv.collations.RouteCollations(ctx, read.Routes[0]); err != nil {
			return "", err
		}
	}
	seen := map[string]bool{}
	b := []byte("CREATE TEMPORARY TABLE ")
	b = appendIdent(b, table)
	b = append(b, " ("...)
	for i, f := range cols {
		name := string(f.Name)
		if seen[strings.ToLower(name)] {
			return "", mysql.NewError(mysql.ER_DUP_FIELDNAME, fmt.Sprintf("Duplicate column name '%s'", name))
		}
		seen[strings.ToLower(name)] = true
		if utf8.RuneCountInString(name) > 64 || strings.HasSuffix(name, " ") {
			return "", &NotSupportedError{What: fmt.Sprintf("a derived table spanning data nodes read by a statement the proxy cannot merge, whose column %q is longer than 64 characters or ends in a space (the proxy reads such a derived table into a temporary table, whose columns cannot be so named): give it a shorter alias", name)}
		}
		var coll uint16
		if i < len(collations) {
			coll = collations[i]
		}
		decl, err := derivedColumnType(f, coll)
		if err != nil {
			return "", err
		}
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendIdent(b, name)
		b = append(b, ' ')
		b = append(b, decl...)
		if f.Flag&mysql.NOT_NULL_FLAG != 0 {
			b = append(b, " NOT NULL"...)
		} else {
			b = append(b, " NULL"...)
		}
	}
	b = append(b, ')')
	return string(b), nil
}

// derivedColumnType declares a column described as f, whose real
// collation (a text column's) is coll, so that MariaDB describes it as
// f: the type, its length or display width, decimals, UNSIGNED,
// ZEROFILL, the character set and collation. Others get 1235.
func derivedColumnType(f *mysql.Field, coll uint16) (string, error) {
	refuse := func(why string) error {
		return &NotSupportedError{What: fmt.Sprintf("a derived table spanning data nodes read by a statement the proxy cannot merge, whose column %s is of type %s (the proxy reads such a derived table into a temporary table and declares its columns as they are%s)", f.Name, fieldTypeName(f), why)}
	}
	attrs := ""
	if f.Flag&mysql.UNSIGNED_FLAG != 0 {
		attrs += " UNSIGNED"
	}
	if f.Flag&mysql.ZEROFILL_FLAG != 0 {
		attrs += " ZEROFILL"
	}
	length := strconv.FormatUint(uint64(f.ColumnLength), 10)
	dec := strconv.Itoa(int(f.Decimal))
	switch f.Type {
	case mysql.MYSQL_TYPE_TINY:
		return "TINYINT(" + length + ")" + attrs, nil
	case mysql.MYSQL_TYPE_SHORT:
		return "SMALLINT(" + length + ")" + attrs, nil
	case mysql.MYSQL_TYPE_INT24:
		return "MEDIUMINT(" + length + ")" + attrs, nil
	case mysql.MYSQL_TYPE_LONG:
		return "INT(" + length + ")" + attrs, nil
	case mysql.MYSQL_TYPE_LONGLONG:
		return "BIGINT(" + length + ")" + attrs, nil
	case mysql.MYSQL_TYPE_YEAR:
		return "YEAR", nil
	case mysql.MYSQL_TYPE_NEWDECIMAL:
		precision := int(f.ColumnLength)
		if f.Flag&mysql.UNSIGNED_FLAG == 0 {
			precision-- // the sign
		}
		if f.Decimal > 0 {
			precision-- // the point
		}
		if precision < 1 || precision > 65 || f.Decimal > 38 || int(f.Decimal) > precision {
			return "", refuse(", not this precision")
		}
		return "DECIMAL(" + strconv.Itoa(precision) + "," + dec + ")" + attrs, nil
	case mysql.MYSQL_TYPE_FLOAT:
		return "", refuse(", not FLOAT, whose text MariaDB writes with 6 digits of its value")
	case mysql.MYSQL_TYPE_DOUBLE:
		if f.Decimal == notFixedDecimals && f.ColumnLength == 22 {
			return "DOUBLE" + attrs, nil
		}
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE:
		return "DATE", nil
	case mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_DATETIME2:
		return "DATETIME(" + dec + ")", nil
	case mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		return "TIME(" + dec + ")", nil
	case mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2:
		return "", refuse(", not TIMESTAMP, whose text in the session's time zone may name two instants")
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_STRING,
		mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB, mysql.MYSQL_TYPE_BLOB:
		if f.Flag&(mysql.ENUM_FLAG|mysql.SET_FLAG) != 0 {
			break
		}
		return stringColumnType(f, coll, refuse)
	}
	return "", refuse("")
}

// stringColumnType declares a text or binary string column described as
// f (derivedColumnType). A column of a table keeps its type; an
// expression longer than 512 characters, or a BLOB or TEXT one, is
// materialized by MariaDB as the smallest BLOB or TEXT that holds its
// bytes in its own character set (read on 10.11: CONCAT of 1016
// characters is a TEXT, GROUP_CONCAT a MEDIUMTEXT).
func stringColumnType(f *mysql.Field, coll uint16, refuse func(string) error) (string, error) {
	blob := f.Type != mysql.MYSQL_TYPE_VARCHAR && f.Type != mysql.MYSQL_TYPE_VAR_STRING && f.Type != mysql.MYSQL_TYPE_STRING
	shownLen, realLen, tail := uint32(1), uint32(1), ""
	if f.Charset != 63 {
		shown, err := charset.GetCollationByID(int(f.Charset))
		if err != nil {
			return "", refuse(", not in this character set")
		}
		real, err := charset.GetCollationByID(int(coll))
		if err != nil || coll == 0 {
			return "", refuse(", not in this collation")
		}
		shownCS, err := charset.GetCharsetInfo(shown.CharsetName)
		if err != nil || shownCS.Maxlen < 1 {
			return "", refuse(", not in this character set")
		}
		realCS, err := charset.GetCharsetInfo(real.CharsetName)
		if err != nil || realCS.Maxlen < 1 {
			return "", refuse(", not in this character set")
		}
		shownLen, realLen = uint32(shownCS.Maxlen), uint32(realCS.Maxlen)
		tail = " CHARACTER SET " + real.CharsetName + " COLLATE " + real.Name
	}
	chars := f.ColumnLength / shownLen
	if f.ColumnLength%shownLen != 0 && f.ColumnLength != 1<<32-1 {
		return "", refuse(", not this length")
	}
	text, bin := "TEXT", "BLOB"
	if f.Charset == 63 {
		text = bin
	}
	switch {
	case blob && len(f.OrgTable) > 0:
		if f.ColumnLength == 1<<32-1 {
			return "LONG" + text + tail, nil
		}
		if kind, ok := blobKind(chars); ok {
			return kind + text + tail, nil
		}
		return "", refuse(", not this length")
	case blob || len(f.OrgTable) == 0 && chars > 512:
		bytes := uint64(chars) * uint64(realLen)
		switch {
		case bytes < 1<<8:
			return "TINY" + text + tail, nil
		case bytes < 1<<16:
			return text + tail, nil
		case bytes < 1<<24:
			return "MEDIUM" + text + tail, nil
		}
		return "LONG" + text + tail, nil
	case f.Charset == 63 && f.Type == mysql.MYSQL_TYPE_STRING:
		return fmt.Sprintf("BINARY(%d)", chars), nil
	case f.Charset == 63:
		return fmt.Sprintf("VARBINARY(%d)", chars), nil
	case f.Type == mysql.MYSQL_TYPE_STRING:
		return fmt.Sprintf("CHAR(%d)", chars) + tail, nil
	}
	return fmt.Sprintf("VARCHAR(%d)", chars) + tail, nil
}

// blobKind is the prefix of the BLOB or TEXT type of a table's column of
// n bytes or characters.
func blobKind(n uint32) (string, bool) {
	switch n {
	case 255:
		return "TINY", true
	case 65535:
		return "", true
	case 16777215:
		return "MEDIUM", true
	}
	return "", false
}

// derivedTempInserts reads rows, the derived table's, to their end and
// returns the INSERTs that write them into table as literals
// (appendFillValue, as INSERT ... SELECT writes them); past
// maxSubqueryValues rows or maxSubqueryBytes, 1235.
func derivedTempInserts(rows RowStream, cols []*mysql.Field, table string, mode sqlarg.Mode) ([]string, error) {
	defer rows.Close()
	head := appendIdent([]byte("INSERT INTO "), table)
	head = append(head, " VALUES "...)
	var out []string
	b := append([]byte(nil), head...)
	n, size := 0, 0
	for {
		row, err := rows.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if n++; n > maxSubqueryValues {
			return nil, derivedTooLarge()
		}
		if len(b) > len(head) {
			b = append(b, ',')
		}
		start := len(b)
		if b, err = appendFillRow(b, cols, row, mode); err != nil {
			return nil, err
		}
		if size += len(b) - start; size > maxSubqueryBytes {
			return nil, derivedTooLarge()
		}
		if len(b) >= fillStatementBytes {
			out = append(out, string(b))
			b = append(b[:0], head...)
		}
	}
	if len(b) > len(head) {
		out = append(out, string(b))
	}
	return out, nil
}

func derivedTooLarge() error {
	return &NotSupportedError{What: fmt.Sprintf("a derived table spanning data nodes of more than %d rows or %d MiB read by a statement the proxy cannot merge (the proxy reads such a derived table into a temporary table first)", maxSubqueryValues, maxSubqueryBytes>>20)}
}

// derivedColumns returns cols, the columns of the statement run over
// m's temporary table, as MariaDB describes them over the derived table
// whose columns, as read, are derived: a column of the derived table has
// no schema, keeps its name as its original name, is of its base table
// when it is a table's column or MIN or MAX of one (m.Origins), else of
// none, and has the read's NO_DEFAULT_VALUE flag where the temporary
// table gives its own.
func derivedColumns(cols, derived []*mysql.Field, m *router.MaterializedDerived) []*mysql.Field {
	out := make([]*mysql.Field, len(cols))
	for i, f := range cols {
		out[i] = f
		if string(f.OrgTable) != m.Table {
			continue
		}
		c := *f
		c.Schema, c.OrgTable = nil, nil
		for _, d := range derived {
			if strings.EqualFold(string(d.Name), string(f.OrgName)) {
				if len(d.OrgTable) > 0 {
					c.OrgTable = d.OrgTable
				}
				c.Flag = c.Flag&^noDefaultValueFlag | d.Flag&noDefaultValueFlag
				break
			}
		}
		if table, ok := m.Origins[strings.ToLower(string(f.OrgName))]; ok && c.OrgTable == nil {
			c.OrgTable = []byte(table)
		}
		out[i] = &c
	}
	return out
}

// subqueriesOrDerivedPlan plans st, a SELECT, UPDATE or DELETE the router
// refused with planErr, with its subqueries evaluated first
// (subqueriesFirstPlan) or, where that fails, its derived table read
// into a temporary table (derivedTempPlan); otherwise it returns the
// former's error.
func (s *Session) subqueriesOrDerivedPlan(st *statement, planErr error) (*router.Plan, error) {
	plan, err := s.subqueriesFirstPlan(st, planErr)
	if err == nil {
		return plan, nil
	}
	if plan, ok := s.derivedTempPlan(st); ok {
		return plan, nil
	}
	return nil, err
}

// derivedTempColumns returns the columns of ps when it is a SELECT over
// one derived table the proxy materializes (ok): the derived table's
// query described as any prepared SELECT, a temporary table of its
// columns made on a connection of its first route's data source, and the
// statement over it prepared there, described as over the derived table.
func (s *Session) derivedTempColumns(ctx context.Context, ps *preparedStmt) (cols []*mysql.Field, ok bool, err error) {
	parts, ok := s.derivedTempParts(ps.parsed)
	if !ok {
		return nil, false, nil
	}
	inner, ok := s.describedPrepared(ps, parts.inner)
	if !ok || inner.pp.Kind() != router.KindSelect {
		return nil, false, nil
	}
	derived, err := s.routedColumns(ctx, inner)
	if err != nil {
		return nil, true, err
	}
	plan, err := standInPlan(inner)
	if err != nil {
		return nil, true, err
	}
	create, err := s.derivedTempCreate(ctx, plan, derived, derivedTempTable)
	if err != nil {
		return nil, true, err
	}
	src := poolSource{s}
	bcs, err := src.acquire(ctx, plan.Routes[0].DataSource, 1)
	if err != nil {
		return nil, true, err
	}
	bc := bcs[0]
	defer src.release(bc)
	bc.nc.SetReadDeadline(time.Now().Add(metaTimeout))
	defer bc.nc.SetReadDeadline(time.Time{})
	if _, err := bc.exec(create); err != nil {
		return nil, true, readOnlyRefusal(err)
	}
	cols, err = bc.prepareColumns(parts.outer)
	if _, derr := bc.exec(string(appendIdent([]byte("DROP TEMPORARY TABLE IF EXISTS "), derivedTempTable))); derr != nil && !bc.broken {
		bc.close()
	}
	if err != nil {
		return nil, true, err
	}
	return derivedColumns(cols, derived, &router.MaterializedDerived{Table: derivedTempTable, Origins: parts.origins}), true, nil
}
