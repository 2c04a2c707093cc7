package sqllex

import (
	"strings"
	"testing"
)

// tokens renders the tokens of sql as kind:text, one per token.
func tokens(sql string, mode Mode) []string {
	var out []string
	s := NewScanner(sql, mode)
	for {
		t, ok := s.Next()
		if !ok {
			return out
		}
		if t.Kind == Space {
			continue
		}
		item := t.Kind.String() + ":" + t.Text(sql)
		if t.Unterminated {
			item += "(unterminated)"
		}
		out = append(out, item)
	}
}

// TestTokens follows MariaDB's lexer (sql_lex.cc) on the quote and
// comment rules the package documents.
func TestTokens(t *testing.T) {
	tests := []struct {
		name string
		give string
		mode Mode
		want []string
	}{
		{"words and punctuation", "SELECT a1,$b FROM t", Backslash,
			[]string{"word:SELECT", "word:a1", "punctuation:,", "word:$b", "word:FROM", "word:t"}},
		{"multibyte name", "SELECT été", Backslash, []string{"word:SELECT", "word:été"}},
		{"single quotes", `'it''s' 'a\'b'`, Backslash, []string{`string:'it''s'`, `string:'a\'b'`}},
		{"double quotes", `"a""b" "c\"d"`, Backslash, []string{`string:"a""b"`, `string:"c\"d"`}},
		{"backslash before the quote ends the string without escapes", `'a\' b`, NoBackslashEscapes,
			[]string{`string:'a\'`, "word:b"}},
		{"backslash escapes with", `'a\' b`, Backslash, []string{`string:'a\' b(unterminated)`}},
		{"backquote: no backslash escape", "`a\\` `b``c`", Backslash, []string{"quoted name:`a\\`", "quoted name:`b``c`"}},
		{"quote inside another quote", `'a"b' "c'd" ` + "`e'f`", Backslash,
			[]string{`string:'a"b'`, `string:"c'd"`, "quoted name:`e'f`"}},
		{"hash comment", "a # x 'y\nb", Backslash, []string{"word:a", "line comment:# x 'y", "word:b"}},
		{"dash comment needs a space", "a -- x\nb --1 --\tc\n--", Backslash,
			[]string{"word:a", "line comment:-- x", "word:b", "punctuation:-", "punctuation:-", "word:1", "line comment:--\tc", "line comment:--"}},
		{"dash comment after a control byte", "a --\x01x", Backslash, []string{"word:a", "line comment:--\x01x"}},
		{"block comment", "a /* x ' */ b", Backslash, []string{"word:a", "block comment:/* x ' */", "word:b"}},
		{"block comments do not nest", "/* /* */ a */", Backslash,
			[]string{"block comment:/* /* */", "word:a", "punctuation:*", "punctuation:/"}},
		{"executable comments", "/*!50003 a */ /*M!100000 b */ /*!c*/", Backslash,
			[]string{"executable comment:/*!50003 a */", "executable comment:/*M!100000 b */", "executable comment:/*!c*/"}},
		{"optimizer hint", "SELECT /*+ BKA(t) */ 1", Backslash, []string{"word:SELECT", "hint:/*+ BKA(t) */", "word:1"}},
		{"unterminated comment", "a /* b", Backslash, []string{"word:a", "block comment:/* b(unterminated)"}},
		{"slash star slash is open", "/*/ a", Backslash, []string{"block comment:/*/ a(unterminated)"}},
		{"unterminated name", "`a", Backslash, []string{"quoted name:`a(unterminated)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tokens(tt.give, tt.mode)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("tokens(%q):\n got %q\nwant %q", tt.give, got, tt.want)
			}
		})
	}
}

func TestBody(t *testing.T) {
	tests := []struct {
		give, want string
	}{
		{"'ab'", "ab"},
		{"'ab", "ab"},
		{"`a``b`", "a``b"},
		{"# x", " x"},
		{"-- x", " x"},
		{"/* x */", " x "},
		{"/*!50003 x */", "50003 x "},
		{"/*M!100000 x */", "100000 x "},
		{"/*+ BKA(t) */", " BKA(t) "},
		{"/* x", " x"},
		{"/**/", ""},
		{"/*!*/", ""},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			if got := At(tt.give, 0, Backslash).Body(tt.give); got != tt.want {
				t.Errorf("Body(%q) = %q, want %q", tt.give, got, tt.want)
			}
		})
	}
}

func TestUnquote(t *testing.T) {
	tests := []struct {
		give string
		mode Mode
		want string
	}{
		{"`a``b`", Backslash, "a`b"},
		{"`a\\b`", Backslash, `a\b`},
		{`'it''s'`, Backslash, "it's"},
		{`'a\nb\\c\'d'`, Backslash, "a\nb\\c'd"},
		{`'50\%'`, Backslash, `50\%`},
		{`'a\nb'`, NoBackslashEscapes, `a\nb`},
		{`"say ""hi"""`, NoBackslashEscapes, `say "hi"`},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			tok := At(tt.give, 0, tt.mode)
			if got := Unquote(tt.give, tok, tt.mode); got != tt.want {
				t.Errorf("Unquote(%q) = %q, want %q", tt.give, got, tt.want)
			}
		})
	}
}

func TestSkipSpace(t *testing.T) {
	tests := []struct {
		give     string
		wantNext int
		wantStop Kind
	}{
		{"  SHOW", 2, 0},
		{"/* a */ # b\n-- c\n SHOW", 18, 0},
		{" /*! SHOW */", 1, Executable},
		{" /* open", 1, BlockComment},
		{" /*+ hint */ x", 13, 0},
		{"--1", 0, 0},
		{" \t\n", 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			next, stop := SkipSpace(tt.give, 0, Backslash)
			if next != tt.wantNext || stop.Kind != tt.wantStop {
				t.Errorf("SkipSpace(%q) = %d, %v; want %d, %v", tt.give, next, stop.Kind, tt.wantNext, tt.wantStop)
			}
		})
	}
}

// FuzzTokens: the tokens of any text cover it exactly, in order, and each
// token kind is what its first bytes say.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{"SELECT 'a''b' `c` /* d */ -- e\n#f\n/*!1 g*/ /*+ h */", `'\'`, "/*", "--", "`"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, sql string, noBackslash bool) {
		mode := Backslash
		if noBackslash {
			mode = NoBackslashEscapes
		}
		s := NewScanner(sql, mode)
		pos := 0
		for {
			tok, ok := s.Next()
			if !ok {
				break
			}
			if tok.Start != pos || tok.End <= tok.Start || tok.End > len(sql) {
				t.Fatalf("%q: token %+v after %d", sql, tok, pos)
			}
			if tok.Unterminated && tok.End != len(sql) {
				t.Fatalf("%q: unterminated token %+v ends early", sql, tok)
			}
			if j := Skip(sql, tok.Start, mode); (j > tok.Start) != (tok.Kind.Quoted() || tok.Kind.Comment()) || j > tok.Start && j != tok.End {
				t.Fatalf("%q: Skip at %d = %d for %+v", sql, tok.Start, j, tok)
			}
			_ = tok.Body(sql)
			pos = tok.End
		}
		if pos != len(sql) {
			t.Fatalf("%q: tokens end at %d", sql, pos)
		}
	})
}

func TestExecutableText(t *testing.T) {
	tests := []struct {
		give, want string
	}{
		{"CREATE TRIGGER x", "CREATE TRIGGER x"},
		{"/*!50003 CREATE*/ /*!50017 DEFINER=`u`@`%`*/ /*!50003 TRIGGER t BEFORE INSERT ON a FOR EACH ROW SET @x = 1 */",
			"  CREATE    DEFINER=`u`@`%`    TRIGGER t BEFORE INSERT ON a FOR EACH ROW SET @x = 1  "},
		{"/*M!100108 CREATE */ FUNCTION f", "  CREATE   FUNCTION f"},
		{"/* c */ /*!CREATE*/", "/* c */  CREATE "},
		{"SELECT '/*!50003 x*/' /*!1*/", "SELECT '/*!50003 x*/'   "},
		{"/*!50003 open", "  open "},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			if got := ExecutableText(tt.give, Backslash); got != tt.want {
				t.Errorf("ExecutableText(%q) = %q, want %q", tt.give, got, tt.want)
			}
		})
	}
}

// TestQuoteEndByteByByte compares quoteEnd on every string of up to seven
// bytes of quotes, backslashes and a letter with the byte-by-byte reading
// of the rules: a backslash (outside backquotes, in backslash mode) takes
// the next byte with it, a doubled quote stands for itself, and the first
// other quote ends the literal.
func TestQuoteEndByteByByte(t *testing.T) {
	want := func(sql string, mode Mode) (int, bool) {
		q := sql[0]
		for j := 1; j < len(sql); j++ {
			switch sql[j] {
			case '\\':
				if q != '`' && mode != NoBackslashEscapes {
					j++
				}
			case q:
				if j+1 < len(sql) && sql[j+1] == q {
					j++
					continue
				}
				return j + 1, true
			}
		}
		return len(sql), false
	}
	alphabet := []byte{'\'', '"', '`', '\\', 'a'}
	var walk func(prefix []byte)
	walk = func(prefix []byte) {
		for _, mode := range []Mode{Backslash, NoBackslashEscapes} {
			sql := string(prefix)
			end, ok := quoteEnd(sql, 0, mode)
			wend, wok := want(sql, mode)
			if end != wend || ok != wok {
				t.Fatalf("quoteEnd(%q, %v) = %d, %v; want %d, %v", sql, mode, end, ok, wend, wok)
			}
		}
		if len(prefix) == 7 {
			return
		}
		for _, c := range alphabet {
			walk(append(prefix, c))
		}
	}
	for _, q := range []byte{'\'', '"', '`'} {
		walk([]byte{q})
	}
}

func TestParserText(t *testing.T) {
	tests := []struct {
		give, want string
	}{
		{"SELECT 1", "SELECT 1"},
		{"SELECT a /*!80013 , b */ FROM t", "SELECT a                 FROM t"},
		{"SELECT a /*!50699 , b */ FROM t", "SELECT a /*!      , b */ FROM t"},
		{"SELECT a /*M!80013 , b */ FROM t", "SELECT a /*!       , b */ FROM t"},
		{"SELECT a /*!101119 , b */ FROM t", "SELECT a /*!       , b */ FROM t"},
		{"SELECT a /*!101120 , b */ FROM t", "SELECT a                  FROM t"},
		{"SELECT a /*M!101120 , b */ FROM t", "SELECT a                   FROM t"},
		{"SELECT a /*!, b */, '/*!80013 x */' FROM t", "SELECT a /*!, b */, '/*!80013 x */' FROM t"},
		{"SELECT a /*!1234 , b */", "SELECT a /*!1234 , b */"},
		{"SELECT a /*!80013 , b", "SELECT a /*!80013 , b"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			if got := ParserText(tt.give, Backslash, 101119); got != tt.want {
				t.Errorf("ParserText(%q) = %q, want %q", tt.give, got, tt.want)
			}
		})
	}
}
