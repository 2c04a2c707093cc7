package sqlvalue

import (
	"bytes"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/unicode/norm"
)

// MySQL 8's utf8mb4_0900_* collations are the Unicode Collation Algorithm
// (DUCET, UCA 9.0.0) at one, two or three levels, NO PAD, plus CLDR
// tailorings for the language-specific ones. MariaDB has none of them
// (before 11.4), so there is no server in reach to read WEIGHT_STRING
// tables from as gen_weights.go does for MariaDB's; and the embedded demo
// backends (go-mysql-server) have no WEIGHT_STRING at all, which rules out
// asking the data node for a hidden sort key. golang.org/x/text/collate
// implements the same algorithm on CLDR's root order (UCA 6.2 data):
// TestUCAMatchesMySQLWeights measures how closely it agrees with MySQL's
// single-character weights. Known differences: characters added to
// Unicode after 6.2 (emoji and symbols of 2014 and later) weigh by code
// point here. Where CLDR 23 gave Cyrillic letters with diacritics (ѓ, ї,
// ў, ӑ, ...) letters of their own and DUCET 9.0 weighs them as base letter
// plus accent, ucaText splits them before collating (see cyrillicSplit).

// ucaStrength is how many levels of the UCA a collation compares.
type ucaStrength int

const (
	ucaPrimary   ucaStrength = iota + 1 // _ai_ci: base letters only
	ucaSecondary                        // _as_ci: and accents
	ucaTertiary                         // _as_cs: and case
)

// ucaCollator hands out x/text collators for one language and strength.
// A collate.Collator keeps scratch state, so each comparison borrows one.
type ucaCollator struct {
	pool sync.Pool // *ucaScratch
}

type ucaScratch struct {
	c   *collate.Collator
	buf collate.Buffer
}

func newUCA(tag string, strength ucaStrength) *ucaCollator {
	lang := language.Make(tag)
	var opts []collate.Option
	switch strength {
	case ucaPrimary:
		opts = append(opts, collate.IgnoreDiacritics, collate.IgnoreCase, collate.IgnoreWidth)
	case ucaSecondary:
		opts = append(opts, collate.IgnoreCase, collate.IgnoreWidth)
	}
	u := &ucaCollator{}
	u.pool.New = func() any { return &ucaScratch{c: collate.New(lang, opts...)} }
	return u
}

func (u *ucaCollator) compare(a, b []byte) int {
	s := u.pool.Get().(*ucaScratch)
	r := s.c.Compare(a, b)
	u.pool.Put(s)
	return r
}

func (u *ucaCollator) appendKey(dst, str []byte) []byte {
	s := u.pool.Get().(*ucaScratch)
	dst = append(dst, s.c.Key(&s.buf, str)...)
	s.buf.Reset()
	u.pool.Put(s)
	return dst
}

// latin1ToUTF8 converts latin1 (cp1252) text to UTF-8, for a utf8mb4
// column read over a latin1 connection.
func latin1ToUTF8(s []byte) []byte {
	out := make([]byte, 0, len(s)+len(s)/2)
	for _, b := range s {
		out = utf8.AppendRune(out, latin1ToRune(b))
	}
	return out
}

// ucaText returns s as UTF-8 for c's collator.
func (c *Collation) ucaText(s []byte) []byte {
	if c.text == encSingle {
		return latin1ToUTF8(s)
	}
	return splitCyrillic(s)
}

// cyrillicSplit are the Cyrillic letters that MySQL's 0900 collations
// (DUCET 9.0) weigh as their base letter followed by an accent, while
// x/text's CLDR 23 root gives them a first-level weight of their own
// (TestUCAMatchesMySQLWeights finds them). ё and й are not among them:
// both agree on those.
var cyrillicSplit = map[rune]bool{
	0x0403: true, 0x0407: true, 0x040C: true, 0x040E: true,
	0x0453: true, 0x0457: true, 0x045C: true, 0x045E: true,
	0x0476: true, 0x0477: true,
	0x04D0: true, 0x04D1: true, 0x04D2: true, 0x04D3: true,
	0x04D6: true, 0x04D7: true, 0x04DA: true, 0x04DB: true,
	0x04DC: true, 0x04DD: true, 0x04DE: true, 0x04DF: true,
	0x04E4: true, 0x04E5: true, 0x04E6: true, 0x04E7: true,
	0x04EA: true, 0x04EB: true, 0x04EC: true, 0x04ED: true,
	0x04F0: true, 0x04F1: true, 0x04F2: true, 0x04F3: true,
	0x04F4: true, 0x04F5: true, 0x04F8: true, 0x04F9: true,
}

// splitCyrillic writes each letter of cyrillicSplit as its canonical
// decomposition with a COMBINING GRAPHEME JOINER (U+034F, ignorable at
// every level) between base and accent, which keeps x/text from
// contracting them back into one letter. Text without U+0400..U+04FF is
// returned as it is.
func splitCyrillic(s []byte) []byte {
	if bytes.IndexByte(s, 0xD0) < 0 && bytes.IndexByte(s, 0xD1) < 0 && bytes.IndexByte(s, 0xD3) < 0 {
		return s
	}
	var out []byte
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRune(s[i:])
		if !cyrillicSplit[r] {
			if out != nil {
				out = append(out, s[i:i+n]...)
			}
			i += n
			continue
		}
		if out == nil {
			out = append(make([]byte, 0, len(s)+8), s[:i]...)
		}
		d := []rune(norm.NFD.String(string(r)))
		out = utf8.AppendRune(out, d[0])
		for _, m := range d[1:] {
			out = utf8.AppendRune(out, 0x034F)
			out = utf8.AppendRune(out, m)
		}
		i += n
	}
	if out == nil {
		return s
	}
	return out
}

// ucaCollation describes one utf8mb4_0900_* collation.
func ucaCollation(id uint16, name, tag string, strength ucaStrength) *Collation {
	return &Collation{ID: id, Name: name, Charset: "utf8mb4", algo: algoUCA, uca: newUCA(tag, strength)}
}

// mysql0900 are MySQL 8's utf8mb4_0900 collations (MySQL's ids; MariaDB
// 10.11 gives none of 255..323 to a collation), each language-specific one
// with the CLDR locale whose tailoring it applies. Latin, Mongolian and
// Japanese tailorings are left out: x/text has no Latin or Mongolian one,
// and MySQL's Japanese ones weigh kana at a level x/text does not have.
var mysql0900 = []*Collation{
	ucaCollation(255, "utf8mb4_0900_ai_ci", "und", ucaPrimary),
	ucaCollation(305, "utf8mb4_0900_as_ci", "und", ucaSecondary),
	ucaCollation(278, "utf8mb4_0900_as_cs", "und", ucaTertiary),
	{ID: 309, Name: "utf8mb4_0900_bin", Charset: "utf8mb4", algo: algoBytes},

	ucaCollation(256, "utf8mb4_de_pb_0900_ai_ci", "de-u-co-phonebk", ucaPrimary),
	ucaCollation(279, "utf8mb4_de_pb_0900_as_cs", "de-u-co-phonebk", ucaTertiary),
	ucaCollation(257, "utf8mb4_is_0900_ai_ci", "is", ucaPrimary),
	ucaCollation(280, "utf8mb4_is_0900_as_cs", "is", ucaTertiary),
	ucaCollation(258, "utf8mb4_lv_0900_ai_ci", "lv", ucaPrimary),
	ucaCollation(281, "utf8mb4_lv_0900_as_cs", "lv", ucaTertiary),
	ucaCollation(259, "utf8mb4_ro_0900_ai_ci", "ro", ucaPrimary),
	ucaCollation(282, "utf8mb4_ro_0900_as_cs", "ro", ucaTertiary),
	ucaCollation(260, "utf8mb4_sl_0900_ai_ci", "sl", ucaPrimary),
	ucaCollation(283, "utf8mb4_sl_0900_as_cs", "sl", ucaTertiary),
	ucaCollation(261, "utf8mb4_pl_0900_ai_ci", "pl", ucaPrimary),
	ucaCollation(284, "utf8mb4_pl_0900_as_cs", "pl", ucaTertiary),
	ucaCollation(262, "utf8mb4_et_0900_ai_ci", "et", ucaPrimary),
	ucaCollation(285, "utf8mb4_et_0900_as_cs", "et", ucaTertiary),
	ucaCollation(263, "utf8mb4_es_0900_ai_ci", "es", ucaPrimary),
	ucaCollation(286, "utf8mb4_es_0900_as_cs", "es", ucaTertiary),
	ucaCollation(264, "utf8mb4_sv_0900_ai_ci", "sv", ucaPrimary),
	ucaCollation(287, "utf8mb4_sv_0900_as_cs", "sv", ucaTertiary),
	ucaCollation(265, "utf8mb4_tr_0900_ai_ci", "tr", ucaPrimary),
	ucaCollation(288, "utf8mb4_tr_0900_as_cs", "tr", ucaTertiary),
	ucaCollation(266, "utf8mb4_cs_0900_ai_ci", "cs", ucaPrimary),
	ucaCollation(289, "utf8mb4_cs_0900_as_cs", "cs", ucaTertiary),
	ucaCollation(267, "utf8mb4_da_0900_ai_ci", "da", ucaPrimary),
	ucaCollation(290, "utf8mb4_da_0900_as_cs", "da", ucaTertiary),
	ucaCollation(268, "utf8mb4_lt_0900_ai_ci", "lt", ucaPrimary),
	ucaCollation(291, "utf8mb4_lt_0900_as_cs", "lt", ucaTertiary),
	ucaCollation(269, "utf8mb4_sk_0900_ai_ci", "sk", ucaPrimary),
	ucaCollation(292, "utf8mb4_sk_0900_as_cs", "sk", ucaTertiary),
	ucaCollation(270, "utf8mb4_es_trad_0900_ai_ci", "es-u-co-trad", ucaPrimary),
	ucaCollation(293, "utf8mb4_es_trad_0900_as_cs", "es-u-co-trad", ucaTertiary),
	ucaCollation(273, "utf8mb4_eo_0900_ai_ci", "eo", ucaPrimary),
	ucaCollation(296, "utf8mb4_eo_0900_as_cs", "eo", ucaTertiary),
	ucaCollation(274, "utf8mb4_hu_0900_ai_ci", "hu", ucaPrimary),
	ucaCollation(297, "utf8mb4_hu_0900_as_cs", "hu", ucaTertiary),
	ucaCollation(275, "utf8mb4_hr_0900_ai_ci", "hr", ucaPrimary),
	ucaCollation(298, "utf8mb4_hr_0900_as_cs", "hr", ucaTertiary),
	ucaCollation(277, "utf8mb4_vi_0900_ai_ci", "vi", ucaPrimary),
	ucaCollation(300, "utf8mb4_vi_0900_as_cs", "vi", ucaTertiary),
	ucaCollation(306, "utf8mb4_ru_0900_ai_ci", "ru", ucaPrimary),
	ucaCollation(307, "utf8mb4_ru_0900_as_cs", "ru", ucaTertiary),
	ucaCollation(308, "utf8mb4_zh_0900_as_cs", "zh", ucaTertiary),
	ucaCollation(310, "utf8mb4_nb_0900_ai_ci", "nb", ucaPrimary),
	ucaCollation(311, "utf8mb4_nb_0900_as_cs", "nb", ucaTertiary),
	ucaCollation(312, "utf8mb4_nn_0900_ai_ci", "nn", ucaPrimary),
	ucaCollation(313, "utf8mb4_nn_0900_as_cs", "nn", ucaTertiary),
	ucaCollation(314, "utf8mb4_sr_latn_0900_ai_ci", "sr-Latn", ucaPrimary),
	ucaCollation(315, "utf8mb4_sr_latn_0900_as_cs", "sr-Latn", ucaTertiary),
	ucaCollation(316, "utf8mb4_bs_0900_ai_ci", "bs", ucaPrimary),
	ucaCollation(317, "utf8mb4_bs_0900_as_cs", "bs", ucaTertiary),
	ucaCollation(318, "utf8mb4_bg_0900_ai_ci", "bg", ucaPrimary),
	ucaCollation(319, "utf8mb4_bg_0900_as_cs", "bg", ucaTertiary),
	ucaCollation(320, "utf8mb4_gl_0900_ai_ci", "gl", ucaPrimary),
	ucaCollation(321, "utf8mb4_gl_0900_as_cs", "gl", ucaTertiary),
}
