package sqlarg

import (
	"strings"

	"github.com/shardflake/shardflake/internal/sqllex"
)

// compoundState follows one statement of a multi-statement query word by
// word, to tell whether a semicolon ends it. Only a CREATE of a stored
// routine, trigger or event has a body with semicolons of its own: BEGIN
// and CASE open a block there, END closes one (END IF, END LOOP, END
// WHILE, END REPEAT and END FOR close blocks their keyword opened, which
// are not counted; END CASE closes a CASE, as a CASE expression's END
// does).
type compoundState struct {
	words    int  // words seen in the statement
	create   bool // the statement starts with CREATE
	compound bool // ... and creates a routine, trigger or event
	depth    int  // blocks open in its body
	afterEnd bool // the last word was END, whose closing word may follow
}

// word takes the statement's next word.
func (c *compoundState) word(w string) {
	c.words++
	if c.words == 1 {
		c.create = strings.EqualFold(w, "CREATE")
		return
	}
	if !c.compound {
		if c.create && c.words <= 8 && isAny(w, "PROCEDURE", "FUNCTION", "TRIGGER", "EVENT") {
			c.compound = true
		}
		return
	}
	if c.afterEnd {
		c.afterEnd = false
		if isAny(w, "IF", "LOOP", "WHILE", "REPEAT", "FOR") {
			return
		}
		c.depth--
		if strings.EqualFold(w, "CASE") {
			return
		}
	}
	switch {
	case isAny(w, "BEGIN", "CASE"):
		c.depth++
	case strings.EqualFold(w, "END"):
		c.afterEnd = true
	}
}

// ends reports whether a semicolon here ends the statement.
func (c *compoundState) ends() bool {
	if c.afterEnd {
		c.afterEnd = false
		c.depth--
	}
	return c.depth <= 0
}

func isAny(w string, words ...string) bool {
	for _, k := range words {
		if strings.EqualFold(w, k) {
			return true
		}
	}
	return false
}

// scanWords calls found with the index and text of each word (a run of
// letters, digits, _ and $ that starts with a letter or _) and with the
// index and "" of each semicolon, outside quotes and comments, until it
// returns false.
func scanWords(sql string, mode Mode, found func(i int, word string) bool) {
	for i := 0; i < len(sql); i++ {
		if j := sqllex.Skip(sql, i, mode); j > i {
			i = j - 1
			continue
		}
		switch c := sql[i]; {
		case c == ';':
			if !found(i, "") {
				return
			}
		case isWordStart(c):
			j := i + 1
			for j < len(sql) && (isWordStart(sql[j]) || sql[j] >= '0' && sql[j] <= '9' || sql[j] == '$') {
				j++
			}
			if !found(i, sql[i:j]) {
				return
			}
			i = j - 1
		case c >= '0' && c <= '9':
			// A number (1e5, 0x1f) is not a word.
			for i+1 < len(sql) && (isWordStart(sql[i+1]) || sql[i+1] >= '0' && sql[i+1] <= '9' || sql[i+1] == '.') {
				i++
			}
		}
	}
}

func isWordStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}
