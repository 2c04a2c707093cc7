package proxy

import (
	"strings"
	"testing"
)

// oldLogicalCreateTable is logicalCreateTable as it read quotes before
// internal/sqllex, kept as the reference FuzzLogicalCreateTableUnchanged
// compares with.
func (s *snapshot) oldLogicalCreateTable(text []byte, physical, logical string) []byte {
	out := make([]byte, 0, len(text)+16)
	var word []byte // the last keyword before a name
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(text) {
				if text[j] == '\\' {
					j += 2
					continue
				}
				if text[j] == c {
					if j+1 < len(text) && text[j+1] == c {
						j += 2
						continue
					}
					break
				}
				j++
			}
			j = min(j+1, len(text))
			out = append(out, text[i:j]...)
			i = j
			word = nil
		case c == '`':
			var name strings.Builder
			j := i + 1
			for j < len(text) {
				if text[j] == '`' {
					if j+1 < len(text) && text[j+1] == '`' {
						name.WriteByte('`')
						j += 2
						continue
					}
					break
				}
				name.WriteByte(text[j])
				j++
			}
			n := name.String()
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
			i = min(j+1, len(text))
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

// FuzzLogicalCreateTableUnchanged: SHOW CREATE TABLE text comes back
// with the same names rewritten as before the rewrite read its strings
// and quoted names through sqllex.
func FuzzLogicalCreateTableUnchanged(f *testing.F) {
	f.Add("CREATE TABLE `t_item_1` (\n  `a` int COMMENT 'KEY `fk_t_item_1`, it''s',\n  KEY `fk_o_t_item_1` (`a`),\n  CONSTRAINT `fk_o_t_item_1` FOREIGN KEY (`a`) REFERENCES `t_order_1` (`id`)\n) DEFAULT '\\'`t_order_1`'")
	f.Add("CREATE TABLE `t_item_1` (`a``b` int, \"x\\\" y\" KEY `t_item_1_ibfk_1")
	srv := &snapshot{physicalTable: map[string]string{"t_item_1": "t_item", "t_order_1": "t_order"}}
	f.Fuzz(func(t *testing.T, text string) {
		got := string(srv.logicalCreateTable([]byte(text), "t_item_1", "t_item"))
		want := string(srv.oldLogicalCreateTable([]byte(text), "t_item_1", "t_item"))
		if got != want {
			t.Fatalf("logicalCreateTable(%q):\n got %q\n was %q", text, got, want)
		}
	})
}
