package sqlvalue

import (
	"bytes"
	"cmp"
	"compress/flate"
	"embed"
	"encoding/binary"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

//go:embed weights/*.bin
var weightFiles embed.FS

// algorithm says how a collation turns a string into weights.
type algorithm int

const (
	algoBytes algorithm = iota + 1 // the bytes themselves (binary, *_bin)
	algoUTF8                       // a table lookup per code point; 0xFFFD above the BMP
	algoByte                       // a table lookup per byte (8-bit charsets)
	algoUCA                        // the Unicode Collation Algorithm (MySQL 8's utf8mb4_0900_*)
)

// encoding is how a string's bytes encode its characters.
type encoding int

const (
	encUTF8   encoding = iota + 1 // utf8mb4, utf8mb3
	encSingle                     // one byte per character: latin1 (cp1252), ascii, binary
)

func encodingOf(charset string) (encoding, bool) {
	switch charset {
	case "utf8mb4", "utf8mb3":
		return encUTF8, true
	case "latin1", "ascii", "binary":
		return encSingle, true
	}
	return 0, false
}

// Collation is one MariaDB collation: how the strings of one charset
// compare. Compare and AppendKey agree: two strings compare equal exactly
// when their keys are equal.
type Collation struct {
	ID      uint16
	Name    string
	Charset string
	// pad is PAD SPACE: a string compares as if padded with spaces to the
	// other's length, so trailing spaces never count. NO PAD collations
	// (the *_nopad_* ones and binary) count every character.
	pad   bool
	algo  algorithm
	table func() *weightTable
	uca   *ucaCollator // algoUCA only
	// text is the encoding of the strings given to Compare when it is not
	// the charset's own (see ForText); 0 for the charset's own.
	text encoding
}

// String returns the collation's name.
func (c *Collation) String() string { return c.Name }

// PadSpace reports whether trailing spaces are ignored.
func (c *Collation) PadSpace() bool { return c.pad }

// weightTable holds the weights of the characters 0..size-1: character c
// weighs w[off[c]:off[c+1]] (empty for characters the collation ignores,
// several weights for expansions such as 'ß' in utf8mb4_unicode_ci).
type weightTable struct {
	off   []uint32
	w     []uint16
	space uint16 // weight of ' ', for PAD SPACE comparisons
	// ascii[b] is the weight of the ASCII character b when it has
	// exactly one (single[b]); Compare weighs runs of such characters
	// without a weigher.
	ascii  [utf8.RuneSelf]uint16
	single [utf8.RuneSelf]bool
}

func (t *weightTable) size() int { return len(t.off) - 1 }

func (t *weightTable) of(c int) []uint16 { return t.w[t.off[c]:t.off[c+1]] }

// tableLoader returns a function that decodes the embedded table name once
// and then returns it. The files are generated and checked by the tests,
// so a file that does not decode is a build defect and panics.
func tableLoader(name string) func() *weightTable {
	return sync.OnceValue(func() *weightTable {
		t, err := decodeTable(name)
		if err != nil {
			panic(fmt.Sprintf("sqlvalue: weight table %s: %v", name, err))
		}
		return t
	})
}

// decodeTable reads the format gen_weights.go writes.
func decodeTable(name string) (*weightTable, error) {
	f, err := weightFiles.Open("weights/" + name + ".bin")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(flate.NewReader(f))
	if err != nil {
		return nil, err
	}
	r := bytes.NewReader(raw)
	size, err := binary.ReadUvarint(r)
	if err != nil || size > 1<<17 {
		return nil, fmt.Errorf("bad size %d: %v", size, err)
	}
	if _, err := r.ReadByte(); err != nil { // weight width; deltas make it moot
		return nil, err
	}
	t := &weightTable{off: make([]uint32, size+1)}
	var prev []int64
	for c := range int(size) {
		n, err := binary.ReadUvarint(r)
		if err != nil || n > 32 {
			return nil, fmt.Errorf("character %d: bad weight count %d: %v", c, n, err)
		}
		cur := make([]int64, n)
		for i := range cur {
			d, err := binary.ReadVarint(r)
			if err != nil {
				return nil, fmt.Errorf("character %d: %v", c, err)
			}
			var p int64
			if i < len(prev) {
				p = prev[i]
			}
			cur[i] = p + d
			if cur[i] < 0 || cur[i] > 0xFFFF {
				return nil, fmt.Errorf("character %d: weight %d out of range", c, cur[i])
			}
			t.w = append(t.w, uint16(cur[i]))
		}
		prev = cur
		t.off[c+1] = uint32(len(t.w))
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%d trailing bytes", r.Len())
	}
	if int(size) <= ' ' || len(t.of(' ')) != 1 {
		return nil, fmt.Errorf("space has no single weight")
	}
	t.space = t.of(' ')[0]
	for b := range min(int(size), utf8.RuneSelf) {
		if w := t.of(b); len(w) == 1 {
			t.ascii[b], t.single[b] = w[0], true
		}
	}
	return t, nil
}

// The weight tables, each shared by the collations that weigh alike (a
// NO PAD variant weighs as its PAD SPACE twin; utf8mb3 as utf8mb4 within
// the BMP).
var (
	utf8General   = tableLoader("utf8_general_ci")
	utf8Unicode   = tableLoader("utf8_unicode_ci")
	latin1Swedish = tableLoader("latin1_swedish_ci")
	latin1German1 = tableLoader("latin1_german1_ci")
	latin1Danish  = tableLoader("latin1_danish_ci")
	latin1General = tableLoader("latin1_general_ci")
	latin1GenCS   = tableLoader("latin1_general_cs")
	latin1Spanish = tableLoader("latin1_spanish_ci")
	asciiGeneral  = tableLoader("ascii_general_ci")
)

// Collation ids MariaDB gives these collations.
const (
	BinaryID          uint16 = 63
	Utf8mb4GeneralCI  uint16 = 45
	Utf8mb4Bin        uint16 = 46
	Utf8mb4UnicodeCI  uint16 = 224
	Utf8mb3GeneralCI  uint16 = 33
	Latin1SwedishCI   uint16 = 8
	Latin1Bin         uint16 = 47
	Utf8mb4NopadBin   uint16 = 1070
	Utf8mb4GeneralNP  uint16 = 1069
	Utf8mb4UnicodeNP  uint16 = 1248
	Latin1SwedishNPCI uint16 = 1032
)

// collations are the collations the merge can compare with, by id.
var collations = []*Collation{
	{ID: BinaryID, Name: "binary", Charset: "binary", algo: algoBytes},

	{ID: 45, Name: "utf8mb4_general_ci", Charset: "utf8mb4", pad: true, algo: algoUTF8, table: utf8General},
	{ID: 46, Name: "utf8mb4_bin", Charset: "utf8mb4", pad: true, algo: algoBytes},
	{ID: 224, Name: "utf8mb4_unicode_ci", Charset: "utf8mb4", pad: true, algo: algoUTF8, table: utf8Unicode},
	{ID: 1069, Name: "utf8mb4_general_nopad_ci", Charset: "utf8mb4", algo: algoUTF8, table: utf8General},
	{ID: 1070, Name: "utf8mb4_nopad_bin", Charset: "utf8mb4", algo: algoBytes},
	{ID: 1248, Name: "utf8mb4_unicode_nopad_ci", Charset: "utf8mb4", algo: algoUTF8, table: utf8Unicode},

	{ID: 33, Name: "utf8mb3_general_ci", Charset: "utf8mb3", pad: true, algo: algoUTF8, table: utf8General},
	{ID: 83, Name: "utf8mb3_bin", Charset: "utf8mb3", pad: true, algo: algoBytes},
	{ID: 192, Name: "utf8mb3_unicode_ci", Charset: "utf8mb3", pad: true, algo: algoUTF8, table: utf8Unicode},
	{ID: 1057, Name: "utf8mb3_general_nopad_ci", Charset: "utf8mb3", algo: algoUTF8, table: utf8General},
	{ID: 1107, Name: "utf8mb3_nopad_bin", Charset: "utf8mb3", algo: algoBytes},
	{ID: 1216, Name: "utf8mb3_unicode_nopad_ci", Charset: "utf8mb3", algo: algoUTF8, table: utf8Unicode},

	{ID: 8, Name: "latin1_swedish_ci", Charset: "latin1", pad: true, algo: algoByte, table: latin1Swedish},
	{ID: 5, Name: "latin1_german1_ci", Charset: "latin1", pad: true, algo: algoByte, table: latin1German1},
	{ID: 15, Name: "latin1_danish_ci", Charset: "latin1", pad: true, algo: algoByte, table: latin1Danish},
	{ID: 47, Name: "latin1_bin", Charset: "latin1", pad: true, algo: algoBytes},
	{ID: 48, Name: "latin1_general_ci", Charset: "latin1", pad: true, algo: algoByte, table: latin1General},
	{ID: 49, Name: "latin1_general_cs", Charset: "latin1", pad: true, algo: algoByte, table: latin1GenCS},
	{ID: 94, Name: "latin1_spanish_ci", Charset: "latin1", pad: true, algo: algoByte, table: latin1Spanish},
	{ID: 1032, Name: "latin1_swedish_nopad_ci", Charset: "latin1", algo: algoByte, table: latin1Swedish},
	{ID: 1071, Name: "latin1_nopad_bin", Charset: "latin1", algo: algoBytes},

	{ID: 11, Name: "ascii_general_ci", Charset: "ascii", pad: true, algo: algoByte, table: asciiGeneral},
	{ID: 65, Name: "ascii_bin", Charset: "ascii", pad: true, algo: algoBytes},
	{ID: 1035, Name: "ascii_general_nopad_ci", Charset: "ascii", algo: algoByte, table: asciiGeneral},
	{ID: 1089, Name: "ascii_nopad_bin", Charset: "ascii", algo: algoBytes},
}

// CollationByID returns the collation with MariaDB id id, or nil when the
// merge does not know how it compares.
func CollationByID(id uint16) *Collation {
	for _, c := range collations {
		if c.ID == id {
			return c
		}
	}
	for _, c := range mysql0900 {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// CharsetOfID returns the charset of MariaDB's collation id when it is
// one whose text the merge can read (utf8mb4, utf8mb3, latin1, ascii,
// binary), or "". A text column's definition carries the connection's
// collation (SET NAMES ... COLLATE), not the column's: the merge compares
// in the column's own collation (ForText) and needs only the charset of
// the connection's, which may be one it cannot compare in itself
// (latin1_german2_ci, utf8mb4_uca1400_ai_ci).
func CharsetOfID(id uint16) string {
	if c := CollationByID(id); c != nil {
		return c.Charset
	}
	switch {
	case id >= 2048 && id < 2304: // the uca1400 collations, 256 a charset
		return "utf8mb3"
	case id >= 2304 && id < 2560:
		return "utf8mb4"
	case id >= 1024 && id < 2048: // a NO PAD collation is its PAD one's id + 1024
		id -= 1024
	}
	switch {
	case id == 5 || id == 8 || id == 15 || id == 31 || id == 47 || id == 48 || id == 49 || id == 94:
		return "latin1"
	case id == 11 || id == 65:
		return "ascii"
	case id == 33 || id == 83 || id >= 192 && id <= 215 || id == 223 || id >= 576 && id <= 578:
		return "utf8mb3"
	case id == 45 || id == 46 || id >= 224 && id <= 247 || id >= 608 && id <= 610:
		return "utf8mb4"
	}
	return ""
}

// CollationByName returns the collation called name (lower case, as
// information_schema spells it), or nil.
func CollationByName(name string) *Collation {
	for _, c := range collations {
		if c.Name == name {
			return c
		}
	}
	for _, c := range mysql0900 {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// BinCollation returns the PAD SPACE _bin collation of c's charset (what
// a column definition with BINARY_FLAG means), or c itself when c is
// binary.
func (c *Collation) BinCollation() *Collation {
	if c.algo == algoBytes {
		return c
	}
	if c.algo == algoUCA {
		return CollationByID(309) // utf8mb4_0900_bin, NO PAD as its family
	}
	for _, b := range collations {
		if b.Charset == c.Charset && b.algo == algoBytes && b.pad {
			return b
		}
	}
	return nil
}

// ForText returns the collation for strings in charset: c itself when
// that is c's charset, otherwise a copy that converts each character
// first, as MariaDB's column values arrive converted to the connection's
// charset (character_set_results) while the server compares them in the
// column's. It returns nil when the merge cannot convert between them.
func (c *Collation) ForText(charset string) *Collation {
	native, _ := encodingOf(c.Charset)
	text, ok := encodingOf(charset)
	switch {
	case charset == c.Charset || c.Charset == "binary" || charset == "binary":
		return c
	case !ok:
		return nil
	case text == native && (text == encUTF8 || c.Charset == "ascii" || charset == "ascii"):
		// utf8mb3 and utf8mb4 text are alike in the BMP; ascii is a
		// subset of latin1.
		return c
	}
	cp := *c
	cp.text = text
	return &cp
}

// transcoded reports whether Compare converts characters first.
func (c *Collation) transcoded() bool { return c.text != 0 }

func (c *Collation) weigher(s []byte) weigher {
	native, _ := encodingOf(c.Charset)
	text := native
	if c.text != 0 {
		text = c.text
	}
	w := weigher{native: native, text: text, s: s, space: ' '}
	if c.table != nil {
		w.t = c.table()
		w.space = w.t.space
	}
	return w
}

// Compare returns -1, 0 or +1 as a sorts before, equal to or after b.
func (c *Collation) Compare(a, b []byte) int {
	if c.algo == algoBytes && !c.transcoded() {
		return compareBytes(a, b, c.pad)
	}
	if bytes.Equal(a, b) {
		return 0
	}
	if c.algo == algoUCA {
		return c.uca.compare(c.ucaText(a), c.ucaText(b))
	}
	if c.table != nil {
		// A leading run of ASCII characters of one weight each is
		// weighed here: an ASCII byte is a character of its own in
		// every encoding the weigher reads, and weighs what the table
		// says at its own index. The first pair that weighs apart
		// decides; otherwise the weigher goes on from the first byte
		// this loop does not weigh (its weights do not depend on what
		// precedes it).
		t := c.table()
		i, n := 0, min(len(a), len(b))
		for ; i < n; i++ {
			ca, cb := a[i], b[i]
			if ca >= utf8.RuneSelf || cb >= utf8.RuneSelf || !t.single[ca] || !t.single[cb] {
				break
			}
			if wa, wb := t.ascii[ca], t.ascii[cb]; wa != wb {
				return cmpUint16(wa, wb)
			}
		}
		a, b = a[i:], b[i:]
	}
	return c.compareWeighed(a, b)
}

// compareWeighed is Compare weight by weight with a weigher per string.
func (c *Collation) compareWeighed(a, b []byte) int {
	x, y := c.weigher(a), c.weigher(b)
	space := x.space
	for {
		wa, oka := x.next()
		wb, okb := y.next()
		if x.bad || y.bad {
			// MariaDB compares the rest bytewise from the first bad byte.
			return bytes.Compare(x.rest(), y.rest())
		}
		switch {
		case oka && okb:
			if wa != wb {
				return cmpUint16(wa, wb)
			}
		case !oka && !okb:
			return 0
		case !oka:
			if !c.pad {
				return -1
			}
			return -padRest(&y, wb, space)
		default:
			if !c.pad {
				return 1
			}
			return padRest(&x, wa, space)
		}
	}
}

// padRest compares the rest of a longer string (its first remaining
// weight w) with the spaces the shorter one is padded with.
func padRest(it *weigher, w, space uint16) int {
	for {
		if w != space {
			return cmpUint16(w, space)
		}
		var ok bool
		if w, ok = it.next(); !ok {
			return 0
		}
		if it.bad {
			return 1
		}
	}
}

func cmpUint16(a, b uint16) int {
	if a < b {
		return -1
	}
	return 1
}

// compareBytes compares byte strings, PAD SPACE when pad.
func compareBytes(a, b []byte, pad bool) int {
	n := min(len(a), len(b))
	if r := bytes.Compare(a[:n], b[:n]); r != 0 || !pad {
		if r != 0 {
			return r
		}
		return cmp.Compare(len(a), len(b))
	}
	sign := 1
	rest := a[n:]
	if len(b) > n {
		rest, sign = b[n:], -1
	}
	for _, ch := range rest {
		if ch != ' ' {
			if ch < ' ' {
				return -sign
			}
			return sign
		}
	}
	return 0
}

// AppendKey appends to dst a key for s: two strings are equal under c
// exactly when their keys are equal, so keys can be hashed (GROUP BY,
// DISTINCT).
func (c *Collation) AppendKey(dst, s []byte) []byte {
	if c.algo == algoBytes && !c.transcoded() {
		if c.pad {
			s = bytes.TrimRight(s, " ")
		}
		return append(dst, s...)
	}
	if c.algo == algoUCA {
		return c.uca.appendKey(dst, c.ucaText(s))
	}
	start := len(dst)
	it := c.weigher(s)
	for {
		w, ok := it.next()
		if it.bad {
			// Keep the undecodable rest as it is, after a marker no
			// weight sequence produces.
			dst = append(dst, 0xFF, 0xFF, 0xFF)
			return append(dst, it.rest()...)
		}
		if !ok {
			break
		}
		dst = append(dst, byte(w>>8), byte(w))
	}
	if c.pad {
		for len(dst)-start >= 2 && uint16(dst[len(dst)-2])<<8|uint16(dst[len(dst)-1]) == it.space {
			dst = dst[:len(dst)-2]
		}
	}
	return dst
}

// weigher produces a string's weights one at a time.
type weigher struct {
	native encoding     // the collation's charset: what its table is indexed by
	text   encoding     // how s encodes characters
	t      *weightTable // nil: a character weighs its own code (bin collations)
	space  uint16       // weight of ' '
	s      []byte
	pos    int      // next byte of s to decode
	last   int      // start of the character the pending weights belong to
	pend   []uint16 // weights of the current character not yet returned
	bad    bool     // s[last:] does not decode
}

// next returns the next weight, or false at the end of the string (or at
// an undecodable byte, with bad set).
func (it *weigher) next() (uint16, bool) {
	for len(it.pend) == 0 {
		if it.pos >= len(it.s) {
			return 0, false
		}
		it.last = it.pos
		var r rune
		if it.text == encUTF8 {
			n := 1
			if r = rune(it.s[it.pos]); r >= utf8.RuneSelf {
				r, n = utf8.DecodeRune(it.s[it.pos:])
				if r == utf8.RuneError && n <= 1 {
					it.bad = true
					return 0, false
				}
			}
			it.pos += n
		} else {
			r = latin1ToRune(it.s[it.pos])
			it.pos++
		}
		c := int(r)
		if it.native == encSingle {
			c = int(runeToLatin1(r))
		}
		switch {
		case it.t == nil:
			return uint16(min(c, 0xFFFF)), true
		case c >= it.t.size() && it.native == encUTF8:
			return 0xFFFD, true // MariaDB weighs characters beyond the BMP alike
		case c >= it.t.size():
			return uint16(c), true
		default:
			it.pend = it.t.of(c)
		}
	}
	w := it.pend[0]
	it.pend = it.pend[1:]
	return w, true
}

// rest returns the bytes from the character being weighed on.
func (it *weigher) rest() []byte { return it.s[it.last:] }

// cp1252 are the characters MariaDB's latin1 (Windows-1252) puts at
// 0x80..0x9F; the five it leaves undefined map to the same code point.
var cp1252 = [32]rune{
	0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
	0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
}

func latin1ToRune(b byte) rune {
	if b >= 0x80 && b < 0xA0 {
		return cp1252[b-0x80]
	}
	return rune(b)
}

// runeToLatin1 encodes r in latin1, '?' when it has no byte there (as
// MariaDB converts it).
func runeToLatin1(r rune) byte {
	switch {
	case r < 0x80 || (r >= 0xA0 && r < 0x100):
		return byte(r)
	}
	for i, c := range cp1252 {
		if c == r {
			return byte(0x80 + i)
		}
	}
	return '?'
}
