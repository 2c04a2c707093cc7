package proxy

import (
	"strings"

	"github.com/shardflake/shardflake/internal/sqllex"
)

// Logical names for what a physical table's metadata names: the router
// gives each physical table of a sharded table its own constraint names
// (<name>_<physical table>, router.ConstraintSuffix), InnoDB names unnamed
// foreign keys <physical table>_ibfk_N, and a foreign key between binding
// tables references the paired physical table. Where the proxy shows a
// table's definition (SHOW CREATE TABLE, SHOW INDEX, information_schema)
// the client sees the names it gave.

// logicalConstraint returns the name the client gave the constraint or
// index that physical table physical calls name.
func (s *snapshot) logicalConstraint(physical, name string) string {
	logical, ok := s.physicalTable[physical]
	if !ok {
		return name
	}
	if suffix := "_" + physical; len(name) > len(suffix) && strings.HasSuffix(name, suffix) {
		return name[:len(name)-len(suffix)]
	}
	if prefix := physical + "_"; strings.HasPrefix(name, prefix) && logical != physical {
		return logical + name[len(physical):]
	}
	return name
}

// messageConstraint returns the name the client gave the constraint
// that a backend's message msg calls name: the physical table the message
// names (`order_items_0`) is the one whose constraint names carry it,
// <name>_<physical table> as the router names a sharded table's
// constraints, or InnoDB's <physical table>_ibfk_N.
func (s *snapshot) messageConstraint(msg, name string) string {
	return s.constraintNamed(name, func(physical string) bool { return strings.Contains(msg, "`"+physical+"`") })
}

// droppedConstraint returns the name the client gave the foreign key that
// MariaDB's 1091 "Can't DROP FOREIGN KEY `name`" calls name: the message
// names no table, so a physical table that name carries is the one.
func (s *snapshot) droppedConstraint(name string) string {
	return s.constraintNamed(name, func(string) bool { return true })
}

// constraintNamed returns the name the client gave constraint name of a
// physical table that name carries (as <name>_<physical table> or
// <physical table>_ibfk_N) and named accepts, or name itself.
func (s *snapshot) constraintNamed(name string, named func(physical string) bool) string {
	for k := 1; k < len(name)-1; k++ {
		if name[k] != '_' {
			continue
		}
		for _, physical := range []string{name[k+1:], name[:k]} {
			if _, ok := s.physicalTable[physical]; ok && named(physical) {
				if l := s.logicalConstraint(physical, name); l != name {
					return l
				}
			}
		}
	}
	return name
}

// logicalTableName returns the logical table of a physical table name,
// or name itself.
func (s *snapshot) logicalTableName(name string) string {
	if logical, ok := s.physicalTable[name]; ok {
		return logical
	}
	return name
}

// logicalCreateTable rewrites SHOW CREATE TABLE text of physical table
// physical for the client: the table's own name, its constraint and index
// names, and the tables its foreign keys reference. It reads the text as
// MariaDB writes it (names in backquotes, strings in single quotes) and
// changes only names after CREATE TABLE, CONSTRAINT, KEY and REFERENCES.
func (s *snapshot) logicalCreateTable(text []byte, physical, logical string) []byte {
	out := make([]byte, 0, len(text)+16)
	sql := string(text)
	var word []byte // the last keyword before a name
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\'' || c == '"':
			t := sqllex.At(sql, i, sqllex.Backslash)
			out = append(out, text[i:t.End]...)
			i = t.End
			word = nil
		case c == '`':
			t := sqllex.At(sql, i, sqllex.Backslash)
			j := t.End
			n := sqllex.Unquote(sql, t, sqllex.Backslash)
			switch strings.ToUpper(string(word)) {
			case "TABLE":
				if n == physical {
					n = logical
				}
			case "CONSTRAINT", "KEY":
				n = s.logicalConstraint(physical, n)
			case "REFERENCES":
				n = s.logicalTableName(n)
			}
			out = appendIdent(out, n)
			i = j
			word = nil
		case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_':
			j := i
			for j < len(text) && (text[j] >= 'A' && text[j] <= 'Z' || text[j] >= 'a' && text[j] <= 'z' || text[j] == '_' || text[j] >= '0' && text[j] <= '9') {
				j++
			}
			word = text[i:j]
			out = append(out, word...)
			i = j
		default:
			if c != ' ' {
				word = nil
			}
			out = append(out, c)
			i++
		}
	}
	return out
}

// logicalRowNames rewrites the constraint, index and referenced table names
// of row r of information_schema table it, a row of physical table
// physical (idx finds a column by name).
func (s *snapshot) logicalRowNames(r Row, it infoTable, idx func(string) int, physical string) {
	for _, col := range it.nameCols {
		if i := idx(col); i >= 0 && r[i] != nil {
			r[i] = []byte(s.logicalConstraint(physical, string(r[i])))
		}
	}
	if it.refTableCol == "" {
		return
	}
	i := idx(it.refTableCol)
	if i < 0 || r[i] == nil {
		return
	}
	referenced := string(r[i])
	for _, col := range it.refNameCols {
		if j := idx(col); j >= 0 && r[j] != nil {
			r[j] = []byte(s.logicalConstraint(referenced, string(r[j])))
		}
	}
	r[i] = []byte(s.logicalTableName(referenced))
}
