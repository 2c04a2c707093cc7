package router

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// The hand-written lexer hint.go had before internal/sqllex, kept as the
// reference FuzzCommentsUnchanged compares the shared lexer with.

func oldComments(sql string) []string {
	var out []string
	for i := 0; i < len(sql); i++ {
		switch c := sql[i]; c {
		case '\'', '"', '`':
			i = oldSkipQuoted(sql, i)
		case '#':
			i = oldSkipLine(sql, i)
		case '-':
			if i+2 < len(sql) && sql[i+1] == '-' && (sql[i+2] == ' ' || sql[i+2] == '\t' || sql[i+2] == '\n' || sql[i+2] == '\r') {
				i = oldSkipLine(sql, i)
			} else if i+2 == len(sql) && sql[i+1] == '-' {
				return out
			}
		case '/':
			if i+1 < len(sql) && sql[i+1] == '*' {
				end := strings.Index(sql[i+2:], "*/")
				if end < 0 {
					return out
				}
				body := sql[i+2 : i+2+end]
				if !strings.HasPrefix(body, "!") && !strings.HasPrefix(body, "+") {
					out = append(out, body)
				}
				i += 2 + end + 1
			}
		}
	}
	return out
}

func oldSkipQuoted(sql string, i int) int {
	q := sql[i]
	for j := i + 1; j < len(sql); j++ {
		switch sql[j] {
		case '\\':
			if q != '`' {
				j++
			}
		case q:
			if j+1 < len(sql) && sql[j+1] == q {
				j++
				continue
			}
			return j
		}
	}
	return len(sql)
}

func oldSkipLine(sql string, i int) int {
	if j := strings.IndexByte(sql[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(sql)
}

func oldCheckUTF8(sql string) bool {
	if utf8.ValidString(sql) {
		return true
	}
	for i := 0; i < len(sql); {
		switch sql[i] {
		case '\'', '"':
			i = oldSkipQuoted(sql, i) + 1
			continue
		}
		r, n := utf8.DecodeRuneInString(sql[i:])
		if r == utf8.RuneError && n == 1 {
			return false
		}
		i += n
	}
	return true
}

// FuzzCommentsUnchanged: the shared lexer finds the hint comments the
// old one found. Where they part is where the old one left MariaDB's
// rules, and the inputs that show it are left out: -- before a control
// byte other than tab, newline and carriage return (a comment to
// MariaDB), and /*M! ... */ (an executable comment, never a hint).
func FuzzCommentsUnchanged(f *testing.F) {
	for _, s := range []string{
		"SELECT /* SHARDINGSPHERE_HINT: a=1 */ 1", "SELECT 'a''/* x */' /* y */", "SELECT 1 --x /* y */",
		"SELECT `a``/*` /* b */", `SELECT 'a\' /* x */' /* y */`, "-- /* x */\n/* y */", "/*! a */ /*+ b */ /* c */",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		for i := 0; i+2 < len(sql); i++ {
			if sql[i] == '-' && sql[i+1] == '-' && (sql[i+2] < ' ' || sql[i+2] == 0x7f) && !strings.ContainsRune("\t\n\r", rune(sql[i+2])) {
				t.Skip("-- before a control byte")
			}
		}
		var old []string
		for _, c := range oldComments(sql) {
			if !strings.HasPrefix(c, "M!") {
				old = append(old, c)
			}
		}
		if got, want := fmt.Sprintf("%q", comments(sql)), fmt.Sprintf("%q", old); got != want {
			t.Fatalf("comments(%q) = %s, was %s", sql, got, want)
		}
	})
}

// FuzzCheckUTF8Unchanged: the shared lexer accepts and refuses what the
// old scan did, on statements where the old scan read the quotes right:
// it skipped '...' and "..." wherever they started, inside a comment or
// a quoted name too, and so accepted a bad byte in a name (`a'b` \xff 'c').
func FuzzCheckUTF8Unchanged(f *testing.F) {
	for _, s := range []string{"SELECT '\xff'", "SELECT \"\xff\"", "SELECT `\xff`", "SELECT \xff(1)", `SELECT 'a\'\xff'`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		if strings.ContainsAny(sql, "`#/") || strings.Contains(sql, "--") {
			t.Skip("a name or comment, which the old scan did not know")
		}
		if got, want := checkUTF8(sql) == nil, oldCheckUTF8(sql); got != want {
			t.Fatalf("checkUTF8(%q) accepts: %v, was %v", sql, got, want)
		}
	})
}
