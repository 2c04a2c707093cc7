package sqlarg

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/shardflake/shardflake/internal/sqllex"
)

// Normalize rewrites the integer and string literals of a SELECT, INSERT,
// REPLACE, UPDATE or DELETE statement as ? placeholders, so that statements
// of the same shape share one plan: it appends the rewritten text to dst
// and the literals' values to args, in order (int64, or uint64 above
// MaxInt64, for integers; string for strings), and returns them.
//
// Running the rewritten statement with the values must mean exactly what
// the original means, so ok is false, and the statement must be planned
// from its own text, whenever a literal's meaning could depend on it being
// a literal, or the statement cannot be read with certainty by this
// scanner:
//
//   - it is not one of the five statements, or holds several (;), a ?, or
//     a double-quoted string (an identifier under ANSI_QUOTES);
//   - a string is not valid UTF-8, has a character set introducer
//     (_utf8mb4 'x') or another string right after it ('a' 'b' is 'ab');
//   - it is unterminated (a quote or a comment).
//
// Literals that stay as they are, with the statement still normalized:
// decimals and floats (1.5, 1e3: a DECIMAL and a DOUBLE literal differ
// from a string or an integer argument), hexadecimal and bit values,
// integers with leading zeros, everything in a select list (a column
// without an alias is named by its text: SELECT a + 1 names it "a + 1",
// not "a + ?"), in an ORDER BY or GROUP BY list (ORDER BY 1 is a column
// position, ORDER BY ? a constant) and in HAVING. Comments are kept as
// they are, optimizer hints and /*! */ included.
//
// A minus sign written directly before an integer where an operand is
// expected (= -5, VALUES (-5, ...)) becomes part of the value, so that
// routing sees a negative key rather than an expression. The statement
// must be read with backslash escapes (no NO_BACKSLASH_ESCAPES or
// ANSI_QUOTES in the session's sql_mode): the caller checks.
func Normalize(sql string, dst []byte, args []any) (norm []byte, out []any, ok bool) {
	n := normalizer{sql: sql, dst: dst[:0], args: args[:0], frozen: -1, minus: -1}
	if !n.run() {
		return dst[:0], args[:0], false
	}
	return n.dst, n.args, true
}

// tokenKind is what the last significant token was, to tell a unary minus
// from a binary one.
type tokenKind int

const (
	tokStart    tokenKind = iota + 1 // nothing yet
	tokWord                          // keyword or identifier
	tokOperand                       // literal, quoted identifier, variable
	tokOpen                          // (
	tokClose                         // )
	tokComma                         // ,
	tokOperator                      // = < + - ...
)

// String returns the kind's name.
func (k tokenKind) String() string {
	switch k {
	case tokStart:
		return "start"
	case tokWord:
		return "word"
	case tokOperand:
		return "operand"
	case tokOpen:
		return "open"
	case tokClose:
		return "close"
	case tokComma:
		return "comma"
	case tokOperator:
		return "operator"
	}
	return "unknown"
}

type normalizer struct {
	sql  string
	dst  []byte
	args []any
	last int // sql is copied to dst up to here

	prev     tokenKind
	prevWord string // the last word, when prev is tokWord
	depth    int    // parentheses
	// frozen is the parenthesis depth of an ORDER BY, GROUP BY or HAVING
	// clause whose literals stay as they are; -1 outside one.
	frozen int
	// minus is the index of a '-' that would be a unary minus if an
	// integer followed it directly; -1 for none.
	minus int
}

// dmlStart reports whether sql starts (after white space and comments)
// with a statement Normalize handles.
func dmlStart(sql string) bool {
	i := skipSpace(sql, 0)
	if i < 0 {
		return false
	}
	j := i
	for j < len(sql) && isWordByte(sql[j]) {
		j++
	}
	return isOneOf(sql[i:j], "SELECT", "INSERT", "REPLACE", "UPDATE", "DELETE")
}

// isOneOf reports whether w is one of the (upper-case) words, ignoring
// case.
func isOneOf(w string, words ...string) bool {
	for _, k := range words {
		if len(w) == len(k) && strings.EqualFold(w, k) {
			return true
		}
	}
	return false
}

// skipSpace returns the index of the first byte at or after i that is not
// white space or inside a comment, len(sql) at the end, or -1 for an
// unterminated comment.
func skipSpace(sql string, i int) int {
	for i < len(sql) {
		c := sql[i]
		switch {
		case sqllex.IsSpace(c):
			i++
		case c == '#' || c == '-' || c == '/':
			t := sqllex.At(sql, i, sqllex.Backslash)
			if !t.Kind.Comment() {
				return i
			}
			if t.Unterminated {
				return -1
			}
			i = t.End
		default:
			return i
		}
	}
	return i
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (n *normalizer) run() bool {
	if !dmlStart(n.sql) {
		return false
	}
	n.prev = tokStart
	sql := n.sql
	i := 0
	for {
		i = skipSpace(sql, i)
		if i < 0 {
			return false
		}
		if i >= len(sql) {
			break
		}
		c := sql[i]
		minus := n.minus
		n.minus = -1
		switch {
		case c == '\'':
			end, ok := n.str(i)
			if !ok {
				return false
			}
			i = end
		case c == '"' || c == '?' || c == ';':
			return false
		case c == '`':
			t := sqllex.At(sql, i, sqllex.Backslash)
			if t.Unterminated {
				return false
			}
			i = t.End
			n.prev = tokOperand
		case isDigit(c) || c == '.' && i+1 < len(sql) && isDigit(sql[i+1]):
			i = n.number(i, minus)
		case c == '@':
			j := i + 1
			for j < len(sql) && (isWordByte(sql[j]) || sql[j] == '@' || sql[j] == '.') {
				j++
			}
			if j < len(sql) && (sql[j] == '\'' || sql[j] == '"' || sql[j] == '`') {
				return false // @'quoted' names
			}
			i = j
			n.prev = tokOperand
		case isWordByte(c):
			j := i
			for j < len(sql) && isWordByte(sql[j]) {
				j++
			}
			n.word(sql[i:j])
			i = j
		case c == '(':
			n.depth++
			n.prev = tokOpen
			i++
		case c == ')':
			n.depth--
			if n.frozen > n.depth {
				n.frozen = -1
			}
			n.prev = tokClose
			i++
		case c == ',':
			n.prev = tokComma
			i++
		default:
			if c == '-' && n.unaryPosition() {
				n.minus = i
			}
			n.prev = tokOperator
			i++
		}
	}
	n.dst = append(n.dst, sql[n.last:]...)
	return true
}

// unaryPosition reports whether an operand is expected next: a minus
// there is a sign.
func (n *normalizer) unaryPosition() bool {
	switch n.prev {
	case tokStart, tokOpen, tokComma, tokOperator:
		return true
	case tokWord:
		return isOneOf(n.prevWord, "SELECT", "WHERE", "AND", "OR", "XOR", "NOT", "BETWEEN", "IN", "LIKE", "IS",
			"VALUES", "VALUE", "SET", "ON", "WHEN", "THEN", "ELSE", "LIMIT", "OFFSET", "DIV", "MOD",
			"REGEXP", "RLIKE", "INTERVAL", "RETURN", "DISTINCT", "ALL", "ANY", "SOME")
	}
	return false
}

// word handles a keyword or identifier: it follows the ORDER BY, GROUP
// BY and HAVING clauses whose literals stay literals.
func (n *normalizer) word(w string) {
	switch {
	case isOneOf(w, "SELECT", "HAVING") || isOneOf(w, "BY") && n.prev == tokWord && isOneOf(n.prevWord, "ORDER", "GROUP"):
		if n.frozen < 0 {
			n.frozen = n.depth
		}
	case n.frozen == n.depth && isOneOf(w, "FROM", "WHERE", "LIMIT", "WINDOW", "FOR", "LOCK", "UNION", "EXCEPT", "INTERSECT", "INTO", "PROCEDURE", "ON"):
		n.frozen = -1
	}
	n.prev = tokWord
	n.prevWord = w
}

// number handles a token that starts with a digit (or a dot and a digit):
// an integer becomes a placeholder, with the sign of a unary minus written
// directly before it (minus, or -1); anything else stays as it is.
func (n *normalizer) number(i, minus int) int {
	sql := n.sql
	j := numberEnd(sql, i)
	n.prev = tokOperand
	tok := sql[i:j]
	if n.frozen >= 0 || (len(tok) > 1 && tok[0] == '0') || i > 0 && sql[i-1] == '.' {
		return j
	}
	for k := 0; k < len(tok); k++ {
		if !isDigit(tok[k]) {
			return j // a decimal, float, hex value or an identifier like 1st
		}
	}
	v, err := strconv.ParseUint(tok, 10, 64)
	if err != nil {
		return j
	}
	start := i
	var val any
	switch {
	case minus >= 0 && minus == i-1:
		if v > 1<<63 {
			return j
		}
		start = minus
		val = int64(-v) // -(1<<63) wraps to MinInt64, which is right
	case v > math.MaxInt64:
		val = v
	default:
		val = int64(v)
	}
	n.dst = append(n.dst, sql[n.last:start]...)
	n.dst = append(n.dst, '?')
	n.args = append(n.args, val)
	n.last = j
	return j
}

// numberEnd returns the end of the token starting at i with a digit or a
// dot: digits, letters (1e5, 0x1f, an identifier like 1st), dots, and the
// sign of an exponent (1e-5).
func numberEnd(sql string, i int) int {
	j := i
	for j < len(sql) {
		c := sql[j]
		switch {
		case isWordByte(c) || c == '.':
			j++
		case (c == '+' || c == '-') && (sql[j-1] == 'e' || sql[j-1] == 'E') && j+1 < len(sql) && isDigit(sql[j+1]) && isDigit(sql[i]):
			j++
		default:
			return j
		}
	}
	return j
}

// str handles a single-quoted string starting at i: it becomes a
// placeholder with its value unescaped, or stays as it is in a frozen
// clause. ok is false when the statement cannot be normalized.
func (n *normalizer) str(i int) (end int, ok bool) {
	sql := n.sql
	if n.prev == tokWord && strings.HasPrefix(n.prevWord, "_") {
		return 0, false // a character set introducer
	}
	if i > 0 && isWordByte(sql[i-1]) {
		return 0, false // N'x', X'ff', B'01', _utf8'x'
	}
	t := sqllex.At(sql, i, sqllex.Backslash)
	if t.Unterminated {
		return 0, false
	}
	j := t.End
	// 'a' 'b' is one string, 'ab'.
	if k := skipSpace(sql, j); k < 0 || k < len(sql) && (sql[k] == '\'' || sql[k] == '"') {
		return 0, false
	}
	n.prev = tokOperand
	if n.frozen >= 0 {
		return j, true
	}
	val := sqllex.Unquote(sql, t, sqllex.Backslash)
	if !utf8.ValidString(val) {
		return 0, false
	}
	n.dst = append(n.dst, sql[n.last:i]...)
	n.dst = append(n.dst, '?')
	n.args = append(n.args, val)
	n.last = j
	return j, true
}
