package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/shardflake/shardflake/algorithm"
	"github.com/shardflake/shardflake/config"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/shardflake/shardflake/idgen"
	"github.com/shardflake/shardflake/proxy/internal/loadfile"
	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

// LOAD DATA LOCAL INFILE into sharded and broadcast tables.
//
// A broadcast table's copies each get the whole file: the statement runs
// on every data source and every packet of the client's file goes to all
// of them, so each reads, converts and warns as one MariaDB would.
//
// Into a sharded table the proxy reads the file itself (loadfile, which
// reads it field by field as MariaDB does), takes each row's sharding
// values from its fields (or a SET col = @var or constant), generates the
// key of tables whose key column the statement leaves out, routes the row
// and writes it, re-serialized in MariaDB's default format, into a batch
// of its data node. A full batch is loaded into its physical table with
// LOAD DATA LOCAL INFILE of its own, the client's column list and SET
// clause unchanged (the generated key first): the data node converts the
// values, fills the defaults and raises the warnings (1261, 1262, 1265,
// 1366, ...) exactly as for the client's file; the proxy renumbers the
// rows the warnings name to the rows of the client's file. The physical
// tables load in parallel, a connection per data node. Memory stays
// bounded whatever the file's size: per data node one batch being
// filled, one waiting and one being loaded.
//
// All-or-nothing as every multi-route write (stmtatomic.go): the loads
// run in a transaction on every data source of the table (a savepoint
// inside the client's transaction); the first failure stops the routing,
// the rest of the client's file is read and dropped, and everything is
// rolled back.

// loadBatchBytes is the size at which a data node's batch is loaded.
const loadBatchBytes = 256 << 10

// loadMaxWarnings is how many warnings the statement keeps, the first
// ones by row, as MariaDB keeps max_error_count (64 by default).
const loadMaxWarnings = 64

// loadInfileName is the file name the proxy's own LOAD DATA statements
// give; the data source asks for it back.
const loadInfileName = "shardflake.load"

// loadTarget is what LOAD DATA into a sharded table needs, read from the
// statement and the table before the file is asked for.
type loadTarget struct {
	rule   *config.TableRule
	format loadfile.Format
	ignore uint64
	items  int // fields read per row: the column list's length
	shard  []loadShard
	// gen is the key generator when the statement leaves the key
	// column out: the key is generated and sent as the first field.
	gen    idgen.KeyGenerator
	keyCol string
	// nullKey is the field of the key column when the statement gives
	// it, -1 otherwise: a NULL there gets a generated key, as in INSERT,
	// and so does a 0 when zeroKey is set (an AUTO_INCREMENT key column
	// and a sql_mode without NO_AUTO_VALUE_ON_ZERO, as MariaDB's LOAD
	// DATA gives such a 0 the next value).
	nullKey int
	zeroKey bool
	nodes   map[config.DataNode]int
	// head and tail wrap the physical table's name in each node's LOAD
	// DATA statement.
	head, tail string

	logicalDB  string
	physicalDB map[string]string // data source -> its database
	firstKey   uint64            // the first generated integer key, for LAST_INSERT_ID
}

// loadShard is where one sharding column's value comes from: a field of
// the row, or a constant of the SET clause.
type loadShard struct {
	col      string
	field    int // -1: constant (or the generated key when gen is set)
	constant algorithm.Value
	integer  bool // the column is an integer: a numeric field routes as a number
}

// loadColumns is the column list of the statement, or the table's.
func (s *Session) loadColumns(ctx context.Context, st *ast.LoadDataStmt, rule *config.TableRule) (names []string, integer map[string]bool, err error) {
	home := rule.DataNodes[0]
	p, err := s.srv.pool(home.DataSource, false)
	if err != nil {
		return nil, nil, err
	}
	q := []byte("SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ")
	ds := s.srv.rules.DataSource(home.DataSource)
	if ds == nil {
		return nil, nil, &InternalError{Msg: "LOAD DATA: no data source " + home.DataSource}
	}
	q, _ = sqlarg.AppendLiteral(q, ds.Database, sqlarg.Backslash)
	q = append(q, " AND TABLE_NAME = "...)
	q, _ = sqlarg.AppendLiteral(q, home.Table, sqlarg.Backslash)
	q = append(q, " ORDER BY ORDINAL_POSITION"...)
	rows, err := queryPool(ctx, p, string(q))
	if err != nil {
		return nil, nil, err
	}
	if len(rows) == 0 {
		return nil, nil, mysql.NewDefaultError(mysql.ER_NO_SUCH_TABLE, s.srv.rules.DatabaseName, rule.Name)
	}
	integer = map[string]bool{}
	for _, r := range rows {
		name := strings.ToLower(string(r[0]))
		if _, ok := integerMax[strings.ToLower(string(r[1]))]; ok {
			integer[name] = true
		}
		if len(st.ColumnsAndUserVars) == 0 {
			names = append(names, name)
		}
	}
	for _, it := range st.ColumnsAndUserVars {
		if it.UserVar != nil {
			names = append(names, "@"+strings.ToLower(it.UserVar.Name))
		} else {
			names = append(names, it.ColumnName.Name.L)
		}
	}
	return names, integer, nil
}

// loadFormat reads the statement's FIELDS and LINES clauses.
func loadFormat(st *ast.LoadDataStmt) (loadfile.Format, error) {
	f := loadfile.Default
	if fi := st.FieldsInfo; fi != nil {
		if fi.DefinedNullBy != nil {
			return f, &NotSupportedError{What: "LOAD DATA ... NULL DEFINED BY (not MariaDB's)"}
		}
		if fi.Terminated != nil {
			f.FieldTerm = *fi.Terminated
		}
		if fi.Enclosed != nil {
			f.Enclosed = *fi.Enclosed
		}
		if fi.Escaped != nil {
			f.Escaped = *fi.Escaped
		}
	}
	if li := st.LinesInfo; li != nil {
		if li.Terminated != nil {
			f.LineTerm = *li.Terminated
		}
		if li.Starting != nil {
			f.LineStart = *li.Starting
		}
	}
	return f, nil
}

// checkFormat adds the character set's multi-byte reading to f and
// refuses what the proxy cannot read as MariaDB does.
func checkFormat(st *ast.LoadDataStmt, f *loadfile.Format) error {
	if st.Charset != nil {
		switch cs := strings.ToLower(*st.Charset); cs {
		case "big5":
			f.CharLen = func(b byte) int { return 1 + boolInt(b >= 0xa1 && b <= 0xf9) }
		case "gbk":
			f.CharLen = func(b byte) int { return 1 + boolInt(b >= 0x81 && b <= 0xfe) }
		case "sjis", "cp932":
			f.CharLen = func(b byte) int { return 1 + boolInt((b >= 0x81 && b <= 0x9f) || (b >= 0xe0 && b <= 0xfc)) }
		case "ucs2", "utf16", "utf16le", "utf32":
			return &NotSupportedError{What: "LOAD DATA LOCAL INFILE into a sharded table with CHARACTER SET " + cs}
		}
	}
	if err := f.Check(); err != nil {
		return &NotSupportedError{What: "LOAD DATA LOCAL INFILE into a sharded table with " + strings.TrimPrefix(err.Error(), loadfile.ErrFormat.Error()+"\n")}
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// prepareLoad checks everything that can be checked before the file is
// asked for: the format, where each sharding value comes from, and that
// the SET clause leaves the sharding columns to values the proxy reads.
func (s *Session) prepareLoad(ctx context.Context, st *ast.LoadDataStmt, rule *config.TableRule) (*loadTarget, error) {
	if st.Format != nil || len(st.Options) > 0 {
		return nil, &NotSupportedError{What: "LOAD DATA FORMAT and WITH options (TiDB's, not MariaDB's)"}
	}
	f, err := loadFormat(st)
	if err != nil {
		return nil, err
	}
	if err := checkFormat(st, &f); err != nil {
		return nil, err
	}
	names, integer, err := s.loadColumns(ctx, st, rule)
	if err != nil {
		return nil, err
	}
	t := &loadTarget{rule: rule, format: f, items: len(names), nullKey: -1, nodes: map[config.DataNode]int{}}
	if st.IgnoreLines != nil {
		t.ignore = *st.IgnoreLines
	}
	for i, n := range rule.DataNodes {
		t.nodes[n] = i
	}
	set := map[string]ast.ExprNode{}
	for _, as := range st.ColumnAssignments {
		set[as.Column.Name.L] = as.Expr
	}
	keyCol := strings.ToLower(rule.KeyColumn)
	if keyCol != "" {
		if _, inSet := set[keyCol]; !inSet {
			if i := fieldIndex(names, keyCol); i >= 0 {
				t.nullKey = i
				t.zeroKey = s.prepareOptions().ZeroKey == router.ZeroKeyGenerates && s.srv.current().autoIncrement(rule.Name)
			} else if gen := s.srv.keys[rule.KeyGenerator]; gen != nil {
				t.gen, t.keyCol = gen, keyCol
			}
		}
	}
	for _, col := range rule.ShardingColumns() {
		sc, err := t.shardSource(col, set, names, integer[col], keyCol)
		if err != nil {
			return nil, err
		}
		t.shard = append(t.shard, sc)
	}
	if err := t.buildStatement(st, names); err != nil {
		return nil, err
	}
	return t, nil
}

// fieldIndex is the position of name in a LOAD DATA column list, or -1.
func fieldIndex(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

// shardSource says where each row's value of sharding column col comes
// from: a field of the file (names is the column list), a @variable of it
// or a constant (set holds the SET assignments), or the key generator.
func (t *loadTarget) shardSource(col string, set map[string]ast.ExprNode, names []string, integer bool, keyCol string) (loadShard, error) {
	rule := t.rule
	sc := loadShard{col: col, field: -1, integer: integer}
	if e, ok := set[col]; ok {
		switch x := e.(type) {
		case *ast.VariableExpr:
			if x.IsSystem || fieldIndex(names, "@"+strings.ToLower(x.Name)) < 0 {
				return sc, &NotSupportedError{What: fmt.Sprintf("LOAD DATA into %s with SET %s = %s: the sharding column must come from the file, a @variable of the column list or a constant", rule.Name, col, exprText(e))}
			}
			sc.field = fieldIndex(names, "@"+strings.ToLower(x.Name))
		case ast.ValueExpr:
			switch v := x.GetValue().(type) {
			case int64, uint64, string, float64:
				sc.constant = v
			default:
				return sc, &NotSupportedError{What: fmt.Sprintf("LOAD DATA into %s with SET %s = %s: the sharding column must come from the file, a @variable of the column list or a constant", rule.Name, col, exprText(e))}
			}
		default:
			return sc, &NotSupportedError{What: fmt.Sprintf("LOAD DATA into %s with SET %s = %s: the proxy cannot evaluate the expression to pick each row's data node; give the column in the column list, or SET it to a @variable or a constant", rule.Name, col, exprText(e))}
		}
	} else if i := fieldIndex(names, col); i >= 0 {
		sc.field = i
	} else if !(col == keyCol && t.gen != nil) {
		return sc, &NotSupportedError{What: fmt.Sprintf("LOAD DATA into %s without sharding column %s, which picks the data node of each row: name it in the column list", rule.Name, col)}
	}
	return sc, nil
}

// buildStatement writes the statement each batch runs, around the
// physical table's name: t.head before it, t.tail after it.
func (t *loadTarget) buildStatement(st *ast.LoadDataStmt, names []string) error {
	var head strings.Builder
	head.WriteString("LOAD DATA LOCAL INFILE '" + loadInfileName + "'")
	switch st.OnDuplicate {
	case ast.OnDuplicateKeyHandlingReplace:
		head.WriteString(" REPLACE")
	case ast.OnDuplicateKeyHandlingIgnore:
		head.WriteString(" IGNORE")
	}
	head.WriteString(" INTO TABLE ")
	t.head = head.String()
	var tail strings.Builder
	if st.Charset != nil {
		tail.WriteString(" CHARACTER SET " + quoteName(*st.Charset))
	}
	tail.WriteString(" " + loadfile.CanonicalClause + " (")
	if t.gen != nil {
		tail.WriteString(quoteName(t.keyCol))
	}
	list := names
	for i, n := range list {
		if i > 0 || t.gen != nil {
			tail.WriteByte(',')
		}
		if strings.HasPrefix(n, "@") {
			if len(st.ColumnsAndUserVars) > 0 {
				n = st.ColumnsAndUserVars[i].UserVar.Name
			} else {
				n = n[1:]
			}
			tail.WriteString("@" + quoteName(n))
		} else {
			tail.WriteString(quoteName(n))
		}
	}
	tail.WriteByte(')')
	for i, as := range st.ColumnAssignments {
		if i == 0 {
			tail.WriteString(" SET ")
		} else {
			tail.WriteString(", ")
		}
		expr, err := restoreExpr(as.Expr)
		if err != nil {
			return err
		}
		tail.WriteString(quoteName(as.Column.Name.O) + " = " + expr)
	}
	t.tail = tail.String()
	return nil
}

func exprText(e ast.ExprNode) string {
	var b strings.Builder
	if err := e.Restore(format.NewRestoreCtx(restoreFlags, &b)); err != nil {
		return "the expression"
	}
	return b.String()
}

// nodeSQL is the LOAD DATA statement that loads a batch into data node i.
func (t *loadTarget) nodeSQL(i int) string {
	return t.head + quoteName(t.rule.DataNodes[i].Table) + t.tail
}

// clientFile reads the client's LOCAL INFILE packets as one stream, up to
// the empty packet that ends the file.
type clientFile struct {
	wc   *wire.Conn
	cur  []byte
	done bool
	err  error
}

// next returns the file's next packet, valid until the next call; false
// at the end of the file or when the client went away (err).
func (f *clientFile) next() ([]byte, bool) {
	if f.done || f.err != nil {
		return nil, false
	}
	pkt, err := f.wc.ReadPacket()
	if err != nil {
		f.err = err
		return nil, false
	}
	if len(pkt) == 0 {
		f.done = true
		return nil, false
	}
	return pkt, true
}

func (f *clientFile) Read(p []byte) (int, error) {
	for len(f.cur) == 0 {
		pkt, ok := f.next()
		if !ok {
			if f.err != nil {
				return 0, f.err
			}
			return 0, io.EOF
		}
		f.cur = pkt
	}
	n := copy(p, f.cur)
	f.cur = f.cur[n:]
	return n, nil
}

// drain reads the file to its end, so that the client's next packet is
// its next command; false when the client went away.
func (f *clientFile) drain() bool {
	f.cur = nil
	for {
		if _, ok := f.next(); !ok {
			return f.err == nil
		}
	}
}

// askFile sends the client the request for the statement's file.
func (s *Session) askFile(path string) error {
	p := wire.AppendLocalInfile(s.wc.Scratch(), path)
	err := s.wc.WritePacket(p)
	s.wc.SetScratch(p)
	if err == nil {
		err = s.wc.Flush()
	}
	return err
}

// loadRouted runs LOAD DATA LOCAL INFILE into a sharded or broadcast
// table; the statement's checks that apply to every table are done.
func (s *Session) loadRouted(ctx context.Context, st *ast.LoadDataStmt, more bool) error {
	rules := s.srv.rules
	name := st.Table.Name.O
	var target *loadTarget
	var dss []string
	if rule := rules.Table(name); rule != nil {
		var err error
		if target, err = s.prepareLoad(ctx, st, rule); err != nil {
			return err
		}
		dss = rule.DataSources()
	} else {
		dss = rules.DataSourceNames()
	}
	// The guard takes a connection per route: one per data node of a
	// sharded table (loaded in parallel), one per copy of a broadcast one.
	plan := &router.Plan{Kind: router.KindInsert}
	if target != nil {
		for _, n := range target.rule.DataNodes {
			plan.Routes = append(plan.Routes, router.Route{DataSource: n.DataSource})
		}
	} else {
		for _, ds := range dss {
			plan.Routes = append(plan.Routes, router.Route{DataSource: ds})
		}
	}
	var src connSource = poolSource{s}
	inTxn := s.inTransaction()
	if inTxn {
		if !s.txn.active {
			s.startTxn("START TRANSACTION")
		}
		if err := s.checkMultiSource(plan); err != nil {
			return err
		}
		src = txnSource{s: s, write: true}
	}
	guard := newStmtGuard(s, src, inTxn)
	var ok wire.OK
	err := guard.begin(ctx, plan)
	if err == nil {
		// A cancelled statement (KILL, the client gone) closes the
		// connections, which ends the loads; they are marked broken
		// below, by this goroutine, before the guard gives them back.
		stops := make([]func() bool, len(guard.conns))
		for i, bc := range guard.conns {
			stops[i] = context.AfterFunc(ctx, func() { bc.nc.Close() })
		}
		done := s.watch.readClient()
		if err = s.askFile(st.Path); err != nil {
			s.quit = true
			for _, bc := range guard.conns {
				bc.broken = true
			}
		} else {
			file := &clientFile{wc: s.wc}
			if target != nil {
				ok, err = s.loadSharded(ctx, target, guard, file)
			} else {
				ok, err = s.loadBroadcast(ctx, st, guard, file)
			}
			if !file.drain() {
				// The client went away mid-file: nothing of it stays.
				s.quit = true
				for _, bc := range guard.conns {
					bc.broken = true
				}
				err = errors.Join(err, file.err)
			}
		}
		done()
		for i, stop := range stops {
			if !stop() {
				guard.conns[i].broken = true
			}
		}
	}
	err = guard.finish(cancelled(ctx, err))
	if inTxn {
		defer s.afterTxnStatement(err)
	}
	if err != nil {
		return err
	}
	if ok.InsertID != 0 {
		s.lastInsertID = ok.InsertID
	}
	return s.writeOK(ok, more)
}

// loadStatement runs sql, a LOAD DATA LOCAL INFILE, on bc up to the data
// source's request for the file; the caller sends the file, the empty
// packet and reads the answer with readHead.
func loadStatement(bc *backendConn, sql string) error {
	if err := bc.send(mysql.COM_QUERY, sql); err != nil {
		return err
	}
	p, err := bc.wc.ReadPacket()
	if err != nil {
		return bc.lost(err)
	}
	switch {
	case wire.IsErr(p):
		return wire.ParseErr(p)
	case wire.IsLocalInfile(p):
		return nil
	}
	return bc.lost(fmt.Errorf("%w: LOAD DATA LOCAL answered with 0x%x", wire.ErrMalformed, p[:min(len(p), 1)]))
}

// endFile sends the empty packet that ends the file and reads the data
// source's answer.
func endFile(bc *backendConn) (wire.OK, error) {
	if err := bc.wc.WritePacket(nil); err != nil {
		return wire.OK{}, bc.lost(err)
	}
	if err := bc.wc.Flush(); err != nil {
		return wire.OK{}, bc.lost(err)
	}
	h, err := bc.readHead()
	return h.ok, err
}

// loadBroadcast sends the client's statement and every packet of its
// file to each copy of a broadcast table.
func (s *Session) loadBroadcast(ctx context.Context, st *ast.LoadDataStmt, guard *stmtGuard, file *clientFile) (wire.OK, error) {
	sql, err := broadcastLoadSQL(st)
	if err != nil {
		return wire.OK{}, err
	}
	errs := make([]error, len(guard.conns))
	guard.eachIndexed(func(i int, bc *backendConn) { errs[i] = loadStatement(bc, sql) })
	if err := errors.Join(errs...); err != nil {
		// The data sources that asked for the file get none.
		guard.eachIndexed(func(i int, bc *backendConn) {
			if errs[i] == nil {
				endFile(bc)
			}
		})
		return wire.OK{}, err
	}
	for {
		pkt, more := file.next()
		if !more {
			break
		}
		for i, bc := range guard.conns {
			if errs[i] == nil {
				if err := bc.wc.WritePacket(pkt); err != nil {
					errs[i] = bc.lost(err)
				}
			}
		}
	}
	if file.err != nil {
		return wire.OK{}, file.err
	}
	oks := make([]wire.OK, len(guard.conns))
	guard.eachIndexed(func(i int, bc *backendConn) {
		if errs[i] == nil {
			oks[i], errs[i] = endFile(bc)
		}
	})
	if err := errors.Join(errs...); err != nil {
		return wire.OK{}, cancelled(ctx, err)
	}
	// Every copy read the same file: the first one answers, with its
	// warnings.
	wctx := withDiagnostics(ctx, &s.diag)
	guard.conns[0].collectWarnings(wctx)
	for _, bc := range guard.conns[1:] {
		bc.warnings = 0
	}
	ok := oks[0]
	for i, o := range oks[1:] {
		if o.AffectedRows != ok.AffectedRows {
			s.log.Warn("the copies of a broadcast table disagree after LOAD DATA", "table", st.Table.Name.O, "datasource", guard.conns[i+1].pool.name, "affected_rows", o.AffectedRows, "first", ok.AffectedRows)
		}
	}
	return ok, nil
}

// broadcastLoadSQL is the client's statement without its schema.
func broadcastLoadSQL(st *ast.LoadDataStmt) (string, error) {
	var b strings.Builder
	b.WriteString("LOAD DATA LOCAL INFILE '" + loadInfileName + "'")
	switch st.OnDuplicate {
	case ast.OnDuplicateKeyHandlingReplace:
		b.WriteString(" REPLACE")
	case ast.OnDuplicateKeyHandlingIgnore:
		b.WriteString(" IGNORE")
	}
	b.WriteString(" INTO TABLE " + quoteName(st.Table.Name.O))
	if st.Charset != nil {
		b.WriteString(" CHARACTER SET " + quoteName(*st.Charset))
	}
	f, err := loadFormat(&ast.LoadDataStmt{FieldsInfo: st.FieldsInfo, LinesInfo: st.LinesInfo})
	if err != nil {
		return "", err
	}
	lit := func(v string) string {
		q, _ := sqlarg.AppendLiteral(nil, v, sqlarg.Backslash)
		return string(q)
	}
	b.WriteString(" FIELDS TERMINATED BY " + lit(f.FieldTerm) + " ENCLOSED BY " + lit(f.Enclosed) + " ESCAPED BY " + lit(f.Escaped))
	b.WriteString(" LINES TERMINATED BY " + lit(f.LineTerm) + " STARTING BY " + lit(f.LineStart))
	if st.IgnoreLines != nil {
		b.WriteString(" IGNORE " + strconv.FormatUint(*st.IgnoreLines, 10) + " LINES")
	}
	for i, it := range st.ColumnsAndUserVars {
		if i == 0 {
			b.WriteString(" (")
		} else {
			b.WriteByte(',')
		}
		if it.UserVar != nil {
			b.WriteString("@" + quoteName(it.UserVar.Name))
		} else {
			b.WriteString(quoteName(it.ColumnName.Name.O))
		}
		if i == len(st.ColumnsAndUserVars)-1 {
			b.WriteByte(')')
		}
	}
	for i, as := range st.ColumnAssignments {
		if i == 0 {
			b.WriteString(" SET ")
		} else {
			b.WriteString(", ")
		}
		expr, err := restoreExpr(as.Expr)
		if err != nil {
			return "", err
		}
		b.WriteString(quoteName(as.Column.Name.O) + " = " + expr)
	}
	return b.String(), nil
}
