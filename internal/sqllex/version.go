package sqllex

import "strings"

// Runs reports whether a MariaDB server whose version is id (major*10000
// + minor*100 + patch: 101119 for 10.11.19) runs the text of executable
// comment t, as MariaDB's lexer decides: a version number after the
// marker is five digits, or six when a sixth follows (fewer digits are
// no version: they are code); the text runs when the version is at most
// the server's, except that /*! with a version from 50700 to 99999 (a
// MySQL 5.7 or later feature) never runs, where /*M! does.
func (t Token) Runs(sql string, id int) bool {
	version, _, ok := t.version(sql)
	if !ok {
		return true
	}
	if version > id {
		return false
	}
	return sql[t.Start+2] == 'M' || version < 50700 || version > 99999
}

// version reads t's version number and where it ends in sql, where the
// comment's text starts (after the marker, when it has none).
func (t Token) version(sql string) (version, end int, ok bool) {
	end = t.Start + 3
	if sql[t.Start+2] == 'M' {
		end++
	}
	start := end
	for end < t.End && end-start < 6 && sql[end] >= '0' && sql[end] <= '9' {
		version = version*10 + int(sql[end]-'0')
		end++
	}
	if end-start < 5 {
		return 0, start, false
	}
	return version, end, true
}

// HasExecutable reports whether sql may hold an executable comment (its
// markers may stand inside a string too).
func HasExecutable(sql string) bool {
	return strings.Contains(sql, "/*!") || strings.Contains(sql, "/*M!")
}

// ParserText returns sql with its executable comments written as the
// TiDB parser must see them to read what a MariaDB server of version id
// (Runs) reads: one the server runs keeps a /*! marker, its M and
// version number turned to spaces (the parser reads exactly five digits
// of a version, and takes /*M! for a plain comment); one it skips becomes
// spaces, which the parser leaves out of a select field's text (its
// column name), as MariaDB leaves the comment out. The text keeps its
// length, so offsets into it are offsets into sql; sql itself comes back
// when it holds no executable comment. An unterminated comment stays as
// it is, the syntax error it is.
func ParserText(sql string, mode Mode, id int) string {
	if !HasExecutable(sql) {
		return sql
	}
	var b []byte
	for i := 0; i < len(sql); {
		t := At(sql, i, mode)
		i = t.End
		if t.Kind != Executable || t.Unterminated {
			continue
		}
		if b == nil {
			b = []byte(sql)
		}
		if !t.Runs(sql, id) {
			for j := t.Start; j < t.End; j++ {
				b[j] = ' '
			}
			continue
		}
		_, end, _ := t.version(sql)
		b[t.Start+2] = '!'
		for j := t.Start + 3; j < end; j++ {
			b[j] = ' '
		}
	}
	if b == nil {
		return sql
	}
	return string(b)
}
