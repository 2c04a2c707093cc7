package idgen

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// CheckColumn says whether a key column of type columnType (as
// information_schema.COLUMNS.COLUMN_TYPE or a CREATE TABLE writes it:
// "int(11)", "bigint unsigned", "char(36)", "binary(16)") can hold the
// generator's keys. err means it cannot (a SNOWFLAKE into INT, a UUID
// into BIGINT); warning, with a nil err, is a limit worth knowing (a
// SEGMENT or TICKET counter into INT runs out after 2^31 keys).
func (r KeyRange) CheckColumn(columnType string) (warning string, err error) {
	base, length, unsigned := splitColumnType(columnType)
	if r.Integer {
		if limit, ok := integerLimit(base, unsigned); ok {
			switch {
			case limit >= r.Max:
				return "", nil
			case r.Soon:
				return "", fmt.Errorf("column type %s holds at most %d, and the generator's keys exceed it from the first one (they go up to %d); use BIGINT", columnType, limit, r.Max)
			}
			return fmt.Sprintf("column type %s holds keys up to %d: the generator counts up to it, then INSERTs fail; BIGINT does not run out", columnType, limit), nil
		}
		switch base {
		case "decimal", "numeric":
			if length >= 19 || length == 0 {
				return "", nil
			}
		case "char", "varchar":
			if length >= 19 {
				return "", nil
			}
		}
		return "", fmt.Errorf("column type %s cannot hold the generator's integer keys; use BIGINT", columnType)
	}
	need, text := 36, true
	switch r.UUID {
	case UUIDChar32:
		need = 32
	case UUIDBinary16:
		need, text = 16, false
	}
	switch {
	case text && (base == "char" || base == "varchar") && length >= need,
		!text && (base == "binary" || base == "varbinary") && length >= need:
		return "", nil
	}
	return "", fmt.Errorf("column type %s cannot hold the generator's UUID keys, written as %s (its column-type prop)", columnType, r.UUID)
}

// splitColumnType reads "bigint(20) unsigned zerofill" as bigint, 20, true.
func splitColumnType(t string) (base string, length int, unsigned bool) {
	t = strings.ToLower(strings.TrimSpace(t))
	unsigned = strings.Contains(t, "unsigned")
	base = t
	if i := strings.IndexAny(t, "( "); i >= 0 {
		base = t[:i]
	}
	if i := strings.IndexByte(t, '('); i >= 0 {
		if j := strings.IndexAny(t[i:], ",)"); j > 0 {
			length, _ = strconv.Atoi(strings.TrimSpace(t[i+1 : i+j]))
		}
	}
	return base, length, unsigned
}

func integerLimit(base string, unsigned bool) (uint64, bool) {
	bits := map[string]uint{"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "integer": 32, "bigint": 64}[base]
	if bits == 0 {
		return 0, false
	}
	if unsigned {
		if bits == 64 {
			return math.MaxUint64, true
		}
		return 1<<bits - 1, true
	}
	return 1<<(bits-1) - 1, true
}
