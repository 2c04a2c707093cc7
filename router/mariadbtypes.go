package router

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/shardflake/shardflake/internal/sqllex"
)

// MariaDB's own column types UUID (10.7), INET6 (10.5) and INET4 (10.10)
// are unknown to the parser, which refuses a CREATE or ALTER TABLE that
// names one (1064). StandInTypes writes each as a type the parser reads,
// of the same shape (a string of the type's text length); the caller
// parses that text and marks the column definitions with the client's
// types (ColumnTypes.Mark), and the restorer writes them back
// (dialectFixer): what a data node gets is the client's type, never the
// stand-in. A statement sent verbatim is the client's own text.

// standIn is the type the parser reads in place of MariaDB's type word
// (lower case); "" for any other word.
func standIn(word string) string {
	switch word {
	case "uuid":
		return "CHAR(36)"
	case "inet6":
		return "VARCHAR(39)"
	case "inet4":
		return "VARCHAR(15)"
	}
	return ""
}

// notColumnName holds the words that come before a name, or a type word
// used as a name, where no column definition starts: "AFTER uuid", "DROP
// COLUMN inet6", "KEY uuid (a)".
func notColumnName(lower string) bool {
	switch lower {
	case "add", "after", "alter", "as", "by", "change", "check", "collate", "column",
		"constraint", "default", "drop", "exists", "first", "foreign", "fulltext",
		"index", "key", "like", "modify", "on", "primary", "references", "rename",
		"set", "spatial", "table", "to", "unique", "using":
		return true
	}
	return false
}

// ColumnType is a column definition whose type StandInTypes replaced.
type ColumnType struct {
	Column  string // the column's name as the client wrote it, unquoted
	Type    string // MariaDB's type as the client wrote it, its length too
	standIn string
}

// StandInTypes returns sql with each of MariaDB's UUID, INET6 and INET4
// that follows a column's name written as its stand-in, and the columns
// it replaced, in the order of the text; none when sql names no such type
// after a name. MariaDB takes and ignores a length, UUID(3) or even
// UUID(3,2): it is part of the type replaced. A type word followed by any
// other ( or by . is a function or a qualified name, and is left alone.
func StandInTypes(sql string, mode sqllex.Mode) (string, []ColumnType) {
	edits, types := typeEdits(sql, mode)
	return applyEdits(sql, edits), types
}

// typeEdits returns StandInTypes' replacements as edits of sql.
func typeEdits(sql string, mode sqllex.Mode) ([]textEdit, []ColumnType) {
	if !containsFold(sql, "uuid") && !containsFold(sql, "inet") {
		return nil, nil
	}
	code := sqllex.CodeTokens(sql, mode)
	var (
		edits []textEdit
		types []ColumnType
	)
	for i := 1; i < len(code); i++ {
		w := code[i]
		stand := ""
		if w.Kind == sqllex.Word {
			stand = standIn(strings.ToLower(w.Text(sql)))
		}
		if stand == "" {
			continue
		}
		name := ""
		switch prev := code[i-1]; prev.Kind {
		case sqllex.QuotedName:
			name = sqllex.Unquote(sql, prev, mode)
		case sqllex.Word:
			if t := prev.Text(sql); !notColumnName(strings.ToLower(t)) {
				name = t
			}
		}
		if name == "" {
			continue
		}
		end := w.End
		if i+1 < len(code) {
			switch next := code[i+1]; next.Text(sql) {
			case ".":
				continue
			case "(":
				n := typeLength(sql, code[i+1:])
				if n == 0 {
					continue
				}
				end = code[i+n].End
				i += n
			}
		}
		types = append(types, ColumnType{Column: name, Type: sql[w.Start:end], standIn: stand})
		edits = append(edits, textEdit{start: w.Start, end: end, text: stand})
	}
	return edits, types
}

// typeLength returns how many of code's tokens a length ("(3)" or
// "(3,2)") takes at its start; 0 when there is none.
func typeLength(sql string, code []sqllex.Token) int {
	number := func(t sqllex.Token) bool {
		return t.Kind == sqllex.Word && strings.Trim(t.Text(sql), "0123456789") == ""
	}
	for _, n := range []int{3, 5} {
		if len(code) < n || code[n-1].Text(sql) != ")" || !number(code[1]) {
			continue
		}
		if n == 3 || code[2].Text(sql) == "," && number(code[3]) {
			return n
		}
	}
	return 0
}

// mariadbTypeOption marks a column definition with MariaDB's type: a
// column option of no kind, which the parser never makes, whose value is
// the type. It restores as nothing.
func mariadbTypeOption(typ string) *ast.ColumnOption {
	return &ast.ColumnOption{Tp: ast.ColumnOptionNoOption, StrValue: markerPrefix + typ}
}

// mariadbTypeOf returns the type a column definition is marked with.
func mariadbTypeOf(def *ast.ColumnDef) (string, bool) {
	for _, o := range def.Options {
		if o.Tp == ast.ColumnOptionNoOption && strings.HasPrefix(o.StrValue, markerPrefix) {
			return o.StrValue[len(markerPrefix):], true
		}
	}
	return "", false
}

// MarkColumnTypes marks the column definitions of stmt, a CREATE or
// ALTER TABLE parsed from StandInTypes' text, with the types it replaced,
// so that the statement restores with them. Each replaced type must be
// the stand-in type of exactly one column definition of its name;
// otherwise the error says the statement cannot be read.
func MarkColumnTypes(stmt ast.StmtNode, types []ColumnType) error {
	switch stmt.(type) {
	case *ast.CreateTableStmt, *ast.AlterTableStmt:
	default:
		return errNotSupported("the types %s are read only in CREATE TABLE and ALTER TABLE", typeList(types))
	}
	var c columnDefs
	stmt.Accept(&c)
	for _, ct := range types {
		var found *ast.ColumnDef
		for _, def := range c.defs {
			if !strings.EqualFold(def.Name.Name.O, ct.Column) || def.Tp == nil || !hasType(def, ct.standIn) {
				continue
			}
			if _, marked := mariadbTypeOf(def); marked || found != nil {
				return errNotSupported("cannot read the types of columns named %s twice in one statement", ct.Column)
			}
			found = def
		}
		if found == nil {
			return errNotSupported("cannot read %s as the type of column %s", ct.Type, ct.Column)
		}
		found.Options = append(found.Options, mariadbTypeOption(ct.Type))
	}
	return nil
}

func typeList(types []ColumnType) string {
	names := make([]string, len(types))
	for i, ct := range types {
		names[i] = ct.Type
	}
	return strings.Join(names, ", ")
}

// hasType reports whether def's type restores as want.
func hasType(def *ast.ColumnDef, want string) bool {
	var b strings.Builder
	if err := def.Tp.Restore(format.NewRestoreCtx(restoreFlags, &b)); err != nil {
		return false
	}
	return b.String() == want
}

// columnDefs collects the column definitions of a statement.
type columnDefs struct{ defs []*ast.ColumnDef }

func (c *columnDefs) Enter(n ast.Node) (ast.Node, bool) {
	if def, ok := n.(*ast.ColumnDef); ok {
		c.defs = append(c.defs, def)
	}
	return n, false
}

func (c *columnDefs) Leave(n ast.Node) (ast.Node, bool) { return n, true }
