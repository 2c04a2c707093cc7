package sqllex

import "strings"

// Mode says how a string literal is read.
type Mode int

// Reading modes.
const (
	// Backslash: a backslash escapes the next byte (MySQL's default).
	Backslash Mode = iota + 1
	// NoBackslashEscapes: sql_mode NO_BACKSLASH_ESCAPES; only a doubled
	// quote escapes a quote.
	NoBackslashEscapes
)

// String returns the mode's name.
func (m Mode) String() string {
	switch m {
	case Backslash:
		return "backslash"
	case NoBackslashEscapes:
		return "no_backslash_escapes"
	}
	return "unknown"
}

// Kind is what a token is.
type Kind int

// Token kinds.
const (
	// Space is a run of white space (space, tab, newline, carriage
	// return, form feed, vertical tab).
	Space Kind = iota + 1
	// Word is a run of identifier bytes: a keyword, an unquoted name or
	// a number's digits.
	Word
	// String is a '...' or "..." literal, quotes included.
	String
	// QuotedName is a `...` name, backquotes included.
	QuotedName
	// LineComment is a # or -- comment, without the newline that ends it.
	LineComment
	// BlockComment is a /* ... */ comment.
	BlockComment
	// Executable is a /*! ... */ or /*M! ... */ comment, whose text the
	// server runs.
	Executable
	// Hint is a /*+ ... */ optimizer hint comment.
	Hint
	// Punct is any other single byte.
	Punct
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case Space:
		return "space"
	case Word:
		return "word"
	case String:
		return "string"
	case QuotedName:
		return "quoted name"
	case LineComment:
		return "line comment"
	case BlockComment:
		return "block comment"
	case Executable:
		return "executable comment"
	case Hint:
		return "hint"
	case Punct:
		return "punctuation"
	}
	return "unknown"
}

// Comment reports whether tokens of kind k are comments of any form.
func (k Kind) Comment() bool {
	return k == LineComment || k == BlockComment || k == Executable || k == Hint
}

// Quoted reports whether tokens of kind k are strings or quoted names.
func (k Kind) Quoted() bool { return k == String || k == QuotedName }

// Token is one token of a statement's text: sql[Start:End].
type Token struct {
	Kind       Kind
	Start, End int
	// Unterminated: a quote or /* comment that the text ends inside
	// (End is then the text's length).
	Unterminated bool
}

// Text returns the token's text in sql.
func (t Token) Text(sql string) string { return sql[t.Start:t.End] }

// Body returns what is between the delimiters of a string, quoted name or
// /* */ comment of any kind (the /*!, /*M!, /*+ markers excluded, a
// version number included), or a line comment's text after # or --; the
// text itself for other tokens. An unterminated token's body runs to the
// end of the text.
func (t Token) Body(sql string) string {
	s, e := t.Start, t.End
	switch t.Kind {
	case String, QuotedName:
		s++
		if !t.Unterminated {
			e--
		}
	case LineComment:
		if sql[s] == '#' {
			s++
		} else {
			s += 2
		}
	case BlockComment, Executable, Hint:
		s += 2
		switch {
		case t.Kind == Hint || t.Kind == Executable && sql[s] == '!':
			s++
		case t.Kind == Executable:
			s += 2 // M!
		}
		if !t.Unterminated {
			e -= 2
		}
	}
	return sql[min(s, e):e]
}

// IsSpace reports whether c is white space to MariaDB.
func IsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// IsWordByte reports whether c may be part of an unquoted name.
func IsWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

// LineCommentAt reports whether a # or -- comment starts at i. After --
// MariaDB wants a white space or control byte, or the end of the text.
func LineCommentAt(sql string, i int) bool {
	if sql[i] == '#' {
		return true
	}
	if i+1 >= len(sql) || sql[i] != '-' || sql[i+1] != '-' {
		return false
	}
	return i+2 == len(sql) || sql[i+2] <= ' ' || sql[i+2] == 0x7f
}

// At returns the token that starts at i (i < len(sql)).
func At(sql string, i int, mode Mode) Token {
	c := sql[i]
	switch {
	case c == '\'' || c == '"' || c == '`':
		end, ok := quoteEnd(sql, i, mode)
		k := String
		if c == '`' {
			k = QuotedName
		}
		return Token{Kind: k, Start: i, End: end, Unterminated: !ok}
	case (c == '#' || c == '-') && LineCommentAt(sql, i):
		end := len(sql)
		if j := strings.IndexByte(sql[i:], '\n'); j >= 0 {
			end = i + j
		}
		return Token{Kind: LineComment, Start: i, End: end}
	case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
		k := BlockComment
		if rest := sql[i+2:]; strings.HasPrefix(rest, "!") || strings.HasPrefix(rest, "M!") {
			k = Executable
		} else if strings.HasPrefix(rest, "+") {
			k = Hint
		}
		j := strings.Index(sql[i+2:], "*/")
		if j < 0 {
			return Token{Kind: k, Start: i, End: len(sql), Unterminated: true}
		}
		return Token{Kind: k, Start: i, End: i + 2 + j + 2}
	case IsSpace(c):
		j := i + 1
		for j < len(sql) && IsSpace(sql[j]) {
			j++
		}
		return Token{Kind: Space, Start: i, End: j}
	case IsWordByte(c):
		j := i + 1
		for j < len(sql) && IsWordByte(sql[j]) {
			j++
		}
		return Token{Kind: Word, Start: i, End: j}
	}
	return Token{Kind: Punct, Start: i, End: i + 1}
}

// quoteEnd returns the index just past the quote that closes the string
// or quoted name starting at i, and false (with len(sql)) when none does.
// It looks for the next quote and the next backslash with IndexByte, so
// the runs of plain bytes between them cost no loop of its own.
func quoteEnd(sql string, i int, mode Mode) (int, bool) {
	q := sql[i]
	escapes := q != '`' && mode != NoBackslashEscapes
	next := -1 // the first q at or after j, once looked for
	for j := i + 1; j < len(sql); {
		if next < j {
			k := strings.IndexByte(sql[j:], q)
			if k < 0 {
				return len(sql), false
			}
			next = j + k
		}
		if escapes {
			if b := strings.IndexByte(sql[j:next], '\\'); b >= 0 {
				j += b + 2 // the backslash and the byte it escapes
				continue
			}
		}
		if next+1 < len(sql) && sql[next+1] == q {
			j = next + 2 // a doubled quote
			continue
		}
		return next + 1, true
	}
	return len(sql), false
}

// Skip returns the index just past the string, quoted name or comment
// that starts at i, or i when none does (code starts there). For a scanner
// that looks at code byte by byte:
//
//	for i := 0; i < len(sql); i++ {
//		if j := sqllex.Skip(sql, i, mode); j > i {
//			i = j - 1
//			continue
//		}
//		... sql[i] is code
//	}
func Skip(sql string, i int, mode Mode) int {
	switch c := sql[i]; c {
	case '\'', '"', '`', '#', '-', '/':
		if t := At(sql, i, mode); t.Kind != Punct {
			return t.End
		}
	}
	return i
}

// SkipSpace returns the index of the first byte at or after i that is
// neither white space nor inside a comment, and the first comment that
// stopped it: an Executable comment (whose text is code) or an
// unterminated one (stop.Kind is 0 when none did; the index is then the
// start of code or len(sql)).
func SkipSpace(sql string, i int, mode Mode) (next int, stop Token) {
	for i < len(sql) {
		switch c := sql[i]; {
		case IsSpace(c):
			i++
		case c == '#' || c == '-' || c == '/':
			t := At(sql, i, mode)
			if !t.Kind.Comment() {
				return i, Token{}
			}
			if t.Kind == Executable || t.Unterminated {
				return i, t
			}
			i = t.End
		default:
			return i, Token{}
		}
	}
	return i, Token{}
}

// Scanner reads a statement's text token by token.
type Scanner struct {
	sql  string
	pos  int
	mode Mode
}

// NewScanner returns a scanner at the start of sql.
func NewScanner(sql string, mode Mode) *Scanner {
	return &Scanner{sql: sql, mode: mode}
}

// Next returns the next token; ok is false at the end of the text.
func (s *Scanner) Next() (t Token, ok bool) {
	if s.pos >= len(s.sql) {
		return Token{}, false
	}
	t = At(s.sql, s.pos, s.mode)
	s.pos = t.End
	return t, true
}

// Pos returns the index of the next token.
func (s *Scanner) Pos() int { return s.pos }

// CodeTokens returns the tokens of sql that are neither space nor comments
// of any form (executable comments included: open them first with
// ExecutableText to read their code).
func CodeTokens(sql string, mode Mode) []Token {
	var code []Token
	for s := NewScanner(sql, mode); ; {
		t, ok := s.Next()
		if !ok {
			return code
		}
		if t.Kind != Space && !t.Kind.Comment() {
			code = append(code, t)
		}
	}
}

// Unquote returns the name a `quoted name` token stands for (a doubled
// backquote is one), or a string literal's bytes with its escapes read as
// mode says.
func Unquote(sql string, t Token, mode Mode) string {
	body := t.Body(sql)
	q := sql[t.Start]
	if strings.IndexByte(body, q) < 0 && (q == '`' || mode == NoBackslashEscapes || strings.IndexByte(body, '\\') < 0) {
		return body
	}
	var b strings.Builder
	b.Grow(len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == q && i+1 < len(body) && body[i+1] == q:
			b.WriteByte(q)
			i++
		case c == '\\' && q != '`' && mode != NoBackslashEscapes && i+1 < len(body):
			i++
			if body[i] == '%' || body[i] == '_' {
				b.WriteByte('\\') // \% and \_ stand for themselves
			}
			b.WriteByte(Unescape(body[i]))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Unescape is the byte a backslash escape \c stands for in a string
// literal (MySQL's table; any other byte stands for itself; \% and \_
// keep their backslash, which the caller writes).
func Unescape(c byte) byte {
	switch c {
	case '0':
		return 0
	case 'b':
		return '\b'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'Z':
		return 0x1a
	}
	return c
}

// ExecutableText returns sql as the server reads it for a statement that
// hides its words in executable comments (mysqldump writes triggers as
// /*!50003 CREATE*/ /*!50017 DEFINER=...*/ /*!50003 TRIGGER ...*/): each
// executable comment becomes its text without the version number, set
// off by a space on each side, whatever the version. Everything else,
// other comments included, stays as it is; sql itself comes back when it
// holds no executable comment.
func ExecutableText(sql string, mode Mode) string {
	if !HasExecutable(sql) {
		return sql
	}
	var b strings.Builder
	b.Grow(len(sql))
	last := 0
	for i := 0; i < len(sql); i++ {
		j := Skip(sql, i, mode)
		if j == i {
			continue
		}
		if t := At(sql, i, mode); t.Kind == Executable {
			b.WriteString(sql[last:i])
			b.WriteByte(' ')
			b.WriteString(strings.TrimLeft(t.Body(sql), "0123456789"))
			b.WriteByte(' ')
			last = j
		}
		i = j - 1
	}
	b.WriteString(sql[last:])
	return b.String()
}
