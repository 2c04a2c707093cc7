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
