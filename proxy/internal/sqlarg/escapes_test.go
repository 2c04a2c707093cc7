package sqlarg

import "testing"

func TestEscapeModes(t *testing.T) {
	tests := []struct {
		nbe, bs string // the same statement in either mode
	}{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT 'a\b'`, `SELECT 'a\\b'`},
		{`SELECT 'it''s', "say ""hi"""`, `SELECT 'it''s', "say ""hi"""`},
		{`SELECT 'a\', 'b'`, `SELECT 'a\\', 'b'`},
		{`SELECT "c:\dir\" AS x`, `SELECT "c:\\dir\\" AS x`},
		{"SELECT `a\\b`, 'x\\y' -- 'c\\d'\n", "SELECT `a\\b`, 'x\\\\y' -- 'c\\d'\n"},
		{`SELECT 'a' /* 'b\c' */, '\\'`, `SELECT 'a' /* 'b\c' */, '\\\\'`},
		{"SELECT 'line\nbreak', '\x00'", "SELECT 'line\nbreak', '\x00'"},
	}
	for _, tt := range tests {
		if got := ToBackslashEscapes(tt.nbe); got != tt.bs {
			t.Errorf("ToBackslashEscapes(%q) = %q, want %q", tt.nbe, got, tt.bs)
		}
		if got := ToNoBackslashEscapes(tt.bs); got != tt.nbe {
			t.Errorf("ToNoBackslashEscapes(%q) = %q, want %q", tt.bs, got, tt.nbe)
		}
	}
	// Escape sequences of the backslash form, as their bytes.
	for _, tt := range []struct{ bs, nbe string }{
		{`SELECT 'a\nb\tc\0d\Z\'e\"f'`, "SELECT 'a\nb\tc\x00d\x1a''e\"f'"},
		{`SELECT "\"q\""`, `SELECT """q"""`},
		{`SELECT 'x\%y\_z\q'`, `SELECT 'x\%y\_zq'`},
	} {
		if got := ToNoBackslashEscapes(tt.bs); got != tt.nbe {
			t.Errorf("ToNoBackslashEscapes(%q) = %q, want %q", tt.bs, got, tt.nbe)
		}
	}
}

func TestQuotedNames(t *testing.T) {
	tests := []struct {
		ansi, proxy string // under ANSI_QUOTES, and in the proxy's form
	}{
		{`SELECT "a" FROM t`, `SELECT "a" FROM t`},
		{`SELECT "a\b" AS "c\" FROM t WHERE x = 'p\\q'`, `SELECT "a\\b" AS "c\\" FROM t WHERE x = 'p\\q'`},
		{`SELECT 'it\'s "x\y"', "n""\m"`, `SELECT 'it\'s "x\y"', "n""\\m"`},
		{"SELECT `a\\b`, \"c\" -- \"d\\e\"\n", "SELECT `a\\b`, \"c\" -- \"d\\e\"\n"},
		{`SELECT "unterminated\`, `SELECT "unterminated\`},
	}
	for _, tt := range tests {
		if got := QuotedNamesToBackslashEscapes(tt.ansi); got != tt.proxy {
			t.Errorf("QuotedNamesToBackslashEscapes(%q) = %q, want %q", tt.ansi, got, tt.proxy)
		}
		if got := QuotedNamesFromBackslashEscapes(tt.proxy); got != tt.ansi {
			t.Errorf("QuotedNamesFromBackslashEscapes(%q) = %q, want %q", tt.proxy, got, tt.ansi)
		}
	}
}
