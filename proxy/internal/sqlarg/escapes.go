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
