package loadfile

// AppendField appends one field of a record in the canonical form that
// MariaDB's default format (FIELDS TERMINATED BY '\t' ENCLOSED BY ”
// ESCAPED BY '\\' LINES TERMINATED BY '\n' STARTING BY ”) reads back as
// the same value: NULL as \N, and the backslash, tab and newline
// escaped. Fields after the first are preceded by a tab.
func AppendField(dst, v []byte, null, firstField bool) []byte {
	if !firstField {
		dst = append(dst, '\t')
	}
	if null {
		return append(dst, '\\', 'N')
	}
	for _, b := range v {
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
func AppendRecord(dst []byte, rec *Record) []byte {
	for i := range rec.Len() {
		v, null := rec.Field(i)
		dst = AppendField(dst, v, null, i == 0)
	}
	return AppendEnd(dst, rec.Cut)
}

// CanonicalClause is the FIELDS and LINES clause that reads the canonical
// form.
const CanonicalClause = `FIELDS TERMINATED BY '\t' ENCLOSED BY '' ESCAPED BY '\\' LINES TERMINATED BY '\n' STARTING BY ''`
