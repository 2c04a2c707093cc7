package router

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // value expressions for the parser
	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/idgen"
	"github.com/shardflake/shardflake/internal/sqllex"
)

// Router turns statements into plans for one rules snapshot. It is
// immutable and safe for concurrent use; build a new one when the rules
// change.
type Router struct {
	rules     *config.Rules
	keys      map[string]idgen.KeyGenerator
	dbLower   string
	tables    map[string]*tableInfo
	defaultDS string
	columns   func(table string) []string
	// autoIncrement reports whether a sharded table's key column is
	// AUTO_INCREMENT on its data nodes (WithAutoIncrement).
	autoIncrement func(table string) bool
	// physical maps the lower-case name of every physical table of a
	// sharded table (in its actualDataNodes) that is not itself a logical
	// table to that logical table: such names are not logical tables.
	physical map[string]string
}

// Option configures a Router.
type Option func(*Router)

// WithTableColumns gives the router the columns of logical tables, in
// table order, so that an INSERT without a column list can be routed. fn
// returns nil for a table it does not know; it must be safe for concurrent
// use. Without it such INSERTs into sharded tables fail with 1235.
func WithTableColumns(fn func(table string) []string) Option {
	return func(r *Router) { r.columns = fn }
}

// WithAutoIncrement tells the router whether a sharded table's key column
// is AUTO_INCREMENT on its data nodes: MariaDB makes a key for a 0 given
// to such a column (unless sql_mode has NO_AUTO_VALUE_ON_ZERO) and stores
// a 0 given to any other, so the router generates a key for a 0 only
// there. fn must be safe for concurrent use; without it a 0 is stored.
func WithAutoIncrement(fn func(table string) bool) Option {
	return func(r *Router) { r.autoIncrement = fn }
}

// tableInfo is what routing needs of one sharded table, precomputed.
type tableInfo struct {
	rule  *config.TableRule
	name  string
	index map[config.DataNode]int // data node -> position in rule.DataNodes
	// slot maps a data node to its binding slot: data nodes of bound
	// tables with the same slot hold rows with the same sharding values.
	// For the first table of a binding group (and tables in none) the slot
	// is the node index.
	slot       []int
	slotToNode []int // slot -> node index, -1 when the table has none there
	// nodeIndex is 0, 1, ..., len(rule.DataNodes)-1: the one-element
	// unit.nodes of a statement on this table alone are slices of it,
	// shared and never written (oneTableUnits).
	nodeIndex []int
	// nodeUnits[node] is the unit of a statement on this table alone that
	// reaches only that data node (nodes nil for a node without a slot),
	// shared and never written (oneTableUnits).
	nodeUnits []unit
	group     int // binding group number, -1 for none
	dbCols    []string
	tableCols []string
	keyGen    idgen.KeyGenerator
}

// colRole says which strategies a column drives.
type colRole int

const (
	roleDB    colRole = 1 << iota // the database strategy's column
	roleTable                     // the table strategy's column
)

func (t *tableInfo) role(col string) colRole {
	var r colRole
	if slices.Contains(t.dbCols, col) {
		r |= roleDB
	}
	if slices.Contains(t.tableCols, col) {
		r |= roleTable
	}
	return r
}

// New builds a router for rules. keys holds the key generators by their
// keyGenerators name; every table with a keyGenerateStrategy needs its
// generator. The router keeps both; neither may change afterwards.
func New(rules *config.Rules, keys map[string]idgen.KeyGenerator, opts ...Option) (*Router, error) {
	if rules == nil {
		return nil, fmt.Errorf("router: nil rules")
	}
	r := &Router{
		rules:     rules,
		keys:      keys,
		dbLower:   strings.ToLower(rules.DatabaseName),
		tables:    make(map[string]*tableInfo, len(rules.Tables)),
		defaultDS: rules.DefaultDataSource,
	}
	if r.defaultDS == "" && len(rules.DataSources) > 0 {
		r.defaultDS = rules.DataSources[0].Name
	}
	for _, o := range opts {
		o(r)
	}
	for name, rule := range rules.Tables {
		ti := &tableInfo{rule: rule, name: strings.ToLower(name), index: make(map[config.DataNode]int, len(rule.DataNodes)), group: -1}
		for i, n := range rule.DataNodes {
			ti.index[n] = i
		}
		if s := rule.DatabaseStrategy; s != nil {
			ti.dbCols = s.Columns
		}
		if s := rule.TableStrategy; s != nil {
			ti.tableCols = s.Columns
		}
		if rule.KeyGenerator != "" {
			g := keys[rule.KeyGenerator]
			if g == nil {
				return nil, fmt.Errorf("router: table %s needs key generator %q, which was not given", name, rule.KeyGenerator)
			}
			switch g.(type) {
			case idgen.BlockGenerator, idgen.ListGenerator, idgen.UUIDGenerator:
			default:
				return nil, fmt.Errorf("router: key generator %q (%T) issues neither integer blocks, integer lists nor UUIDs", rule.KeyGenerator, g)
			}
			if g.MaxBatch() < 1 {
				return nil, fmt.Errorf("router: key generator %q issues no keys (MaxBatch %d)", rule.KeyGenerator, g.MaxBatch())
			}
			ti.keyGen = g
		}
		ti.slot = make([]int, len(rule.DataNodes))
		ti.slotToNode = make([]int, len(rule.DataNodes))
		ti.nodeIndex = make([]int, len(rule.DataNodes))
		for i := range ti.slot {
			ti.slot[i] = i
			ti.slotToNode[i] = i
			ti.nodeIndex[i] = i
		}
		r.tables[ti.name] = ti
	}
	r.physical = map[string]string{}
	for name, rule := range rules.Tables {
		for _, n := range rule.DataNodes {
			t := strings.ToLower(n.Table)
			if r.tables[t] == nil && !rules.IsBroadcast(t) {
				r.physical[t] = strings.ToLower(name)
			}
		}
	}
	for gi, group := range rules.BindingGroups {
		if err := r.bindGroup(gi, group); err != nil {
			return nil, err
		}
	}
	for _, ti := range r.tables {
		ti.nodeUnits = make([]unit, len(ti.rule.DataNodes))
		for slot, node := range ti.slotToNode {
			if node >= 0 {
				ti.nodeUnits[node] = unit{order: slot, ds: ti.rule.DataNodes[node].DataSource, nodes: ti.nodeIndex[node : node+1 : node+1]}
			}
		}
	}
	return r, nil
}

// bindGroup pairs the data nodes of a binding group: a node of a later
// table gets the slot of the first table's node on the same data source
// with the same physical-name suffix (t_order_3 and t_order_item_3), as
// ShardingSphere pairs them.
func (r *Router) bindGroup(gi int, group []string) error {
	var first *tableInfo
	for _, name := range group {
		ti := r.tables[strings.ToLower(name)]
		if ti == nil {
			continue
		}
		ti.group = gi
		if first == nil {
			first = ti
			continue
		}
		slots, ok := config.PairNodes(first.rule, first.name, ti.rule, ti.name)
		if !ok {
			return fmt.Errorf("router: binding tables %s and %s have data nodes that do not pair one to one", first.name, ti.name)
		}
		ti.slot = slots
		for i := range ti.slotToNode {
			ti.slotToNode[i] = -1
		}
		for node, s := range slots {
			ti.slotToNode[s] = node
		}
	}
	return nil
}

// Rules returns the rules the router was built from.
func (r *Router) Rules() *config.Rules { return r.rules }

// ParseOne parses one SQL statement with a fresh TiDB parser, for tests and
// the explain command. A syntax error is a 1064 *Error.
//
// MariaDB's spellings the parser does not know, the column types UUID,
// INET6 and INET4 and the CAST and CONVERT types INT and INTEGER, are read
// with stand-ins for them (ParseStandIn).
func ParseOne(sql string) (ast.StmtNode, error) {
	p := parser.New()
	stmt, err := ParseWith(p, sql)
	if err == nil {
		return stmt, nil
	}
	if alt, ok := ParseStandIn(p, sql, sqllex.Backslash); ok && len(alt) == 1 {
		return alt[0], nil
	}
	return nil, err
}

// ParseStandIn parses with p statements that the parser refused for
// MariaDB's spellings it does not know, reading stand-ins for them: a
// CREATE or ALTER TABLE's UUID, INET6 or INET4 column types
// (StandInTypes), whose column definitions are marked with the client's
// types (MarkColumnTypes), and the CAST and CONVERT types INT, INTEGER
// and INT4 (castEdits), with the statements' and select fields' texts set
// back to the client's. ok is false for any other statements.
func ParseStandIn(p *parser.Parser, sql string, mode sqllex.Mode) (stmts []ast.StmtNode, ok bool) {
	typed, types := typeEdits(sql, mode)
	edits := castEdits(sql, mode)
	if len(typed) == 0 && len(edits) == 0 {
		return nil, false
	}
	edits = append(edits, typed...)
	slices.SortFunc(edits, func(a, b textEdit) int { return a.start - b.start })
	text := applyEdits(sql, edits)
	stmts, err := parseAll(p, text)
	if err != nil || len(stmts) == 0 {
		return nil, false
	}
	if len(types) > 0 && (len(stmts) != 1 || MarkColumnTypes(stmts[0], types) != nil) {
		return nil, false
	}
	clientTexts(stmts, sql, text, edits)
	return stmts, true
}

// parseAll parses the statements of sql with p, a parser panic an error
// (see ParseWith).
func parseAll(p *parser.Parser, sql string) (stmts []ast.StmtNode, err error) {
	defer func() {
		if v := recover(); v != nil {
			stmts, err = nil, fmt.Errorf("the SQL parser cannot read this statement: %v", v)
		}
	}()
	stmts, _, err = p.Parse(sql, "", "")
	return stmts, err
}

// ParseWith parses one SQL statement with p, the session's parser (a
// parser is not safe for concurrent use). A syntax error is a 1064 *Error.
//
// The parser's value driver panics on some inputs (an integer literal of
// more than 81 digits reaches an unimplemented decimal branch); ParseWith
// turns such a panic into a 1064 error, so a client's text can never take
// the process down through the parser.
func ParseWith(p *parser.Parser, sql string) (stmt ast.StmtNode, err error) {
	defer func() {
		if v := recover(); v != nil {
			stmt, err = nil, &Error{Code: CodeParse, State: "42000", Message: fmt.Sprintf("the SQL parser cannot read this statement: %v", v)}
		}
	}()
	stmt, err = p.ParseOneStmt(sql, "", "")
	if err != nil {
		return nil, &Error{Code: CodeParse, State: "42000", Message: SyntaxMessage(err.Error()), Err: err}
	}
	return stmt, nil
}

// SyntaxMessage words the parser's syntax error, `line L column C near
// "TEXT"EXTRA`, as MySQL and MariaDB do (what clients and people know:
// "You have an error in your SQL syntax; ... near 'TEXT' at line L", the
// text cut at 80 bytes), or returns msg unchanged when it is not one.
func SyntaxMessage(msg string) string {
	near, line, ok := syntaxError(msg)
	if !ok {
		return msg
	}
	if len(near) > 80 {
		near = validPrefix(near, 80)
	}
	return fmt.Sprintf("You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '%s' at line %s", near, line)
}

// MariaDBSyntaxMessage words the parser's syntax error as MariaDB does:
// its manual, and a text longer than 80 bytes cut to 77 and "..." (its
// %-.80T); msg unchanged when it is not one.
func MariaDBSyntaxMessage(msg string) string {
	near, line, ok := syntaxError(msg)
	if !ok {
		return msg
	}
	if len(near) > 80 {
		near = validPrefix(near, 77) + "..."
	}
	return fmt.Sprintf("You have an error in your SQL syntax; check the manual that corresponds to your MariaDB server version for the right syntax to use near '%s' at line %s", near, line)
}

// syntaxError reads the parser's `line L column C near "TEXT"EXTRA`.
func syntaxError(msg string) (near, line string, ok bool) {
	rest, ok := strings.CutPrefix(msg, "line ")
	if !ok {
		return "", "", false
	}
	line, rest, ok = strings.Cut(rest, " column ")
	if !ok || line == "" || strings.Trim(line, "0123456789") != "" {
		return "", "", false
	}
	_, rest, ok = strings.Cut(rest, ` near "`)
	end := strings.LastIndexByte(rest, '"')
	if !ok || end < 0 {
		return "", "", false
	}
	return rest[:end], line, true
}

// validPrefix is s cut to at most n bytes, never inside a UTF-8 character.
func validPrefix(s string, n int) string {
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// Prepared is the analysis of one statement text: what Bind needs to plan
// each execution. It is immutable and safe for concurrent use, so the proxy
// caches it per SQL text and per prepared statement.
type Prepared struct {
	kind   StatementKind
	sql    string
	params int
	tables []string
	// static is the plan of a statement that needs neither arguments nor
	// generated keys: Bind returns it as is.
	static *Plan
	b      binder
	// setsInsertID: a write that calls LAST_INSERT_ID(expr), which may
	// reach one data node only (oneInsertID).
	setsInsertID bool
}

// binder plans one execution.
type binder interface {
	bind(args []any) (*Plan, error)
}

// Kind returns the statement's kind; KindOther means the proxy answers
// the statement itself.
func (p *Prepared) Kind() StatementKind { return p.kind }

// ParamCount returns the number of ? placeholders Bind expects values for.
func (p *Prepared) ParamCount() int { return p.params }

// Tables returns the logical tables the statement names, lower-case, in
// order of appearance. The slice must not be modified.
func (p *Prepared) Tables() []string { return p.tables }

// SQL returns the statement text Prepare was given.
func (p *Prepared) SQL() string { return p.sql }

// Bind plans one execution with args as the values of the ? placeholders
// (int64, uint64, float64, string, []byte, nil, time.Time, bool and the
// other integer types are understood). The returned Plan is immutable and
// may be shared with other callers.
func (p *Prepared) Bind(args []any) (*Plan, error) {
	if len(args) != p.params {
		return nil, newError(CodeWrongArgs, "HY000", "Incorrect arguments to mysqld_stmt_execute: statement has %d parameters, got %d", p.params, len(args))
	}
	if p.static != nil {
		return p.static, nil
	}
	if p.kind == KindOther {
		return nil, &Error{Code: CodeNotSupported, State: "42000", Message: "statement is answered by the proxy, not routed", Err: ErrProxyStatement}
	}
	plan, err := p.b.bind(args)
	if err == nil && p.setsInsertID {
		err = oneInsertID(plan)
	}
	if err != nil {
		return nil, err
	}
	return plan, nil
}

// oneInsertID refuses a write that calls LAST_INSERT_ID(expr) on several
// routes of a sharded table. MariaDB keeps the value set for the last row
// it changed, in its order (the last duplicate row of an INSERT ... ON
// DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)); each route's OK packet
// gives the last of its own rows, and none tells which route's came last
// (nor that a route set 0). A broadcast table's copies set the same
// value.
func oneInsertID(plan *Plan) error {
	if len(plan.Routes) > 1 && plan.Type != RouteBroadcast {
		return errNotSupported("LAST_INSERT_ID(expr) in a write that reaches several data nodes (%d): MariaDB keeps the value set for the last row it changes, which their answers do not tell; write the rows of one data node per statement, or set the value in a statement of its own", len(plan.Routes))
	}
	return nil
}

// Prepare analyzes one parsed statement. sql is its text (hints are read
// from its comments) and db the session's current schema ("" for none);
// tables may also be qualified with the logical schema, Rules.DatabaseName.
//
// Prepare consumes stmt: it rewrites the tree in place, so parse again to
// use the statement elsewhere. Statements the proxy answers itself (SET,
// USE, BEGIN, SHOW TABLES, statements on information_schema, ...) give a
// Prepared of KindOther and no error.
func (r *Router) Prepare(stmt ast.StmtNode, sql string, db string) (*Prepared, error) {
	return r.PrepareWith(stmt, sql, db, PrepareOptions{})
}

// PrepareOptions are the session's settings that change a plan besides
// its schema; the proxy caches plans by the sql_mode they come from.
type PrepareOptions struct {
	// ZeroKey is what a 0 given for a generated key column means.
	ZeroKey ZeroKey
}

// ZeroKey is what a 0 given for a table's keyGenerateStrategy column
// means, as MariaDB reads a 0 given for an AUTO_INCREMENT column. Its zero
// value is MariaDB's default sql_mode, so that PrepareOptions{} plans as
// a session that set none.
type ZeroKey uint8

const (
	// ZeroKeyGenerates: the row gets a generated key, as for NULL or
	// DEFAULT.
	ZeroKeyGenerates ZeroKey = iota
	// ZeroKeyStored: sql_mode NO_AUTO_VALUE_ON_ZERO; 0 is the row's key.
	ZeroKeyStored
)

func (z ZeroKey) String() string {
	switch z {
	case ZeroKeyGenerates:
		return "generates"
	case ZeroKeyStored:
		return "stored"
	}
	return fmt.Sprintf("ZeroKey(%d)", uint8(z))
}

// PrepareWith is Prepare under the session's options.
func (r *Router) PrepareWith(stmt ast.StmtNode, sql string, db string, opts PrepareOptions) (*Prepared, error) {
	if err := checkUTF8(sql); err != nil {
		return nil, err
	}
	h, err := parseHints(sql)
	if err != nil {
		return nil, err
	}
	if err := h.check(r.rules); err != nil {
		return nil, err
	}
	p := &Prepared{sql: sql}
	a := r.newAnalysis(db)
	a.zeroKey = opts.ZeroKey
	a.collectParams(stmt)
	p.params = len(a.params)
	kind := statementKind(stmt)
	if kind == KindOther {
		p.kind = KindOther
		return p, nil
	}
	access := statementAccess(stmt, h)
	if h != nil && h.dataSource != "" {
		pp, err := r.preparePassThrough(p, kind, stmt, h.dataSource)
		if err == nil {
			r.markAccess(pp, access)
		}
		return pp, err
	}
	switch s := stmt.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt, *ast.UpdateStmt, *ast.DeleteStmt:
		err = r.prepareDML(p, a, s, h)
	case *ast.InsertStmt:
		err = r.prepareInsert(p, a, s, h)
	case *ast.ShowStmt:
		err = r.prepareShow(p, a, s)
	case *ast.ExplainStmt:
		err = r.prepareShow(p, a, s.Stmt.(*ast.ShowStmt))
	default:
		err = r.prepareDDL(p, a, stmt, h)
	}
	if err != nil {
		return nil, err
	}
	if a.system {
		return &Prepared{kind: KindOther, sql: sql, params: p.params}, nil
	}
	if p.kind == 0 {
		p.kind = kind
	}
	if a.setsInsertID && (kind == KindInsert || kind == KindUpdate || kind == KindDelete) {
		p.setsInsertID = true
		if p.static != nil {
			if err := oneInsertID(p.static); err != nil {
				return nil, err
			}
		}
	}
	p.tables = a.tables()
	a.release()
	r.markAccess(p, access)
	return p, nil
}

// statementKind classifies a statement; KindOther for those the router
// does not plan.
func statementKind(stmt ast.StmtNode) StatementKind {
	switch s := stmt.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		return KindSelect
	case *ast.InsertStmt:
		return KindInsert
	case *ast.UpdateStmt:
		return KindUpdate
	case *ast.DeleteStmt:
		return KindDelete
	case *ast.CreateTableStmt, *ast.AlterTableStmt, *ast.DropTableStmt, *ast.TruncateTableStmt,
		*ast.CreateIndexStmt, *ast.DropIndexStmt, *ast.RenameTableStmt, *ast.CreateViewStmt:
		return KindDDL
	case *ast.ShowStmt:
		switch s.Tp {
		case ast.ShowCreateTable, ast.ShowColumns, ast.ShowIndex:
			return KindShow
		}
	case *ast.ExplainStmt:
		if sh, ok := s.Stmt.(*ast.ShowStmt); ok {
			return statementKind(sh)
		}
	}
	return KindOther
}

// preparePassThrough plans a statement with a DATA_SOURCE_NAME hint: the
// text goes unchanged to that data source.
func (r *Router) preparePassThrough(p *Prepared, kind StatementKind, stmt ast.StmtNode, ds string) (*Prepared, error) {
	if r.rules.DataSource(ds) == nil {
		return nil, errNotSupported("SHARDINGSPHERE_HINT names data source %q, which the rules do not define", ds)
	}
	p.kind = kind
	pt := &passThrough{kind: kind, route: Route{DataSource: ds, SQL: p.sql}}
	if p.params == 0 {
		p.static = pt.plan(nil)
	}
	p.b = pt
	return p, nil
}

type passThrough struct {
	kind  StatementKind
	route Route
}

func (pt *passThrough) plan(args []any) *Plan {
	rt := pt.route
	if len(args) > 0 {
		rt.Args = args
	}
	return &Plan{Kind: pt.kind, Type: RouteSingle, Routes: []Route{rt}}
}

func (pt *passThrough) bind(args []any) (*Plan, error) { return pt.plan(args), nil }
