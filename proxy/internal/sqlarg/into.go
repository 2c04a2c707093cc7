package sqlarg

import (
	"strings"

	"github.com/shardflake/shardflake/internal/sqllex"
)

// SplitInto cuts an INTO @var[, @var ...] clause off a SELECT, which the
// SQL parser does not read: base is the SELECT without it, vars the user
// variables' names, in order. MariaDB takes the clause after the select
// list or at the end of the statement; either place is found, outside
// quotes, comments and parentheses. ok is false when sql is not a SELECT
// (or a WITH or parenthesised one), has no such clause, or is several
// statements; INTO OUTFILE, DUMPFILE and INTO a local variable are left
// as they are. last reports that the clause follows the FROM clause, a
// place MariaDB deprecates (warning 1287).
func SplitInto(sql string) (base string, vars []string, last, ok bool) {
	start, _ := sqllex.SkipSpace(sql, 0, Backslash)
	if start >= len(sql) || !(hasWord(sql, start, "select") || hasWord(sql, start, "with") || sql[start] == '(') {
		return "", nil, false, false
	}
	if !strings.Contains(sql, "@") {
		return "", nil, false, false
	}
	at, from, several := -1, -1, false
	scanTop(sql, start, func(i int, c byte) bool {
		wordStart := i == 0 || !isWordByte(sql[i-1])
		switch {
		case c == ';':
			if rest, _ := sqllex.SkipSpace(sql, i+1, Backslash); rest < len(sql) {
				several = true
				return false
			}
		case from < 0 && (c == 'f' || c == 'F') && wordStart && hasWord(sql, i, "from"):
			from = i
		case at < 0 && (c == 'i' || c == 'I') && wordStart && hasWord(sql, i, "into"):
			at = i
		}
		return true
	})
	if at < 0 || several {
		return "", nil, false, false
	}
	end := at + len("into")
	for {
		i, _ := sqllex.SkipSpace(sql, end, Backslash)
		name, next, ok := userVar(sql, i)
		if !ok {
			return "", nil, false, false
		}
		vars = append(vars, name)
		end = next
		j, _ := sqllex.SkipSpace(sql, end, Backslash)
		if j >= len(sql) || sql[j] != ',' {
			break
		}
		end = j + 1
	}
	base = strings.TrimRight(sql[:at], " \t\r\n") + " " + strings.TrimLeft(sql[end:], " \t\r\n")
	return strings.TrimSpace(base), vars, from >= 0 && from < at, true
}

// userVar reads a user variable @name, @`name`, @'name' or @"name" at i:
// its name and the index past it.
func userVar(sql string, i int) (name string, next int, ok bool) {
	if i+1 >= len(sql) || sql[i] != '@' {
		return "", 0, false
	}
	i++
	t := sqllex.At(sql, i, Backslash)
	switch {
	case t.Unterminated:
		return "", 0, false
	case t.Kind == sqllex.QuotedName:
		return sqllex.Unquote(sql, t, Backslash), t.End, true
	case t.Kind == sqllex.String:
		return t.Body(sql), t.End, true
	case t.Kind == sqllex.Word:
		return t.Text(sql), t.End, true
	}
	return "", 0, false
}
