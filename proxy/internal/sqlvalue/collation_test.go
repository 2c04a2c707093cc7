package sqlvalue

import (
	"bytes"
	"database/sql"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestWeightsMatchMariaDB checks every character of every embedded table
// against WEIGHT_STRING on a live server.
func TestWeightsMatchMariaDB(t *testing.T) {
	db := mariadb(t)
	tests := []struct {
		give      func() *weightTable
		collation string
		charset   string
		size      int
	}{
		{utf8General, "utf8mb4_general_ci", "utf8mb4", 0x10000},
		{utf8Unicode, "utf8mb4_unicode_ci", "utf8mb4", 0x10000},
		{utf8General, "utf8mb3_general_ci", "utf8mb3", 0x10000},
		{latin1Swedish, "latin1_swedish_ci", "latin1", 256},
		{latin1German1, "latin1_german1_ci", "latin1", 256},
		{latin1Danish, "latin1_danish_ci", "latin1", 256},
		{latin1General, "latin1_general_ci", "latin1", 256},
		{latin1GenCS, "latin1_general_cs", "latin1", 256},
		{latin1Spanish, "latin1_spanish_ci", "latin1", 256},
		{asciiGeneral, "ascii_general_ci", "ascii", 128},
	}
	for _, tt := range tests {
		t.Run(tt.collation, func(t *testing.T) {
			tab := tt.give()
			if tab.size() != tt.size {
				t.Fatalf("table has %d characters, want %d", tab.size(), tt.size)
			}
			char := fmt.Sprintf("CONVERT(CHAR(seq USING utf32) USING %s)", tt.charset)
			if tt.size <= 256 {
				char = fmt.Sprintf("CONVERT(UNHEX(LPAD(HEX(seq), 2, '0')) USING %s)", tt.charset)
			}
			// utf8mb3 has no surrogates either; both skip them.
			q := fmt.Sprintf("SELECT seq, HEX(WEIGHT_STRING(%s COLLATE %s)) FROM seq_0_to_%d WHERE seq NOT BETWEEN 55296 AND 57343", char, tt.collation, tt.size-1)
			rows, err := db.Query(q)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			width := 2
			if tt.size <= 256 {
				width = 1
			}
			bad := 0
			for rows.Next() {
				var c int
				var w sql.NullString
				if err := rows.Scan(&c, &w); err != nil {
					t.Fatal(err)
				}
				var got []byte
				for _, x := range tab.of(c) {
					if width == 2 {
						got = append(got, byte(x>>8))
					}
					got = append(got, byte(x))
				}
				want, _ := hex.DecodeString(w.String)
				if !bytes.Equal(got, want) {
					if bad++; bad <= 5 {
						t.Errorf("character %#x: weight %X, MariaDB says %X", c, got, want)
					}
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if bad > 0 {
				t.Errorf("%d characters weigh differently", bad)
			}
		})
	}
}

// alphabets hold characters that collations disagree about: case,
// accents, expansions (ß, Æ), ignorables, spaces and characters below
// space (PAD SPACE), characters beyond the BMP.
var (
	utf8Alphabet = []string{"a", "A", "á", "Á", "ä", "å", "Å", "æ", "Æ", "b", "e", "é", "É", "ê",
		"i", "ı", "İ", "o", "ö", "Ö", "ø", "s", "S", "ß", "ss", "u", "ü", "Ü", "y", "Y", "z", "Z",
		" ", " ", " ", "\t", "\n", "0", "9", "-", "_", "\u00a0", "\u0301", "\u200b", "😀", "😁",
		"中", "文", "Ω", "ω", "Я", "я", "\x00"}
	latin1Alphabet = []string{"a", "A", "á", "Á", "ä", "Ä", "å", "Å", "æ", "Æ", "b", "e", "é", "É",
		"o", "ö", "Ö", "ø", "Ø", "s", "ß", "u", "ü", "Ü", "y", "Y", "ÿ", "z", "Z", "ð", "Ð", "þ",
		" ", " ", " ", "\t", "0", "9", "-", "_", "\u00a0", "€", "\x00"}
	asciiAlphabet = []string{"a", "A", "b", "B", "s", "z", "Z", " ", " ", " ", "\t", "0", "9", "-", "_", "\x00"}
)

// randomString draws up to 6 characters, often sharing a prefix with
// other draws so that comparisons reach the interesting positions.
func randomString(r *rand.Rand, alphabet []string) string {
	var b strings.Builder
	if r.IntN(2) == 0 {
		b.WriteString("ab")
	}
	for range r.IntN(6) {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// latin1 encodes s (whose characters are all in latin1Alphabet) as
// MariaDB's latin1 (cp1252).
func latin1(s string) []byte {
	var out []byte
	for _, r := range s {
		switch {
		case r == '€':
			out = append(out, 0x80)
		case r < 256:
			out = append(out, byte(r))
		default:
			panic(fmt.Sprintf("%q is not latin1", r))
		}
	}
	return out
}

// TestCollationCompareMatchesMariaDB compares random strings with every
// collation and checks the order and the keys against STRCMP on a live
// server.
func TestCollationCompareMatchesMariaDB(t *testing.T) {
	db := mariadb(t)
	r := rand.New(rand.NewPCG(5, 11))
	const pairs = 400
	const batch = 100
	for _, c := range collations {
		t.Run(c.Name, func(t *testing.T) {
			alphabet, encode := utf8Alphabet, func(s string) []byte { return []byte(s) }
			introducer := "utf8mb4"
			switch c.Charset {
			case "latin1":
				alphabet, encode, introducer = latin1Alphabet, latin1, "latin1"
			case "ascii", "binary":
				alphabet, introducer = asciiAlphabet, c.Charset
			case "utf8mb3":
				alphabet, introducer = utf8Alphabet[:len(utf8Alphabet)-11], "utf8mb3"
				alphabet = append(alphabet, "中", "Я")
			}
			var as, bs [][]byte
			for range pairs {
				a, b := encode(randomString(r, alphabet)), encode(randomString(r, alphabet))
				if r.IntN(4) == 0 {
					// Differ only in trailing spaces, tabs or case.
					b = append(bytes.Clone(a), []string{" ", "  ", "\t", " a", "A"}[r.IntN(5)]...)
				}
				as, bs = append(as, a), append(bs, b)
			}
			for start := 0; start < pairs; start += batch {
				var cols []string
				for i := start; i < start+batch; i++ {
					cols = append(cols, fmt.Sprintf("STRCMP(_%s X'%X' COLLATE `%s`, _%s X'%X' COLLATE `%s`)",
						introducer, as[i], c.Name, introducer, bs[i], c.Name))
				}
				want := make([]int, batch)
				ptrs := make([]any, batch)
				for i := range want {
					ptrs[i] = &want[i]
				}
				if err := db.QueryRow("SELECT " + strings.Join(cols, ", ")).Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				for i := range batch {
					a, b := as[start+i], bs[start+i]
					if got := c.Compare(a, b); got != want[i] {
						t.Errorf("Compare(%q, %q) = %d, MariaDB says %d", a, b, got, want[i])
					}
					if got := -c.Compare(b, a); got != want[i] {
						t.Errorf("Compare(%q, %q) = %d, MariaDB says %d", b, a, -got, -want[i])
					}
					ka, kb := c.AppendKey(nil, a), c.AppendKey(nil, b)
					if bytes.Equal(ka, kb) != (want[i] == 0) {
						t.Errorf("keys of %q and %q: equal %v, MariaDB STRCMP %d", a, b, bytes.Equal(ka, kb), want[i])
					}
					// The same strings converted to the other family
					// compare alike through ForText.
					if tc, ta, tb, ok := converted(c, a, b); ok {
						if got := tc.Compare(ta, tb); got != want[i] {
							t.Errorf("%s.ForText: Compare(%q, %q) = %d, MariaDB says %d", c, ta, tb, got, want[i])
						}
						if bytes.Equal(tc.AppendKey(nil, ta), tc.AppendKey(nil, tb)) != (want[i] == 0) {
							t.Errorf("%s.ForText: keys of %q and %q disagree with STRCMP %d", c, ta, tb, want[i])
						}
					}
				}
			}
		})
	}
}

// converted returns c for text in the other charset family (latin1
// collations for UTF-8 text, UTF-8 collations for latin1 text) and a and
// b converted to it, when they can be.
func converted(c *Collation, a, b []byte) (*Collation, []byte, []byte, bool) {
	switch c.Charset {
	case "latin1":
		return c.ForText("utf8mb4"), latin1ToUTF8(a), latin1ToUTF8(b), true
	case "utf8mb4":
		la, oka := utf8ToLatin1(a)
		lb, okb := utf8ToLatin1(b)
		return c.ForText("latin1"), la, lb, oka && okb
	}
	return nil, nil, nil, false
}

func utf8ToLatin1(s []byte) ([]byte, bool) {
	var out []byte
	for _, r := range string(s) {
		b := runeToLatin1(r)
		if b == '?' && r != '?' {
			return nil, false
		}
		out = append(out, b)
	}
	return out, true
}

// TestLatin1MatchesMariaDB checks the cp1252 mapping of every latin1 byte
// against the server's conversion to utf8mb4.
func TestLatin1MatchesMariaDB(t *testing.T) {
	db := mariadb(t)
	rows, err := db.Query("SELECT seq, HEX(CONVERT(CONVERT(UNHEX(LPAD(HEX(seq), 2, '0')) USING latin1) USING utf8mb4)) FROM seq_0_to_255")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var b int
		var h string
		if err := rows.Scan(&b, &h); err != nil {
			t.Fatal(err)
		}
		want, _ := hex.DecodeString(h)
		if got := utf8.AppendRune(nil, latin1ToRune(byte(b))); !bytes.Equal(got, want) {
			t.Errorf("latin1 %#x: got %X, MariaDB converts to %X", b, got, want)
		}
		if r, _ := utf8.DecodeRune(want); runeToLatin1(r) != byte(b) {
			t.Errorf("runeToLatin1(%U) = %#x, want %#x", r, runeToLatin1(r), b)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestCollationByID(t *testing.T) {
	tests := []struct {
		give    uint16
		want    string
		wantBin string
	}{
		{give: 45, want: "utf8mb4_general_ci", wantBin: "utf8mb4_bin"},
		{give: 224, want: "utf8mb4_unicode_ci", wantBin: "utf8mb4_bin"},
		{give: 8, want: "latin1_swedish_ci", wantBin: "latin1_bin"},
		{give: 33, want: "utf8mb3_general_ci", wantBin: "utf8mb3_bin"},
		{give: 63, want: "binary", wantBin: "binary"},
		{give: 2048, want: ""},
	}
	for _, tt := range tests {
		c := CollationByID(tt.give)
		if tt.want == "" {
			if c != nil {
				t.Errorf("CollationByID(%d) = %s, want none", tt.give, c)
			}
			continue
		}
		if c == nil || c.Name != tt.want {
			t.Errorf("CollationByID(%d) = %v, want %s", tt.give, c, tt.want)
			continue
		}
		if b := c.BinCollation(); b == nil || b.Name != tt.wantBin {
			t.Errorf("%s.BinCollation() = %v, want %s", c, b, tt.wantBin)
		}
		if CollationByName(tt.want) != c {
			t.Errorf("CollationByName(%s) is not CollationByID(%d)", tt.want, tt.give)
		}
	}
}

// TestCompareASCIIRunAgrees: Compare weighs a leading run of ASCII
// characters from the table directly; it must answer as the weigher does
// from the first byte, for every collation with a table and every text
// charset it reads (ASCII controls some collations ignore, letters of both
// cases, spaces for PAD SPACE, expansions like ß, bytes that do not
// decode), on random strings that share long prefixes.
func TestCompareASCIIRunAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 17))
	alphabet := []string{"a", "A", "b", "B", "z", "0", "9", "-", " ", "\t", "\x00", "\x01", "\x7f", "_", "ß", "ä", "Ä", "é", "\xff", "\xe4", "ss", "😀"}
	word := func() []byte {
		var b []byte
		for range r.IntN(6) {
			b = append(b, alphabet[r.IntN(len(alphabet))]...)
		}
		return b
	}
	checked := 0
	for _, base := range collations {
		if base.table == nil {
			continue
		}
		for _, text := range []string{base.Charset, "utf8mb4", "latin1"} {
			c := base.ForText(text)
			if c == nil {
				continue
			}
			for range 400 {
				prefix := word()
				a := append(append([]byte{}, prefix...), word()...)
				b := append(append([]byte{}, prefix...), word()...)
				if got, want := c.Compare(a, b), c.compareWeighed(a, b); got != want {
					t.Fatalf("%s (text %s): Compare(%q, %q) = %d, the weigher says %d", c.Name, text, a, b, got, want)
				}
				checked++
			}
		}
	}
	t.Logf("%d comparisons", checked)
}

// BenchmarkCompareSysbenchC compares sysbench's c values (eleven-digit
// groups joined by '-') under utf8mb4_general_ci and utf8mb4_unicode_ci,
// as the merge's ORDER BY c and DISTINCT c do.
func BenchmarkCompareSysbenchC(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	vals := make([][]byte, 1024)
	for i := range vals {
		var v []byte
		for g := range 10 {
			if g > 0 {
				v = append(v, '-')
			}
			for range 11 {
				v = append(v, byte('0'+r.IntN(10)))
			}
		}
		vals[i] = v
	}
	for _, id := range []uint16{Utf8mb4GeneralCI, Utf8mb4UnicodeCI} {
		c := CollationByID(id)
		b.Run(c.Name, func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				c.Compare(vals[i%len(vals)], vals[(i+1)%len(vals)])
			}
		})
		// The weighers alone, as Compare was before the ASCII run.
		b.Run(c.Name+"/weighers", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				c.compareWeighed(vals[i%len(vals)], vals[(i+1)%len(vals)])
			}
		})
	}
}

// TestCharsetOfID: the charset of every collation the live server lists
// (information_schema.COLLATION_CHARACTER_SET_APPLICABILITY, which has
// the uca1400 ones too) is the server's, for the charsets the merge
// reads, and "" for the others.
func TestCharsetOfID(t *testing.T) {
	db := mariadb(t)
	rows, err := db.Query("SELECT ID, FULL_COLLATION_NAME, CHARACTER_SET_NAME FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id uint16
		var name, cs string
		if err := rows.Scan(&id, &name, &cs); err != nil {
			t.Fatal(err)
		}
		want := ""
		switch cs {
		case "utf8mb4", "utf8mb3", "latin1", "ascii", "binary":
			want = cs
			n++
		}
		if got := CharsetOfID(id); got != want {
			t.Errorf("CharsetOfID(%d) (%s) = %q, want %q", id, name, got, want)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Errorf("the server listed %d collations of the merge's charsets, want over 100", n)
	}
}
