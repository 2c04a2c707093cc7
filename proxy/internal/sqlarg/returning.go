package sqlarg

import (
	"strings"

	"github.com/shardflake/shardflake/internal/sqllex"
)

// SplitReturning cuts the RETURNING clause off an INSERT or REPLACE
// statement (MariaDB 10.5+) or a DELETE (MariaDB 10.0.5+), which the SQL
// parser does not know: base is the statement without it, list its
// select list. ok is false when sql is not an INSERT, REPLACE or DELETE
// or has no RETURNING outside quotes, comments and parentheses.
func SplitReturning(sql string) (base, list string, ok bool) {
	// The first word first: a SELECT or UPDATE is not lowered (a copy
	// of its text) to look for the clause.
	start, _ := sqllex.SkipSpace(sql, 0, Backslash)
	if !hasWord(sql, start, "insert") && !hasWord(sql, start, "replace") && !hasWord(sql, start, "delete") {
		return "", "", false
	}
	if !strings.Contains(strings.ToLower(sql), "returning") {
		return "", "", false
	}
	at := -1
	scanTop(sql, start, func(i int, c byte) bool {
		if (c == 'r' || c == 'R') && (i == 0 || !isWordByte(sql[i-1])) && hasWord(sql, i, "returning") {
			at = i
			return false
		}
		return true
	})
	if at < 0 {
		return "", "", false
	}
	list = strings.TrimSpace(sql[at+len("returning"):])
	list = strings.TrimSpace(strings.TrimSuffix(list, ";"))
	if list == "" {
		return "", "", false
	}
	return strings.TrimSpace(sql[:at]), list, true
}

// scanTop calls visit with each byte of sql from start that stands
// outside quotes, comments and parentheses (the parentheses themselves are
// not passed), until visit returns false.
func scanTop(sql string, start int, visit func(i int, c byte) bool) {
	depth := 0
	for i := start; i < len(sql); i++ {
		if j := sqllex.Skip(sql, i, Backslash); j > i {
			i = j - 1
			continue
		}
		switch c := sql[i]; {
		case c == '(':
			depth++
		case c == ')':
			depth--
		case depth == 0:
			if !visit(i, c) {
				return
			}
		}
	}
}

// hasWord reports whether the word w (lower case) starts at i, as a whole
// word, in any case.
func hasWord(sql string, i int, w string) bool {
	if i+len(w) > len(sql) || !strings.EqualFold(sql[i:i+len(w)], w) {
		return false
	}
	return i+len(w) == len(sql) || !isWordByte(sql[i+len(w)])
}
