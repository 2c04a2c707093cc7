package proxy

import (
	"strings"
	"testing"
)

// The admin lexer's own whitespace, comment and quote readers before
// internal/sqllex, kept as the reference FuzzAdminLexUnchanged compares
// the shared lexer with.

func oldAdminSkip(s string, pos int) (int, bool) {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' }
	skipLine := func() {
		if i := strings.IndexByte(s[pos:], '\n'); i >= 0 {
			pos += i + 1
		} else {
			pos = len(s)
		}
	}
	for pos < len(s) {
		c := s[pos]
		switch {
		case isSpace(c):
			pos++
		case c == '#':
			skipLine()
		case c == '-' && strings.HasPrefix(s[pos:], "--") && (pos+2 == len(s) || isSpace(s[pos+2])):
			skipLine()
		case c == '/' && strings.HasPrefix(s[pos:], "/*"):
			if strings.HasPrefix(s[pos:], "/*!") {
				return pos, false
			}
			end := strings.Index(s[pos+2:], "*/")
			if end < 0 {
				return pos, false
			}
			pos += 2 + end + 2
		default:
			return pos, true
		}
	}
	return pos, true
}

func oldAdminIdent(s string, pos int) (string, int, bool) {
	var b strings.Builder
	for i := pos + 1; i < len(s); i++ {
		c := s[i]
		if c != '`' {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(s) && s[i+1] == '`' {
			b.WriteByte('`')
			i++
			continue
		}
		return b.String(), i + 1, b.Len() > 0
	}
	return "", pos, false
}

func oldAdminQuoted(s string, pos int) (string, int, bool) {
	q := s[pos]
	var b strings.Builder
	for i := pos + 1; i < len(s); i++ {
		c := s[i]
		if c != q {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(s) && s[i+1] == q {
			b.WriteByte(q)
			i++
			continue
		}
		return b.String(), i + 1, true
	}
	return "", pos, false
}

// FuzzAdminLexUnchanged: the admin lexer skips white space and comments
// and reads quoted names and strings as it did before it used sqllex.
// Left out, where the old reader parted from MariaDB: -- before a control
// byte other than white space (a comment to MariaDB), and /*M! ... */,
// which MariaDB runs (the statement is left to the parser now, as one
// with /*! ... */ was).
func FuzzAdminLexUnchanged(f *testing.F) {
	for _, s := range []string{"  /* a */ # b\n-- c\nSHOW", "`a``b` 'c''d' \"e\\\"", "/*! x */", "/* x", "--x", "-- "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		if strings.Contains(sql, "/*M!") {
			t.Skip("/*M!")
		}
		for i := 0; i+2 < len(sql); i++ {
			if sql[i] == '-' && sql[i+1] == '-' && (sql[i+2] < ' ' || sql[i+2] == 0x7f) && !strings.ContainsRune("\t\n\r\f\v", rune(sql[i+2])) {
				t.Skip("-- before a control byte")
			}
		}
		for pos := 0; pos < len(sql); pos++ {
			lx := adminLexer{sql: sql, pos: pos}
			ok := lx.skip()
			wantPos, wantOK := oldAdminSkip(sql, pos)
			if lx.pos != wantPos || ok != wantOK {
				t.Fatalf("skip(%q) from %d = %d, %v; was %d, %v", sql, pos, lx.pos, ok, wantPos, wantOK)
			}
			switch sql[pos] {
			case '`':
				lx := adminLexer{sql: sql, pos: pos}
				name, ok := lx.ident()
				wantName, wantEnd, wantOK := oldAdminIdent(sql, pos)
				if ok != wantOK || ok && (name != wantName || lx.pos != wantEnd) {
					t.Fatalf("ident(%q) at %d = %q, %d, %v; was %q, %d, %v", sql, pos, name, lx.pos, ok, wantName, wantEnd, wantOK)
				}
			case '\'', '"':
				lx := adminLexer{sql: sql, pos: pos}
				s, ok := lx.quoted()
				wantS, wantEnd, wantOK := oldAdminQuoted(sql, pos)
				if ok != wantOK || ok && (s != wantS || lx.pos != wantEnd) {
					t.Fatalf("quoted(%q) at %d = %q, %d, %v; was %q, %d, %v", sql, pos, s, lx.pos, ok, wantS, wantEnd, wantOK)
				}
			}
		}
	})
}
