package sqlarg

import (
	"strings"

	"github.com/shardflake/shardflake/internal/sqllex"
)

// Under sql_mode NO_BACKSLASH_ESCAPES a backslash in a string literal is
// an ordinary character; otherwise it starts an escape sequence. The
// proxy reads, rewrites and writes SQL in the default form, backslash
// escapes, whatever the session's mode: ToBackslashEscapes turns a
// client's NO_BACKSLASH_ESCAPES text into that form as it arrives, and
// ToNoBackslashEscapes turns what the proxy sends back into the form of a
// backend session running with NO_BACKSLASH_ESCAPES. Both change only the
// insides of '...' and "..." literals, and both give back the text itself
// when it holds no backslash (the usual case costs one byte search).

// ToBackslashEscapes rewrites sql, written for NO_BACKSLASH_ESCAPES, so
// that it means the same with backslash escapes: every backslash inside a
// string literal is doubled.
func ToBackslashEscapes(sql string) string {
	if strings.IndexByte(sql, '\\') < 0 {
		return sql
	}
	var b strings.Builder
	b.Grow(len(sql) + 8)
	eachLiteral(sql, NoBackslashEscapes, &b, func(body string, q byte) {
		b.WriteByte(q)
		b.WriteString(strings.ReplaceAll(body, `\`, `\\`))
		b.WriteByte(q)
	})
	return b.String()
}

// ToNoBackslashEscapes rewrites sql, written with backslash escapes, so
// that it means the same under NO_BACKSLASH_ESCAPES: inside string
// literals, escape sequences become the bytes they stand for, and the
// quote character is doubled.
func ToNoBackslashEscapes(sql string) string {
	if strings.IndexByte(sql, '\\') < 0 {
		return sql
	}
	var b strings.Builder
	b.Grow(len(sql))
	eachLiteral(sql, Backslash, &b, func(body string, q byte) {
		b.WriteByte(q)
		for i := 0; i < len(body); i++ {
			c := body[i]
			switch {
			case c == q && i+1 < len(body) && body[i+1] == q:
				// A doubled quote stays doubled.
				b.WriteByte(q)
				b.WriteByte(q)
				i++
			case c == '\\' && i+1 < len(body):
				i++
				d := sqllex.Unescape(body[i])
				if d == '%' || d == '_' {
					// \% and \_ keep their backslash (LIKE patterns).
					b.WriteByte('\\')
				}
				if d == q {
					b.WriteByte(q)
				}
				b.WriteByte(d)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte(q)
	})
	return b.String()
}

// eachLiteral copies sql to b, calling literal with the body (between the
// quotes) and the quote of each '...' or "..." literal instead of copying
// it. Quoted names and comments are copied as they are. mode says how the
// literals are written.
func eachLiteral(sql string, mode Mode, b *strings.Builder, literal func(body string, q byte)) {
	last := 0
	for i := 0; i < len(sql); i++ {
		j := sqllex.Skip(sql, i, mode)
		if j == i {
			continue
		}
		if c := sql[i]; c == '\'' || c == '"' {
			b.WriteString(sql[last:i])
			if t := sqllex.At(sql, i, mode); t.Unterminated {
				b.WriteString(sql[i:j]) // as it is
			} else {
				literal(t.Body(sql), c)
			}
			last = j
		}
		i = j - 1
	}
	b.WriteString(sql[last:])
}

// Under sql_mode ANSI_QUOTES a "..." is a quoted name, in which a
// backslash is an ordinary character, while the TiDB parser reads a
// "..." name with backslash escapes, as it reads a literal. The proxy's
// form of such a name therefore has its backslashes doubled:
// QuotedNamesToBackslashEscapes turns the client's ANSI_QUOTES text (with
// backslash escapes in '...') into that form, QuotedNamesFromBackslashEscapes
// turns it back for a backend session running with ANSI_QUOTES (and
// without NO_BACKSLASH_ESCAPES, whose conversion already covers names).

// QuotedNamesToBackslashEscapes doubles every backslash inside the "..."
// names of sql, written under ANSI_QUOTES with backslash escapes.
func QuotedNamesToBackslashEscapes(sql string) string {
	if strings.IndexByte(sql, '\\') < 0 || strings.IndexByte(sql, '"') < 0 {
		return sql
	}
	var b strings.Builder
	b.Grow(len(sql) + 8)
	eachQuotedName(sql, &b, func(body string) {
		b.WriteString(strings.ReplaceAll(body, `\`, `\\`))
	})
	return b.String()
}

// QuotedNamesFromBackslashEscapes turns the escape sequences inside the
// "..." names of sql, in the proxy's form, into the bytes they stand for.
func QuotedNamesFromBackslashEscapes(sql string) string {
	if strings.IndexByte(sql, '\\') < 0 || strings.IndexByte(sql, '"') < 0 {
		return sql
	}
	var b strings.Builder
	b.Grow(len(sql))
	eachQuotedName(sql, &b, func(body string) {
		for i := 0; i < len(body); i++ {
			if c := body[i]; c == '\\' && i+1 < len(body) {
				i++
				b.WriteByte(sqllex.Unescape(body[i]))
			} else {
				b.WriteByte(c)
			}
		}
	})
	return b.String()
}

// eachQuotedName copies sql to b, calling name with the body of each
// "..." name (between the quotes, which it writes itself) instead of
// copying it. '...' literals are read with backslash escapes, a "..."
// name without: its end is the first quote not doubled.
func eachQuotedName(sql string, b *strings.Builder, name func(body string)) {
	last := 0
	for i := 0; i < len(sql); i++ {
		if sql[i] == '"' {
			t := sqllex.At(sql, i, NoBackslashEscapes)
			if !t.Unterminated {
				b.WriteString(sql[last:i])
				b.WriteByte('"')
				name(sql[i+1 : t.End-1])
				b.WriteByte('"')
				last = t.End
			}
			i = t.End - 1
			continue
		}
		if j := sqllex.Skip(sql, i, Backslash); j > i {
			i = j - 1
		}
	}
	b.WriteString(sql[last:])
}
