package sqlarg

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shardflake/shardflake/internal/sqllex"
)

// ErrArgCount means the statement has a different number of placeholders
// than arguments.
var ErrArgCount = errors.New("sqlarg: placeholder and argument counts differ")

// Mode says how string literals are escaped: sqllex's modes, which read
// them the same way.
type Mode = sqllex.Mode

// Escaping modes.
const (
	// Backslash: backslash is an escape character (MySQL's default).
	Backslash = sqllex.Backslash
	// NoBackslashEscapes: the server runs with NO_BACKSLASH_ESCAPES, so
	// only quotes are doubled.
	NoBackslashEscapes = sqllex.NoBackslashEscapes
)

// Literal is SQL text that is already a literal (a user variable's value
// as the session wrote it down): AppendLiteral writes it as it is.
type Literal string

// AppendLiteral appends v as a SQL literal. Supported: nil, bool, all
// integer types, float32, float64, string, []byte and time.Time. Strings
// that are not valid UTF-8 and all []byte values are written as hex
// literals (X'..'), so binary data survives any connection character set.
func AppendLiteral(dst []byte, v any, mode Mode) ([]byte, error) {
	switch x := v.(type) {
	case Literal:
		return append(dst, x...), nil
	case nil:
		return append(dst, "NULL"...), nil
	case bool:
		if x {
			return append(dst, '1'), nil
		}
		return append(dst, '0'), nil
	case int:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int8:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(dst, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case uint:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint8:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(dst, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case float32:
		return appendFloat(dst, float64(x), 32)
	case float64:
		return appendFloat(dst, x, 64)
	case string:
		if !utf8.ValidString(x) {
			return appendHex(dst, []byte(x)), nil
		}
		return appendQuoted(dst, x, mode), nil
	case []byte:
		if x == nil {
			return append(dst, "NULL"...), nil
		}
		return appendHex(dst, x), nil
	case time.Time:
		// A DATETIME literal, as a client's DATETIME parameter is one to
		// MariaDB: SELECT ? is a DATETIME column, with 6 fractional digits
		// when the value has microseconds.
		layout := "2006-01-02 15:04:05"
		if x.Nanosecond() >= 1000 {
			layout += ".000000"
		}
		return appendQuoted(append(dst, "TIMESTAMP"...), x.Format(layout), mode), nil
	}
	return nil, fmt.Errorf("sqlarg: cannot write %T as a SQL literal", v)
}

func appendFloat(dst []byte, f float64, bits int) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("sqlarg: %v has no SQL literal", f)
	}
	// E notation makes MySQL read the literal as a DOUBLE, not a DECIMAL.
	return strconv.AppendFloat(dst, f, 'e', -1, bits), nil
}

func appendHex(dst, b []byte) []byte {
	if len(b) == 0 {
		return append(dst, "''"...)
	}
	dst = append(dst, "X'"...)
	dst = hex.AppendEncode(dst, b)
	return append(dst, '\'')
}

// backslashEscape is the byte written after a backslash for each byte
// that backslash mode escapes, 0 for the bytes written as they are.
var backslashEscape = [256]byte{'\\': '\\', 0: '0', '\n': 'n', '\r': 'r', 0x1a: 'Z'}

// appendQuoted appends s single-quoted: quotes doubled, and in backslash
// mode \, NUL, LF, CR and ^Z written as backslash escapes. The runs of
// bytes between them are copied whole.
func appendQuoted(dst []byte, s string, mode Mode) []byte {
	dst = append(dst, '\'')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\'' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\'', '\'')
			start = i + 1
			continue
		}
		if e := backslashEscape[c]; e != 0 && mode != NoBackslashEscapes {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', e)
			start = i + 1
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '\'')
}

// Interpolate replaces each ? placeholder of sql (outside string literals,
// quoted identifiers and comments) with the literal of the matching
// argument.
func Interpolate(sql string, args []any, mode Mode) (string, error) {
	out, err := AppendInterpolated(make([]byte, 0, len(sql)+16*len(args)), sql, args, mode)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// AppendInterpolated is Interpolate appending to dst, for a caller that
// writes the statement into a buffer of its own (a packet).
func AppendInterpolated(dst []byte, sql string, args []any, mode Mode) ([]byte, error) {
	out := dst
	n, last := 0, 0
	var err error
	scan(sql, mode, func(i int) bool {
		if n >= len(args) {
			n++
			return false
		}
		out = append(out, sql[last:i]...)
		if out, err = AppendLiteral(out, args[n], mode); err != nil {
			return false
		}
		n++
		last = i + 1
		return true
	})
	if err != nil {
		return nil, err
	}
	if n != len(args) {
		return nil, fmt.Errorf("%w: %d arguments for the placeholders of %q", ErrArgCount, len(args), sql)
	}
	return append(out, sql[last:]...), nil
}

// Count returns how many ? placeholders sql holds, by the same rules as
// Interpolate.
func Count(sql string) int {
	n := 0
	scan(sql, Backslash, func(int) bool { n++; return true })
	return n
}

// FirstPlaceholder returns the index of sql's first ? placeholder, by the
// same rules as Interpolate, or -1 when it has none.
func FirstPlaceholder(sql string, mode Mode) int {
	first := -1
	scan(sql, mode, func(i int) bool { first = i; return false })
	return first
}

// Split cuts a multi-statement query at the semicolons that end its
// statements (outside string literals, quoted identifiers and comments),
// dropping empty statements. The pieces keep their text as written. The
// body of a stored routine, trigger or event (CREATE ... PROCEDURE |
// FUNCTION | TRIGGER | EVENT ... BEGIN ... END) keeps its own semicolons,
// as the server reads it: compound.go.
func Split(sql string) []string {
	var out []string
	start := 0
	var st compoundState
	add := func(end int) {
		if piece := strings.TrimSpace(sql[start:end]); piece != "" {
			out = append(out, piece)
		}
		start = end + 1
		st = compoundState{}
	}
	scanWords(sql, Backslash, func(i int, word string) bool {
		if word != "" {
			st.word(word)
		} else if st.ends() {
			add(i)
		}
		return true
	})
	add(len(sql))
	return out
}

// TrailingComment reports whether a query of several statements ends in
// a piece of only comments after its last semicolon ("SELECT 1; -- done"),
// which MariaDB answers as a statement that did nothing. Spaces alone
// after the last semicolon are no piece; an executable comment (/*! */)
// is code, not a comment.
func TrailingComment(sql string, mode Mode) bool {
	if strings.IndexByte(sql, ';') < 0 {
		return false
	}
	last := -1
	scanWords(sql, mode, func(i int, word string) bool {
		if word == "" {
			last = i
		}
		return true
	})
	if last < 0 {
		return false
	}
	tail := sql[last+1:]
	next, stop := sqllex.SkipSpace(tail, 0, mode)
	return next == len(tail) && stop.Kind == 0 && strings.TrimSpace(tail) != ""
}

// SplitFirst returns the first statement of a multi-statement query, cut
// as Split cuts it but with literals read as mode says, and the text after
// the semicolon that ends it (empty statements are skipped; first is ""
// when none is left). A query that changes sql_mode half way is cut one
// statement at a time, each in the mode the statements before it left.
func SplitFirst(sql string, mode Mode) (first, rest string) {
	for sql != "" {
		end := len(sql)
		var st compoundState
		scanWords(sql, mode, func(i int, word string) bool {
			if word != "" {
				st.word(word)
				return true
			}
			if st.ends() {
				end = i
				return false
			}
			return true
		})
		first, rest = strings.TrimSpace(sql[:end]), ""
		if end < len(sql) {
			rest = sql[end+1:]
		}
		if first != "" {
			return first, rest
		}
		sql = rest
	}
	return "", ""
}

// scan calls found with the index of each placeholder until it returns
// false.
func scan(sql string, mode Mode, found func(i int) bool) {
	scanFor(sql, mode, '?', found)
}

// scanFor calls found with the index of each byte target outside quotes
// and comments until it returns false.
func scanFor(sql string, mode Mode, target byte, found func(i int) bool) {
	for i := 0; i < len(sql); i++ {
		if j := sqllex.Skip(sql, i, mode); j > i {
			i = j - 1
			continue
		}
		if sql[i] == target && !found(i) {
			return
		}
	}
}
