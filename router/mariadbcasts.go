package router

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/charset"
	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/shardflake/shardflake/internal/sqllex"
)

// MariaDB reads INT, INTEGER and INT4 as the type of a CAST or CONVERT,
// short for SIGNED (its manual: "INTEGER: short for SIGNED INTEGER"), and
// INT4 after SIGNED or UNSIGNED as INT; the parser knows only SIGNED and
// UNSIGNED, with an optional INT or INTEGER, there (1064). castEdits
// writes each such word as a spelling the parser reads and MariaDB reads
// alike (the same type, values and column definition), so a data node
// answers the same whichever it gets: a statement sent verbatim is the
// client's text, a restored one says SIGNED. The texts the parser keeps
// of the stand-in text, by which a column is named and a query of several
// statements is split, are set back to the client's (clientTexts).

// castStandIn returns what the parser reads in place of word, a CAST or
// CONVERT type word after prev (both lower case); "" to leave it.
func castStandIn(prev, word string) string {
	switch word {
	case "int", "integer", "int4":
	default:
		return ""
	}
	switch prev {
	case "as", ",":
		return "SIGNED"
	case "signed", "unsigned":
		if word == "int4" {
			return "INTEGER"
		}
	}
	return ""
}

// castEdits returns the edits of sql that write the CAST and CONVERT types
// the parser does not know as their stand-ins: a type word that closes the
// parentheses of CAST after AS, or of CONVERT after its first argument's
// comma, either maybe followed by SIGNED or UNSIGNED. The same words
// elsewhere, in strings, quoted names and comments, are left alone.
func castEdits(sql string, mode sqllex.Mode) []textEdit {
	if !containsFold(sql, "int") {
		return nil
	}
	code := sqllex.CodeTokens(sql, mode)
	var (
		edits []textEdit
		calls []string // per open parenthesis, the word before it (lower case)
	)
	lower := func(i int) string {
		if i < 0 {
			return ""
		}
		return strings.ToLower(code[i].Text(sql))
	}
	for i, t := range code {
		if t.Kind == sqllex.Punct {
			switch t.Text(sql) {
			case "(":
				fn := ""
				if i > 0 && code[i-1].Kind == sqllex.Word {
					fn = lower(i - 1)
				}
				calls = append(calls, fn)
			case ")":
				if len(calls) > 0 {
					calls = calls[:len(calls)-1]
				}
			}
			continue
		}
		if t.Kind != sqllex.Word || i == 0 || len(calls) == 0 || i+1 == len(code) || code[i+1].Text(sql) != ")" {
			continue
		}
		prev := lower(i - 1)
		stand := castStandIn(prev, strings.ToLower(t.Text(sql)))
		if stand == "" {
			continue
		}
		before := prev // the word or comma that introduces the type
		if prev == "signed" || prev == "unsigned" {
			before = lower(i - 2)
		}
		if fn := calls[len(calls)-1]; fn == "cast" && before == "as" || fn == "convert" && before == "," {
			edits = append(edits, textEdit{start: t.Start, end: t.End, text: stand})
		}
	}
	return edits
}

// textEdit writes text in place of sql[start:end] of a client's sql.
type textEdit struct {
	start, end int
	text       string
}

// applyEdits returns sql with its edits, which are in the order of the
// text and do not overlap, made.
func applyEdits(sql string, edits []textEdit) string {
	if len(edits) == 0 {
		return sql
	}
	var b strings.Builder
	b.Grow(len(sql) + 8*len(edits))
	last := 0
	for _, e := range edits {
		b.WriteString(sql[last:e.start])
		b.WriteString(e.text)
		last = e.end
	}
	b.WriteString(sql[last:])
	return b.String()
}

// clientOffset returns the offset in the client's text of offset i of
// the edited text; -1 when i is inside an edit's text.
func clientOffset(edits []textEdit, i int) int {
	shift := 0 // the client's text is longer by this before i
	for _, e := range edits {
		at := e.start - shift // where the edit's text starts in the edited text
		if i <= at {
			break
		}
		if i < at+len(e.text) {
			return -1
		}
		shift += e.end - e.start - len(e.text)
	}
	return i + shift
}

// clientTexts gives the statements parsed from edited, sql with edits
// made, and their select fields the client's texts of themselves, which
// name the columns of a select list and are the statements of a query
// that has several. A text not found where the parser says it is stays
// as it is.
func clientTexts(stmts []ast.StmtNode, sql, edited string, edits []textEdit) {
	// The encoding the session's parser reads text in: it is given no
	// client charset.
	enc := charset.FindEncoding(mysql.DefaultCharset)
	client := func(start int, text string) (int, string, bool) {
		if start < 0 || start+len(text) > len(edited) || edited[start:start+len(text)] != text {
			return 0, "", false
		}
		s, e := clientOffset(edits, start), clientOffset(edits, start+len(text))
		if s < 0 || e < s {
			return 0, "", false
		}
		return s, sql[s:e], true
	}
	fields := &selectFields{}
	next := 0 // the statements are in the order of the text
	for _, st := range stmts {
		text := st.OriginalText()
		if i := strings.Index(edited[next:], text); text != "" && i >= 0 {
			if _, own, ok := client(next+i, text); ok {
				st.SetText(enc, own)
			}
			next += i + len(text)
		}
		st.Accept(fields)
	}
	for _, f := range fields.list {
		if start, own, ok := client(f.Offset, f.OriginalText()); ok {
			f.SetText(enc, own)
			f.Offset = start
		}
	}
}

// selectFields collects the select fields of a statement.
type selectFields struct{ list []*ast.SelectField }

func (c *selectFields) Enter(n ast.Node) (ast.Node, bool) {
	if f, ok := n.(*ast.SelectField); ok && f.OriginalText() != "" {
		c.list = append(c.list, f)
	}
	return n, false
}

func (c *selectFields) Leave(n ast.Node) (ast.Node, bool) { return n, true }
