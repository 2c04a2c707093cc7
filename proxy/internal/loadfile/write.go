package loadfile

// AppendField appends one field of a record in the canonical form that
// MariaDB's default format (FIELDS TERMINATED BY '\t' ENCLOSED BY ”
// ESCAPED BY '\\' LINES TERMINATED BY '\n' STARTING BY ”) reads back as
// the same value: NULL as \N, and the backslash, tab and newline
// escaped. Fields after the first are preceded by a tab. charLen is the
// file's Format.CharLen: the later bytes of a multi-byte character are
// written as they are, as the data node reads them.
func AppendField(dst, v []byte, null, firstField bool, charLen func(byte) int) []byte {
	if !firstField {
		dst = append(dst, '\t')
	}
	if null {
		return append(dst, '\\', 'N')
	}
	for i := 0; i < len(v); i++ {
		b := v[i]
		if charLen != nil {
			if n := charLen(b); n > 1 && i+n <= len(v) {
				dst = append(dst, v[i:i+n]...)
				i += n - 1
				continue
			}
		}
		switch b {
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		default:
			dst = append(dst, b)
		}
	}
	return dst
}

// AppendEnd ends a record written with AppendField. cut adds a surplus
// field, so that the reader warns of it (1262) as it would have for the
// original line.
func AppendEnd(dst []byte, cut bool) []byte {
	if cut {
		dst = append(dst, '\t', '-')
	}
	return append(dst, '\n')
}

// AppendRecord appends rec in the canonical form (AppendField,
// AppendEnd).
func AppendRecord(dst []byte, rec *Record, charLen func(byte) int) []byte {
	for i := range rec.Len() {
		v, null := rec.Field(i)
		dst = AppendField(dst, v, null, i == 0, charLen)
	}
	return AppendEnd(dst, rec.Cut)
}

// CanonicalClause is the FIELDS and LINES clause that reads the canonical
// form.
const CanonicalClause = `FIELDS TERMINATED BY '\t' ENCLOSED BY '' ESCAPED BY '\\' LINES TERMINATED BY '\n' STARTING BY ''`
