package sqlvalue

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/dolthub/go-mysql-server/sql/encodings"
)

// TestUCAMatchesMySQLWeights compares the order x/text gives single
// characters with the single-character weights go-mysql-server ships for
// MySQL 8's utf8mb4_0900 collations (taken from MySQL): every pair of
// neighbours in MySQL's order must compare the same way (before, or
// equal). Latin, Greek and Cyrillic must agree everywhere; over
// the whole printable BMP below U+3000 the known differences (characters
// added to Unicode after 6.2, some Cyrillic letters with diacritics) stay
// under 5% of the neighbour pairs.
func TestUCAMatchesMySQLWeights(t *testing.T) {
	tests := []struct {
		id     uint16
		weight func(rune) int32
	}{
		{255, encodings.Utf8mb4_0900_ai_ci_RuneWeight},
		{305, encodings.Utf8mb4_0900_as_ci_RuneWeight},
		{278, encodings.Utf8mb4_0900_as_cs_RuneWeight},
	}
	ranges := []struct {
		name      string
		lo, hi    rune
		maxDiffer float64
	}{
		{"ASCII and Latin", 0x20, 0x24F, 0},
		{"Greek", 0x386, 0x3CE, 0},
		{"Cyrillic", 0x400, 0x4FF, 0},
		{"BMP below U+3000", 0x20, 0x2FFF, 0.05},
	}
	for _, tt := range tests {
		c := CollationByID(tt.id)
		for _, r := range ranges {
			t.Run(c.Name+"/"+r.name, func(t *testing.T) {
				var chars []rune
				for ch := r.lo; ch <= r.hi; ch++ {
					if unicode.IsPrint(ch) && !unicode.Is(unicode.Mn, ch) {
						chars = append(chars, ch)
					}
				}
				slices.SortStableFunc(chars, func(a, b rune) int { return int(tt.weight(a)) - int(tt.weight(b)) })
				differ := 0
				for i := 1; i < len(chars); i++ {
					a, b := chars[i-1], chars[i]
					want := 0
					if tt.weight(a) < tt.weight(b) {
						want = -1
					}
					if got := c.Compare([]byte(string(a)), []byte(string(b))); got != want {
						differ++
						if r.maxDiffer == 0 && differ <= 5 {
							t.Errorf("%U %q vs %U %q: %d, MySQL %d", a, a, b, b, got, want)
						}
					}
				}
				share := float64(differ) / float64(len(chars)-1)
				t.Logf("%d of %d neighbour pairs differ (%.2f%%)", differ, len(chars)-1, 100*share)
				if share > r.maxDiffer {
					t.Errorf("%d of %d neighbour pairs compare differently from MySQL", differ, len(chars)-1)
				}
			})
		}
	}
}

// TestUCACollations checks what each strength of the 0900 collations
// tells apart, NO PAD, expansions and a few language tailorings.
func TestUCACollations(t *testing.T) {
	tests := []struct {
		collation string
		a, b      string
		want      int
	}{
		{"utf8mb4_0900_ai_ci", "paid", "PAID", 0},
		{"utf8mb4_0900_ai_ci", "café", "CAFE", 0},
		{"utf8mb4_0900_ai_ci", "straße", "STRASSE", 0},
		{"utf8mb4_0900_ai_ci", "Æsir", "aesir", 0},
		{"utf8mb4_0900_ai_ci", "new", "paid", -1},
		{"utf8mb4_0900_ai_ci", "shipped", "paid", 1},
		{"utf8mb4_0900_ai_ci", "a", "a ", -1}, // NO PAD
		{"utf8mb4_0900_ai_ci", "", "a", -1},
		{"utf8mb4_0900_ai_ci", "ё", "е", 0},
		{"utf8mb4_0900_ai_ci", "ı", "i", 1},
		{"utf8mb4_0900_ai_ci", "a-b", "ab", -1}, // punctuation is not ignorable
		{"utf8mb4_0900_as_ci", "paid", "PAID", 0},
		{"utf8mb4_0900_as_ci", "café", "cafe", 1},
		{"utf8mb4_0900_as_cs", "paid", "PAID", -1},
		{"utf8mb4_0900_as_cs", "Paid", "paid", 1},
		{"utf8mb4_0900_as_cs", "paid", "paid", 0},
		{"utf8mb4_0900_bin", "A", "a", -1},
		{"utf8mb4_0900_bin", "a", "a ", -1},
		{"utf8mb4_sv_0900_ai_ci", "ä", "z", 1},
		{"utf8mb4_0900_ai_ci", "ä", "z", -1},
		{"utf8mb4_es_0900_ai_ci", "ñ", "nz", 1},
		{"utf8mb4_de_pb_0900_ai_ci", "Mädchen", "maedchen", 0},
		{"utf8mb4_tr_0900_ai_ci", "ı", "h", 1},
		{"utf8mb4_da_0900_ai_ci", "aa", "z", 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s_%s", tt.collation, tt.a, tt.b), func(t *testing.T) {
			c := CollationByName(tt.collation)
			if c == nil {
				t.Fatalf("no collation %s", tt.collation)
			}
			if CollationByID(c.ID) != c {
				t.Errorf("CollationByID(%d) is not %s", c.ID, c.Name)
			}
			if got := c.Compare([]byte(tt.a), []byte(tt.b)); got != tt.want {
				t.Errorf("Compare(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
			}
			if got := c.Compare([]byte(tt.b), []byte(tt.a)); got != -tt.want {
				t.Errorf("Compare(%q, %q) = %d, want %d", tt.b, tt.a, got, -tt.want)
			}
			ka, kb := c.AppendKey(nil, []byte(tt.a)), c.AppendKey(nil, []byte(tt.b))
			if bytes.Equal(ka, kb) != (tt.want == 0) {
				t.Errorf("keys %x and %x: equal %v, want %v", ka, kb, bytes.Equal(ka, kb), tt.want == 0)
			}
		})
	}
}

// TestUCAKeysAgreeWithCompare: keys are equal exactly when Compare says
// 0, and compare (bytewise) as Compare does, over random strings from an
// alphabet with case, accents, expansions and spaces; also for text
// arriving in latin1 (ForText).
func TestUCAKeysAgreeWithCompare(t *testing.T) {
	alphabet := []string{"a", "A", "á", "e", "é", "s", "ß", "æ", " ", "-", "z", "ё", "е", "1"}
	rnd := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		var b strings.Builder
		for range rnd.IntN(5) {
			b.WriteString(alphabet[rnd.IntN(len(alphabet))])
		}
		return b.String()
	}
	for _, name := range []string{"utf8mb4_0900_ai_ci", "utf8mb4_0900_as_ci", "utf8mb4_0900_as_cs", "utf8mb4_sv_0900_ai_ci"} {
		c := CollationByName(name)
		for range 3000 {
			a, b := []byte(word()), []byte(word())
			r := c.Compare(a, b)
			ka, kb := c.AppendKey([]byte("x"), a), c.AppendKey([]byte("x"), b)
			if bytes.Compare(ka, kb) != r {
				t.Fatalf("%s: Compare(%q, %q) = %d, keys %x %x", name, a, b, r, ka, kb)
			}
		}
	}
	c := CollationByName("utf8mb4_0900_ai_ci").ForText("latin1")
	if got := c.Compare([]byte("caf\xe9"), []byte("CAFE")); got != 0 {
		t.Errorf("latin1 café vs CAFE under utf8mb4_0900_ai_ci: %d", got)
	}
	if CollationByName("utf8mb4_0900_ai_ci").BinCollation().Name != "utf8mb4_0900_bin" {
		t.Errorf("the 0900 family's bin collation is not utf8mb4_0900_bin")
	}
}
