package sqlarg

import "strings"

// LoadIgnoreRows rewrites LOAD DATA ... IGNORE n ROWS, which MariaDB reads
// as IGNORE n LINES and the TiDB parser does not know, to the LINES form;
// ok is false when sql is no such statement.
func LoadIgnoreRows(sql string) (out string, ok bool) {
	first, prev, prevEnd := true, "", 0
	at := -1
	scanWords(sql, Backslash, func(i int, w string) bool {
		if first {
			first = false
			if !strings.EqualFold(w, "LOAD") {
				return false
			}
		}
		if strings.EqualFold(w, "ROWS") && strings.EqualFold(prev, "IGNORE") {
			if n := strings.TrimSpace(sql[prevEnd:i]); n != "" && strings.Trim(n, "0123456789") == "" {
				at = i
				return false
			}
		}
		prev, prevEnd = w, i+len(w)
		return true
	})
	if at < 0 {
		return "", false
	}
	return sql[:at] + "LINES" + sql[at+len("ROWS"):], true
}
