package sqlarg

import "strings"

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
				d := unescape(body[i])
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

// unescape is the byte a backslash escape stands for (MySQL's table;
// any other character stands for itself).
func unescape(c byte) byte {
	switch c {
	case '0':
		return 0
	case 'b':
		return '\b'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'Z':
		return 0x1a
	}
	return c
}

// eachLiteral copies sql to b, calling literal with the body (between the
// quotes) and the quote of each '...' or "..." literal instead of copying
// it. Quoted names and comments are copied as they are. mode says how the
// literals are written.
func eachLiteral(sql string, mode Mode, b *strings.Builder, literal func(body string, q byte)) {
	last := 0
	for i := 0; i < len(sql); i++ {
		switch c := sql[i]; {
		case c == '\'' || c == '"':
			end := skipQuoted(sql, i, mode)
			b.WriteString(sql[last:i])
			if end > i+1 && sql[end-1] == c && end-1 > i {
				literal(sql[i+1:end-1], c)
			} else {
				b.WriteString(sql[i:end]) // unterminated: as it is
			}
			last = end
			i = end - 1
		case c == '`':
			i = skipQuoted(sql, i, mode) - 1
		case c == '#' || lineComment(sql, i):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			j := i + 2
			for j+1 < len(sql) && !(sql[j] == '*' && sql[j+1] == '/') {
				j++
			}
			i = j + 1
		}
	}
	b.WriteString(sql[last:])
}
