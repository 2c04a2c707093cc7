package router

import (
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
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
)

// markerPrefix starts every marker. A marker is restored as a back-quoted
// name, `\x00sfT3\x00`; a statement whose literals contain the prefix is
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
}

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

// restoreSQL restores a node with restoreFlags.
func restoreSQL(n ast.Node) (string, error) {
	var b strings.Builder
	b.Grow(128)
	if err := n.Restore(format.NewRestoreCtx(restoreFlags, &b)); err != nil {
		return "", errNotSupported("cannot rewrite the statement: %v", err)
	}
	return b.String(), nil
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
			return t, nil
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
	if t.verbatim && len(bind) > 0 {
		return t.segs[0].text, bind, nil
	}
	if len(t.segs) == 1 {
		return t.segs[0].text, nil, nil
	}
	var b strings.Builder
	b.Grow(t.size + 16*len(t.segs))
	var out []any
	if t.params > 0 {
		out = make([]any, 0, t.params)
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

// checkMarkers rejects a statement whose string literals (or names)
// contain the marker prefix; only raw NUL bytes or \0 escapes can produce
// one, so the walk runs only for such texts.
func checkMarkers(stmt ast.Node, sql string) error {
	if strings.IndexByte(sql, 0) < 0 && !strings.Contains(sql, `\0`) {
		return nil
	}
	var c markerChecker
	stmt.Accept(&c)
	if c.found {
		return errNotSupported("the statement contains the byte sequence NUL 's' 'f' in a literal or name, which the router reserves; pass such values as parameters")
	}
	return nil
}

type markerChecker struct{ found bool }

func (c *markerChecker) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *driver.ValueExpr:
		if x.Kind() == driver.KindString || x.Kind() == driver.KindBytes {
			c.found = c.found || strings.Contains(x.GetString(), markerPrefix)
		}
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
		}
		if text := strings.TrimSpace(f.Text()); text != "" && len(text) <= 256 {
			f.AsName = ast.CIStr{O: text, L: strings.ToLower(text)}
		}
	}
}
