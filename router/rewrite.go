package router

import (
	"encoding/hex"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/charset"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// Rewriting works on the statement's own AST: the router replaces what
// differs between routes (physical table names, ? placeholders, IN lists,
// LIMIT counts, INSERT rows) with markers, restores the AST to SQL once,
// and cuts the text at the markers into a template. Rendering a route is
// then a concatenation, and string literals are never touched because the
// text comes from the parser's own restorer, which escapes them.

// restoreFlags render SQL that MySQL and MariaDB parse back to the same
// statement: single-quoted strings with backslash escapes, upper-case
// keywords, back-quoted names, no _utf8mb4 introducers on plain strings.
const restoreFlags = format.RestoreStringSingleQuotes | format.RestoreKeyWordUppercase |
	format.RestoreNameBackQuotes | format.RestoreStringWithoutDefaultCharset |
	format.RestoreStringEscapeBackslash

// holeKind says what fills a hole of a template.
type holeKind byte

const (
	holeTable holeKind = 'T' // the physical name of a sharded reference
	holeParam holeKind = 'P' // a ?, with its argument
	holeIn    holeKind = 'I' // the items of a pruned IN list
	holeLimit holeKind = 'L' // the LIMIT count sent to every route
	holeRows  holeKind = 'V' // the rows of an INSERT
	holeName  holeKind = 'N' // a constraint name made unique per physical table
	holeRoute holeKind = 'R' // the route's position among the plan's routes
)

// markerPrefix starts every marker. A marker is restored as a back-quoted
// name, `\x00sfT3\x00`; string literals are restored with their NUL bytes
// as \0 (dialectFixer), and a statement whose names contain the prefix is
// rejected, so a marker can never come from the client's text.
const markerPrefix = "\x00sf"

func marker(k holeKind, id int) string {
	return markerPrefix + string(k) + strconv.Itoa(id) + "\x00"
}

func markerName(k holeKind, id int) ast.CIStr {
	m := marker(k, id)
	return ast.CIStr{O: m, L: m}
}

func markerExpr(k holeKind, id int) ast.ExprNode {
	return &ast.ColumnNameExpr{Name: &ast.ColumnName{Name: markerName(k, id)}}
}

// segment is literal text followed by a hole (kind 0: no hole).
type segment struct {
	text string
	kind holeKind
	id   int
}

// sqlTemplate is restored SQL cut at its holes.
type sqlTemplate struct {
	segs   []segment
	size   int // bytes of literal text
	params int // param holes
	// verbatim marks the client's own text: its ?s take every argument.
	verbatim bool
	// perNode: the holes are only ?s and the table of the statement's one
	// sharded reference, so the text depends on the data node alone and
	// renderNode keeps it per data node in byNode, made at the second
	// render (a statement bound once pays nothing for it); rendered
	// marks the first. Templates are shared by the sessions, hence the
	// atomics.
	perNode  bool
	rendered atomic.Bool
	byNode   atomic.Pointer[[]atomic.Pointer[string]]
	// inOrder: the ?s take the arguments 0, 1, ... in order.
	inOrder bool
}

// maxNodeTexts bounds the data nodes a template caches texts for.
const maxNodeTexts = 4096

// verbatimTemplate is the client's statement text, sent unchanged where
// nothing in it needs rewriting, so that what the backend sees (column
// labels, comments, spelling) is what the client wrote.
func verbatimTemplate(sql string) *sqlTemplate {
	return &sqlTemplate{segs: []segment{{text: sql}}, size: len(sql), verbatim: true}
}

// verbatimOK reports whether a statement can run as the client wrote it:
// it names no sharded table (whose names the routes rewrite) and never
// the logical schema (which qualified names lose), and sql is its text
// ("" for a statement the router split off another).
func (a *analysis) verbatimOK(sql string) bool {
	return sql != "" && len(a.sharded) == 0 && !containsFold(sql, a.r.dbLower)
}

// containsFold reports whether s contains lower (lower-case ASCII),
// ignoring case.
func containsFold(s, lower string) bool {
	if lower == "" {
		return false
	}
	for i := 0; i+len(lower) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(lower)], lower) {
			return true
		}
	}
	return false
}

// restoreSQL restores a node with restoreFlags, in MariaDB's spelling
// (see dialectFixer).
func restoreSQL(n ast.Node) (string, error) {
	var b strings.Builder
	b.Grow(128)
	fix := &dialectFixer{}
	n.Accept(fix)
	err := n.Restore(format.NewRestoreCtx(restoreFlags, &b))
	for i := len(fix.undo) - 1; i >= 0; i-- {
		fix.undo[i]()
	}
	if err != nil {
		return "", errNotSupported("cannot rewrite the statement: %v", err)
	}
	if len(fix.replace) > 0 {
		return strings.NewReplacer(fix.replace...).Replace(b.String()), nil
	}
	return b.String(), nil
}

// holeDialect marks what dialectFixer rewrites after the restore; it
// never reaches a template.
const holeDialect holeKind = 'D'

// dialectFixer changes, for the time of one restore, the nodes the
// parser's restorer writes in a spelling MariaDB refuses, and notes what
// restoreSQL replaces in the text (markers, which client text cannot hold):
//   - a plain share lock (LOCK IN SHARE MODE or FOR SHARE, which the
//     parser reads alike) is restored as FOR SHARE, MySQL 8's spelling,
//     which MariaDB and MySQL 5.7 refuse (1064): it is sent as LOCK IN
//     SHARE MODE, which MySQL 8 reads too;
//   - the functions INSERT(s, pos, len, new) and CHAR(n, ... [USING cs])
//     carry the parser's internal names INSERT_FUNC and CHAR_FUNC (1305
//     FUNCTION does not exist), and CHAR its charset as a last argument
//     (NULL without USING).
//   - an unqualified function name is restored upper-cased, as a keyword:
//     a stored function the client called my_Func then reached MariaDB
//     as MY_FUNC, and its 1305 named it so. It keeps the client's case
//     (function names are case-insensitive), when it is a plain word:
//     the restore writes the marker as a keyword, upper-cased, where the
//     parser's own switch on the lower-case name still sees the name.
//   - hexadecimal and bit literals (0x41, X'41', b'1000001') are restored
//     as X'41', which MariaDB reads as a string even where a number is
//     wanted (1 | X'04' is 1 there, 1 | 0x04 is 5): they are sent as 0x41,
//     which MariaDB and MySQL read as a number or a binary string by
//     context, as MySQL reads every spelling, and keeps their bytes.
//   - CHECK (...) is restored with MySQL 8's ENFORCED, and ALTER TABLE ...
//     DROP CONSTRAINT (or DROP CHECK) as DROP CHECK, both 1064 on MariaDB:
//     they are sent without ENFORCED (the default) and as DROP CONSTRAINT,
//     which MySQL 8 reads too.
//   - a column definition marked with one of MariaDB's types
//     (MarkColumnTypes) is restored with that type, not the stand-in the
//     parser read.
//
// undo puts the nodes back after the restore.
type dialectFixer struct {
	undo    []func()
	replace []string // old, new pairs for strings.NewReplacer
}

// dialectMarker is a column named by a marker that restores as
// "`"+text+"`".
func dialectMarker(text string) *ast.ColumnNameExpr {
	return &ast.ColumnNameExpr{Name: &ast.ColumnName{Name: ast.CIStr{O: text, L: text}}}
}

func (v *dialectFixer) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SelectStmt:
		if l := x.LockInfo; l != nil && l.LockType == ast.SelectLockForShare && len(l.Tables) == 0 {
			m := marker(holeDialect, len(v.replace))
			l.Tables = []*ast.TableName{{Name: ast.CIStr{O: m, L: m}}}
			v.replace = append(v.replace, "FOR SHARE OF `"+m+"`", "LOCK IN SHARE MODE")
			v.undo = append(v.undo, func() { l.Tables = nil })
		}
	case *driver.ValueExpr:
		if k := x.Kind(); (k == driver.KindString || k == driver.KindBytes) && strings.IndexByte(x.GetString(), 0) >= 0 {
			// A NUL byte is written as \0, so that the text holds raw NULs
			// only in markers and a value may contain any bytes.
			m, saved := marker(holeDialect, len(v.replace)), x.Datum
			v.replace = append(v.replace, "'"+m+"'", quoteNUL(x.GetString()))
			if k == driver.KindBytes {
				x.SetBytes([]byte(m))
			} else {
				x.SetString(m)
			}
			v.undo = append(v.undo, func() { x.Datum = saved })
			return n, false
		}
		if x.Kind() != driver.KindBinaryLiteral || len(x.GetBytes()) == 0 {
			return n, false
		}
		if cs := x.Type.GetCharset(); cs != "" && cs != mysql.DefaultCharset && cs != charset.CharsetBin {
			return n, false // _latin1 0x41: left as the parser writes it
		}
		// Bytes restore as a plain quoted string, here the marker.
		m, saved := marker(holeDialect, len(v.replace)), x.Datum
		v.replace = append(v.replace, "'"+m+"'", "0x"+hex.EncodeToString(x.GetBytes()))
		x.SetBytes([]byte(m))
		v.undo = append(v.undo, func() { x.Datum = saved })
	case *ast.Constraint:
		if x.Tp != ast.ConstraintCheck || !x.Enforced || x.Expr == nil {
			return n, false
		}
		text, err := restoreSQL(x.Expr)
		if err != nil {
			return n, false // the restore of the whole reports it
		}
		m, saved := marker(holeDialect, len(v.replace)), x.Expr
		x.Expr = dialectMarker(m)
		v.replace = append(v.replace, "`"+m+"`) ENFORCED", text+")")
		v.undo = append(v.undo, func() { x.Expr = saved })
	case *ast.AlterTableSpec:
		if x.Tp != ast.AlterTableDropCheck || x.Constraint == nil {
			return n, false
		}
		c, saved := x.Constraint, x.Constraint.Name
		m := marker(holeDialect, len(v.replace))
		c.Name = m
		var drop strings.Builder
		drop.WriteString("DROP CONSTRAINT ")
		writeName(&drop, saved)
		v.replace = append(v.replace, "DROP CHECK `"+m+"`", drop.String())
		v.undo = append(v.undo, func() { c.Name = saved })
	case *ast.ColumnDef:
		typ, ok := mariadbTypeOf(x)
		if !ok {
			return n, false
		}
		// Without a type, a column definition restores as its name and
		// options: the marker, replaced by the name and MariaDB's type.
		name, tp, opts := x.Name, x.Tp, x.Options
		m := marker(holeDialect, len(v.replace))
		x.Name, x.Tp = &ast.ColumnName{Name: ast.CIStr{O: m, L: m}}, nil
		x.Options = make([]*ast.ColumnOption, 0, len(opts))
		for _, o := range opts {
			if o.Tp != ast.ColumnOptionNoOption {
				x.Options = append(x.Options, o)
			}
		}
		var def strings.Builder
		writeName(&def, name.Name.O)
		def.WriteString(" " + typ)
		v.replace = append(v.replace, "`"+m+"`", def.String())
		v.undo = append(v.undo, func() { x.Name, x.Tp, x.Options = name, tp, opts })
	case *ast.FuncCallExpr:
		name, args := x.FnName, x.Args
		switch {
		case name.L == ast.InsertFunc:
			x.FnName = ast.NewCIStr("INSERT")
		case name.L == ast.CharFunc && len(args) > 0:
			x.FnName, x.Args = ast.NewCIStr("CHAR"), args[:len(args)-1]
			if cs, ok := args[len(args)-1].(*driver.ValueExpr); ok && cs.Kind() == driver.KindString {
				// CHAR(65, `marker`) becomes CHAR(65 USING cs).
				m := marker(holeDialect, len(v.replace))
				x.Args = append(x.Args[:len(x.Args):len(x.Args)], dialectMarker(m))
				var using strings.Builder
				using.WriteString(" USING ")
				writeName(&using, cs.GetString())
				v.replace = append(v.replace, ", `"+m+"`", using.String())
			}
		case x.Tp == ast.FuncCallExprTypeKeyword && name.O != strings.ToUpper(name.O) && plainWord(name.O):
			m := marker(holeDialect, len(v.replace))
			x.FnName = ast.CIStr{O: m, L: name.L}
			v.replace = append(v.replace, strings.ToUpper(m)+"(", name.O+"(")
		default:
			return n, false
		}
		v.undo = append(v.undo, func() { x.FnName, x.Args = name, args })
	}
	return n, false
}

func (v *dialectFixer) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// plainWord reports whether name needs no quotes as a function name:
// ASCII letters, digits, _ and $, not only digits.
func plainWord(name string) bool {
	letter := false
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '$':
			letter = true
		case c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return letter
}

// quoteNUL quotes a string literal as restoreFlags do, and writes its NUL
// bytes as \0 (which NO_BACKSLASH_ESCAPES sessions get back as the byte).
func quoteNUL(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case 0:
			b.WriteString(`\0`)
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString("''")
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// buildTemplate restores n and cuts the text at its markers.
func buildTemplate(n ast.Node) (*sqlTemplate, error) {
	s, err := restoreSQL(n)
	if err != nil {
		return nil, err
	}
	return parseTemplate(s)
}

func parseTemplate(s string) (*sqlTemplate, error) {
	t := &sqlTemplate{}
	open := "`" + markerPrefix
	for {
		i := strings.Index(s, open)
		if i < 0 {
			t.segs = append(t.segs, segment{text: s})
			t.size += len(s)
			return t.finish(), nil
		}
		rest := s[i+len(open):]
		end := strings.Index(rest, "\x00`")
		if end < 2 {
			return nil, errNotSupported("cannot rewrite the statement: malformed marker")
		}
		id, err := strconv.Atoi(rest[1:end])
		if err != nil {
			return nil, errNotSupported("cannot rewrite the statement: malformed marker")
		}
		t.segs = append(t.segs, segment{text: s[:i], kind: holeKind(rest[0]), id: id})
		t.size += i
		if holeKind(rest[0]) == holeParam {
			t.params++
		}
		s = rest[end+2:]
	}
}

// finish marks what parseTemplate's result allows: its arguments in order
// and its text per data node.
func (t *sqlTemplate) finish() *sqlTemplate {
	t.inOrder = true
	perNode, params := true, 0
	for _, sg := range t.segs {
		switch sg.kind {
		case 0:
		case holeParam:
			t.inOrder = t.inOrder && sg.id == params
			params++
		case holeTable:
			perNode = perNode && sg.id == 0
		default:
			perNode = false
		}
	}
	t.perNode = perNode && len(t.segs) > 1
	return t
}

// renderNode is render for a template whose text depends only on the data
// node (byNode): the text is made once per data node, and the arguments
// are bind itself when the ?s take them in order. nodes is the number of
// data nodes of the sharded reference, node the one to render for.
func (t *sqlTemplate) renderNode(f filler, bind []any, nodes, node int) (string, []any, error) {
	if !t.perNode || nodes > maxNodeTexts {
		return t.render(f, bind)
	}
	c := t.byNode.Load()
	if c == nil {
		if !t.rendered.Swap(true) {
			return t.render(f, bind)
		}
		texts := make([]atomic.Pointer[string], nodes)
		t.byNode.CompareAndSwap(nil, &texts)
		c = t.byNode.Load()
	}
	texts := *c
	if node >= len(texts) {
		return t.render(f, bind)
	}
	if t.inOrder && len(bind) == t.params {
		if p := texts[node].Load(); p != nil {
			var args []any
			if t.params > 0 {
				args = bind[:len(bind):len(bind)]
			}
			return *p, args, nil
		}
	}
	sql, args, err := t.render(f, bind)
	if err == nil {
		texts[node].Store(&sql)
	}
	return sql, args, err
}

// filler supplies the text of holes when a template is rendered.
type filler interface {
	// fill writes hole (k, id) to b and appends the arguments of any ? it
	// writes to args.
	fill(b *strings.Builder, k holeKind, id int, args []any) ([]any, error)
}

// render writes the template with its holes filled; args are the Bind
// arguments, and the returned slice holds the arguments of the ?s
// written, in order (nil when none).
func (t *sqlTemplate) render(f filler, bind []any) (string, []any, error) {
	return t.renderSized(f, bind, 0, t.params)
}

// renderSized is render for a template whose holes write more than the
// template knows of (an INSERT's rows): about extra bytes of text and up
// to args arguments in all.
func (t *sqlTemplate) renderSized(f filler, bind []any, extra, args int) (string, []any, error) {
	if t.verbatim && len(bind) > 0 {
		return t.segs[0].text, bind, nil
	}
	if len(t.segs) == 1 {
		return t.segs[0].text, nil, nil
	}
	var b strings.Builder
	b.Grow(t.size + 16*len(t.segs) + extra)
	var out []any
	if args > 0 {
		out = make([]any, 0, args)
	}
	if err := t.renderTo(&b, f, bind, &out); err != nil {
		return "", nil, err
	}
	return b.String(), out, nil
}

func (t *sqlTemplate) renderTo(b *strings.Builder, f filler, bind []any, out *[]any) error {
	for _, s := range t.segs {
		b.WriteString(s.text)
		switch s.kind {
		case 0:
		case holeParam:
			b.WriteByte('?')
			*out = append(*out, bind[s.id])
		default:
			var err error
			if *out, err = f.fill(b, s.kind, s.id, *out); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkMarkers rejects a statement whose names contain the marker prefix
// (string literals may hold any bytes: see dialectFixer); only raw NUL
// bytes can produce one, so the walk runs only for such texts.
func checkMarkers(stmt ast.Node, sql string) error {
	if strings.IndexByte(sql, 0) < 0 {
		return nil
	}
	var c markerChecker
	stmt.Accept(&c)
	if c.found {
		return errNotSupported("the statement contains the byte sequence NUL 's' 'f' in a name, which the router reserves")
	}
	return nil
}

type markerChecker struct{ found bool }

func (c *markerChecker) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.ColumnName:
		c.found = c.found || strings.Contains(x.Name.O, markerPrefix) || strings.Contains(x.Table.O, markerPrefix)
	case *ast.TableName:
		c.found = c.found || strings.Contains(x.Name.O, markerPrefix)
	case *ast.SelectField:
		c.found = c.found || strings.Contains(x.AsName.O, markerPrefix)
	case *ast.TableSource:
		c.found = c.found || strings.Contains(x.AsName.O, markerPrefix)
	}
	return n, c.found
}

func (c *markerChecker) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// rewrite prepares the statement's AST for restoring into a template, in
// one walk: table holes in place of sharded table names, the logical
// schema dropped from every name, a param hole in place of every ?, and
// every unaliased expression of a select list named by its original text
// (MySQL names such a column by its text, and the restored text differs:
// COUNT(*) is restored as COUNT(1), spacing changes).
//
// With aliases set, a sharded table in a FROM clause without an alias gets
// its logical name as alias, so qualified columns (t_order.x) and result
// metadata keep the logical name; otherwise columns qualified with the
// table's name get the hole.
func (a *analysis) rewrite(stmt ast.Node, aliases bool) {
	for _, ref := range a.refs {
		if ref.tn.Schema.L == a.r.dbLower || ref.tn.Schema.L == "" {
			ref.tn.Schema = ast.CIStr{}
		}
		if ref.kind != refSharded {
			continue
		}
		ref.tn.Name = markerName(holeTable, ref.hole)
		if aliases && ref.ts != nil && ref.ts.AsName.L == "" {
			ref.ts.AsName = ast.CIStr{O: ref.orig, L: ref.name}
		}
	}
	v := rewriter{a: a, aliases: aliases}
	stmt.Accept(&v)
}

type rewriter struct {
	a       *analysis
	aliases bool
}

func (v *rewriter) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.ColumnName:
		if x.Schema.L != "" && x.Schema.L == v.a.r.dbLower {
			x.Schema = ast.CIStr{}
		}
		if x.Table.L != "" && x.Schema.L == "" {
			for _, ref := range v.a.sharded {
				if ref.alias == "" && ref.name == x.Table.L && (ref.ts == nil || !v.aliases) {
					x.Table = markerName(holeTable, ref.hole)
					break
				}
			}
		}
	case *ast.DeleteTableList:
		for _, tn := range x.Tables {
			if tn.Schema.L == v.a.r.dbLower {
				tn.Schema = ast.CIStr{}
			}
		}
	case *ast.SelectStmt:
		aliasFields(x)
	}
	return n, false
}

func (v *rewriter) Leave(n ast.Node) (ast.Node, bool) {
	if p, ok := n.(*driver.ParamMarkerExpr); ok {
		return markerExpr(holeParam, p.Order), true
	}
	return n, true
}

// paramReplacer puts a param hole in place of every ?.
type paramReplacer struct{}

func (paramReplacer) Enter(n ast.Node) (ast.Node, bool) { return n, false }

func (paramReplacer) Leave(n ast.Node) (ast.Node, bool) {
	if p, ok := n.(*driver.ParamMarkerExpr); ok {
		return markerExpr(holeParam, p.Order), true
	}
	return n, true
}

// aliasFields names the unaliased expressions of a select list with their
// original text.
func aliasFields(sel *ast.SelectStmt) {
	if sel.Fields == nil {
		return
	}
	for _, f := range sel.Fields.Fields {
		if f.Expr == nil || f.AsName.L != "" {
			continue
		}
		switch x := f.Expr.(type) {
		case *ast.ColumnNameExpr:
			continue
		case *driver.ValueExpr:
			if x.Kind() == driver.KindString {
				continue // named by its value, which restores unchanged
			}
		case *ast.ParenthesesExpr:
			if isParenthesizedColumn(x) {
				continue // MariaDB names (item_id), as in DISTINCT(item_id), item_id
			}
		}
		text := strings.TrimSpace(f.Text())
		if u := strings.ToUpper(text); u == "TRUE" || u == "FALSE" || u == "NULL" {
			text = u // MariaDB's name for these literals, however written
		}
		text = columnName(text)
		if text != "" && len(text) <= 256 {
			f.AsName = ast.CIStr{O: text, L: strings.ToLower(text)}
		}
	}
}

// columnName is the name MariaDB gives a column named by text: names are
// utf8mb3, so a character beyond the Basic Multilingual Plane (an emoji)
// becomes ?. MariaDB refuses such a character in an alias (1300 Invalid
// utf8mb4 character string), so the alias must not keep it either.
func columnName(text string) string {
	if !strings.ContainsFunc(text, func(r rune) bool { return r > 0xFFFF }) {
		return text
	}
	return strings.Map(func(r rune) rune {
		if r > 0xFFFF {
			return '?'
		}
		return r
	}, text)
}

// isParenthesizedColumn reports whether e is a column name in one or more
// pairs of parentheses.
func isParenthesizedColumn(e ast.ExprNode) bool {
	for {
		switch x := e.(type) {
		case *ast.ParenthesesExpr:
			e = x.Expr
		case *ast.ColumnNameExpr:
			return true
		default:
			return false
		}
	}
}
