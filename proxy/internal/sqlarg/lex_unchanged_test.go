package sqlarg

import (
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/sqllex"
)

// The hand-written scanners this package had before internal/sqllex, kept
// as the reference FuzzLexUnchanged compares the shared lexer with.

func oldSkipNonCode(sql string, i int, mode Mode) int {
	switch c := sql[i]; {
	case c == '\'' || c == '"' || c == '`':
		return oldSkipQuoted(sql, i, mode)
	case c == '#' || oldLineComment(sql, i):
		for i < len(sql) && sql[i] != '\n' {
			i++
		}
		return i
	case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
		j := i + 2
		for j+1 < len(sql) && !(sql[j] == '*' && sql[j+1] == '/') {
			j++
		}
		return min(j+2, len(sql))
	}
	return i
}

func oldLineComment(s string, i int) bool {
	if i+1 >= len(s) || s[i] != '-' || s[i+1] != '-' {
		return false
	}
	return i+2 == len(s) || s[i+2] <= ' '
}

func oldSkipQuoted(s string, i int, mode Mode) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == '\\' && q != '`' && mode != NoBackslashEscapes:
			j++
		case s[j] == q:
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}

func oldEachLiteral(sql string, mode Mode, b *strings.Builder, literal func(body string, q byte)) {
	last := 0
	for i := 0; i < len(sql); i++ {
		switch c := sql[i]; {
		case c == '\'' || c == '"':
			end := oldSkipQuoted(sql, i, mode)
			b.WriteString(sql[last:i])
			if end > i+1 && sql[end-1] == c && end-1 > i {
				literal(sql[i+1:end-1], c)
			} else {
				b.WriteString(sql[i:end])
			}
			last = end
			i = end - 1
		case c == '`':
			i = oldSkipQuoted(sql, i, mode) - 1
		case c == '#' || oldLineComment(sql, i):
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

func oldSkipSpace(sql string, i int) int {
	for i < len(sql) {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '#' || oldLineComment(sql, i):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			end := strings.Index(sql[i+2:], "*/")
			if end < 0 {
				return -1
			}
			i += 2 + end + 2
		default:
			return i
		}
	}
	return i
}

func oldSkipLeading(sql string) int {
	i := 0
	for i < len(sql) {
		switch {
		case sql[i] <= ' ':
			i++
		case sql[i] == '#' || oldLineComment(sql, i):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case sql[i] == '/' && i+1 < len(sql) && sql[i+1] == '*' && !(i+2 < len(sql) && sql[i+2] == '!'):
			j := i + 2
			for j+1 < len(sql) && !(sql[j] == '*' && sql[j+1] == '/') {
				j++
			}
			i = j + 2
		default:
			return i
		}
	}
	return i
}

// oldString is the single-quoted literal reading of the old
// normalizer.str: its end and value.
func oldString(sql string, i int) (end int, val string, ok bool) {
	var b []byte
	j := i + 1
	for j < len(sql) {
		c := sql[j]
		switch {
		case c == '\\':
			if j+1 >= len(sql) {
				return 0, "", false
			}
			if b == nil {
				b = append([]byte{}, sql[i+1:j]...)
			}
			switch d := sql[j+1]; d {
			case '%', '_':
				b = append(b, '\\', d)
			default:
				b = append(b, sqllex.Unescape(d))
			}
			j += 2
		case c == '\'' && j+1 < len(sql) && sql[j+1] == '\'':
			if b == nil {
				b = append([]byte{}, sql[i+1:j]...)
			}
			b = append(b, '\'')
			j += 2
		case c == '\'':
			if b == nil {
				return j + 1, sql[i+1 : j], true
			}
			return j + 1, string(b), true
		default:
			if b != nil {
				b = append(b, c)
			}
			j++
		}
	}
	return 0, "", false
}

// FuzzLexUnchanged: the shared lexer skips, splits and reads literals as
// this package's scanners did. They part only where those left MariaDB's
// rules, and the inputs that show it are left out: -- before DEL (0x7f, a
// control byte: a comment to MariaDB); a statement whose leading comment
// is /*M! ... */ (executable: SplitReturning no longer skips it) or that
// starts after control bytes (not white space to MariaDB); and an
// unterminated literal that ends in its quote (a doubled one), which the old
// rewrite took for a whole one (a syntax error either way).
func FuzzLexUnchanged(f *testing.F) {
	for _, s := range []string{
		"SELECT 'a''b', \"c\\\"d\", `e``f` -- g\n# h\n/* i */ /*! j */ ?", `'a\'`, "/*", "--", "`",
		"INSERT INTO t VALUES ('x') RETURNING id", "/* c */ INSERT INTO t VALUES (1) RETURNING *",
		"SELECT * FROM t WHERE a = 'it''s' AND b = '\\n\\%'",
	} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, sql string, noBackslash bool) {
		mode := Backslash
		if noBackslash {
			mode = NoBackslashEscapes
		}
		if strings.Contains(sql, "--\x7f") {
			t.Skip("-- before DEL")
		}
		for i := 0; i < len(sql); i++ {
			if got, want := sqllex.Skip(sql, i, mode), oldSkipNonCode(sql, i, mode); got != want {
				t.Fatalf("Skip(%q, %d) = %d, was %d", sql, i, got, want)
			}
			if got, want := skipSpace(sql, i), oldSkipSpace(sql, i); got != want {
				t.Fatalf("skipSpace(%q, %d) = %d, was %d", sql, i, got, want)
			}
			if sql[i] == '\'' {
				t0 := sqllex.At(sql, i, Backslash)
				oe, ov, ook := oldString(sql, i)
				if ook != !t0.Unterminated || ook && (oe != t0.End || ov != sqllex.Unquote(sql, t0, Backslash)) {
					t.Fatalf("string at %d of %q: %d %q %v, was %d %q %v", i, sql, t0.End, sqllex.Unquote(sql, t0, Backslash), !t0.Unterminated, oe, ov, ook)
				}
			}
		}
		if last := len(sql) - 1; last < 0 || sql[last] != '\'' && sql[last] != '"' {
			for _, m := range []Mode{Backslash, NoBackslashEscapes} {
				var got, want strings.Builder
				record := func(b *strings.Builder) func(string, byte) {
					return func(body string, q byte) { b.WriteString("<" + string(q) + body + ">") }
				}
				eachLiteral(sql, m, &got, record(&got))
				oldEachLiteral(sql, m, &want, record(&want))
				if got.String() != want.String() {
					t.Fatalf("eachLiteral(%q, %v) = %q, was %q", sql, m, got.String(), want.String())
				}
			}
		}
		if old := oldSkipLeading(sql); old <= len(sql) && !strings.Contains(sql, "/*M!") && !hasControl(sql) {
			if got, _ := sqllex.SkipSpace(sql, 0, Backslash); got != old {
				t.Fatalf("SkipSpace(%q) = %d, was %d", sql, got, old)
			}
		}
	})
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' && !sqllex.IsSpace(s[i]) {
			return true
		}
	}
	return false
}
