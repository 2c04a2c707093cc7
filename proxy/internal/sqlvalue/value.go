package sqlvalue

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"strconv"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// Class is how MariaDB compares the values of a column.
type Class int

// Value classes.
const (
	ClassNull    Class = iota + 1 // the NULL type: every value is NULL
	ClassInt                      // TINYINT..BIGINT, YEAR (signed or unsigned)
	ClassDecimal                  // DECIMAL: exactly
	ClassFloat                    // FLOAT, DOUBLE
	ClassDate                     // DATE, DATETIME, TIMESTAMP: fixed-width text orders as the value
	ClassTime                     // TIME: signed, hours may exceed 24
	ClassString                   // character strings: by collation
	ClassBinary                   // binary strings, BLOB, BIT: by bytes
	ClassOther                    // GEOMETRY and anything else: no order
	ClassInet4                    // INET4: by its 4 bytes (fixedbin.go)
	ClassInet6                    // INET6: by its 16 bytes
	ClassUUID                     // UUID: by its bytes in MariaDB's record order
)

// String returns the class's name, for messages.
func (c Class) String() string {
	switch c {
	case ClassNull:
		return "null"
	case ClassInt:
		return "integer"
	case ClassDecimal:
		return "decimal"
	case ClassFloat:
		return "float"
	case ClassDate:
		return "date"
	case ClassTime:
		return "time"
	case ClassString:
		return "string"
	case ClassBinary:
		return "binary"
	case ClassOther:
		return "other"
	case ClassInet4:
		return "inet4"
	case ClassInet6:
		return "inet6"
	case ClassUUID:
		return "uuid"
	}
	return "unknown"
}

// IsNumeric reports whether the class holds numbers.
func (c Class) IsNumeric() bool { return c == ClassInt || c == ClassDecimal || c == ClassFloat }

// Type is what the merge knows about one result column: how to compare,
// hash and compute with its values.
type Type struct {
	Class     Class
	Unsigned  bool
	Decimals  int        // digits after the point (DECIMAL, DOUBLE; NotFixedDecimals for none)
	Collation *Collation // ClassString; nil when the collation is not one this package knows
	// Enum is an ENUM or SET column: MariaDB orders it by the member's
	// position, which its text does not show.
	Enum bool
	// CollationID is the collation id the type was derived with (the
	// column definition's, or a resolved one), for messages.
	CollationID uint16
	// Unnamed is a string column with UNSIGNED_FLAG whose definition
	// names no data type the merge knows: MariaDB gives that flag to the
	// columns of its INET4, INET6 and UUID types, which order by their
	// binary form, and names the type only in the extended metadata,
	// which a data source connection may go without (a server or a hop in
	// between that does not send it). The text alone does not tell which
	// type it is, so the merge cannot order it.
	Unnamed bool
}

// TypeOf derives the Type of a result column from its definition.
//
// A MariaDB column definition does not carry a string column's own
// collation: it names the connection's collation (collation_connection,
// by default its charset's default collation), and sets BINARY_FLAG when
// the column's collation is a _bin one. collation, when not 0, is the
// column's real collation id (see the merge's collation lookup) and wins.
func TypeOf(f *mysql.Field, collation uint16) Type {
	t := Type{Unsigned: f.Flag&mysql.UNSIGNED_FLAG != 0, Decimals: int(f.Decimal)}
	switch f.Type {
	case mysql.MYSQL_TYPE_NULL:
		t.Class = ClassNull
	case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24,
		mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONGLONG, mysql.MYSQL_TYPE_YEAR:
		t.Class = ClassInt
	case mysql.MYSQL_TYPE_DECIMAL, mysql.MYSQL_TYPE_NEWDECIMAL:
		t.Class = ClassDecimal
	case mysql.MYSQL_TYPE_FLOAT, mysql.MYSQL_TYPE_DOUBLE:
		t.Class = ClassFloat
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_NEWDATE, mysql.MYSQL_TYPE_DATETIME,
		mysql.MYSQL_TYPE_DATETIME2, mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIMESTAMP2:
		t.Class = ClassDate
	case mysql.MYSQL_TYPE_TIME, mysql.MYSQL_TYPE_TIME2:
		t.Class = ClassTime
	case mysql.MYSQL_TYPE_BIT:
		t.Class = ClassBinary
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_STRING,
		mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB,
		mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_ENUM, mysql.MYSQL_TYPE_SET, mysql.MYSQL_TYPE_JSON:
		if c := pluginClass(f); c != 0 {
			t.Class, t.Unsigned = c, false
			break
		}
		t.Unnamed = f.Flag&mysql.UNSIGNED_FLAG != 0 && f.Charset != BinaryID
		t.Enum = f.Flag&(mysql.ENUM_FLAG|mysql.SET_FLAG) != 0 ||
			f.Type == mysql.MYSQL_TYPE_ENUM || f.Type == mysql.MYSQL_TYPE_SET
		if f.Charset == BinaryID && collation == 0 {
			t.Class = ClassBinary
			t.CollationID = BinaryID
			break
		}
		t.Class = ClassString
		id := collation
		if id == 0 {
			id = f.Charset
		}
		t.CollationID = id
		t.Collation = CollationByID(id)
		if collation == 0 && t.Collation != nil && f.Flag&mysql.BINARY_FLAG != 0 {
			t.Collation = t.Collation.BinCollation()
		}
		if collation != 0 && t.Collation != nil {
			// The values arrive in the connection's charset, which the
			// definition's collation id names.
			if cs := CharsetOfID(f.Charset); cs != "" {
				t.Collation = t.Collation.ForText(cs)
			} else {
				t.Collation = nil
			}
		}
		if t.Collation != nil && t.Collation.ID == BinaryID {
			t.Class = ClassBinary
		}
	default:
		t.Class = ClassOther
	}
	return t
}

// OrderError says why values of t cannot be ordered by the merge (ORDER
// BY, MIN, MAX), or nil when they can.
func (t Type) OrderError() error {
	if err := t.EqualError(); err != nil {
		return err
	}
	if t.Enum {
		return fmt.Errorf("an ENUM or SET value orders by its position in the column's definition, which the result does not carry")
	}
	return t.unnamedError()
}

// MinMaxError says why MIN and MAX of values of t cannot be merged, or
// nil when they can: OrderError, except that MariaDB compares ENUM and
// SET values by their text here.
func (t Type) MinMaxError() error {
	if err := t.EqualError(); err != nil {
		return err
	}
	return t.unnamedError()
}

func (t Type) unnamedError() error {
	if t.Unnamed {
		return fmt.Errorf("a string column with UNSIGNED_FLAG and no data type name: an INET4, INET6 or UUID value, which MariaDB orders by its binary form, from a data source connection without MariaDB's extended metadata")
	}
	return nil
}

// EqualError says why values of t cannot be compared for equality by the
// merge (GROUP BY, DISTINCT), or nil when they can.
func (t Type) EqualError() error {
	switch {
	case t.Class == ClassOther:
		return fmt.Errorf("values of this type (spatial or unknown) cannot be compared")
	case t.Class == ClassString && t.Collation == nil:
		return fmt.Errorf("collation id %d is not one the merge can compare with", t.CollationID)
	}
	return nil
}

// IsText reports a column of a string type that is not binary, whose
// values compare in a collation.
func IsText(f *mysql.Field) bool {
	switch f.Type {
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_STRING,
		mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB,
		mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_ENUM, mysql.MYSQL_TYPE_SET:
		return f.Charset != BinaryID
	}
	return false
}

// Compare returns -1, 0 or +1 as a sorts before, equal to or after b in
// ascending order; NULL (nil) sorts first.
func (t Type) Compare(a, b []byte) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	switch t.Class {
	case ClassInt:
		return compareIntText(a, b, t.Unsigned)
	case ClassDecimal:
		return CompareDecimalText(a, b)
	case ClassFloat:
		fa, _ := ParseDouble(a)
		fb, _ := ParseDouble(b)
		return cmp.Compare(fa, fb)
	case ClassTime:
		return cmp.Compare(timeMicros(a), timeMicros(b))
	case ClassString:
		if t.Collation != nil {
			return t.Collation.Compare(a, b)
		}
	case ClassInet4, ClassInet6, ClassUUID:
		return compareFixed(t.Class, a, b)
	}
	return bytes.Compare(a, b)
}

// compareIntText compares integers as MariaDB prints them (ZEROFILL
// columns with leading zeros too) without parsing into a machine word.
func compareIntText(a, b []byte, unsigned bool) int {
	if !unsigned {
		na := len(a) > 0 && a[0] == '-'
		nb := len(b) > 0 && b[0] == '-'
		if na != nb {
			if na {
				return -1
			}
			return 1
		}
		if na {
			return -compareIntText(a[1:], b[1:], true)
		}
	}
	for len(a) > 1 && a[0] == '0' {
		a = a[1:]
	}
	for len(b) > 1 && b[0] == '0' {
		b = b[1:]
	}
	if len(a) != len(b) {
		return cmp.Compare(len(a), len(b))
	}
	return bytes.Compare(a, b)
}

// timeMicros returns a TIME value ('-838:59:59.000000') in microseconds.
func timeMicros(s []byte) int64 {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	var parts [3]int64
	p := 0
	var frac, scale int64 = 0, 1
	inFrac := false
	for _, c := range s {
		switch {
		case c == ':' && p < 2 && !inFrac:
			p++
		case c == '.':
			inFrac = true
		case c >= '0' && c <= '9':
			if inFrac {
				if scale < 1000000 {
					frac = frac*10 + int64(c-'0')
					scale *= 10
				}
			} else {
				parts[p] = parts[p]*10 + int64(c-'0')
			}
		}
	}
	for scale < 1000000 {
		frac *= 10
		scale *= 10
	}
	v := ((parts[0]*60+parts[1])*60+parts[2])*1000000 + frac
	if neg {
		return -v
	}
	return v
}

// AppendKey appends a key for v to dst: within one column, two values are
// equal (as GROUP BY and DISTINCT see them) exactly when their keys are.
// NULL has a key of its own. Keys of several columns can be concatenated:
// each is self-delimiting.
func (t Type) AppendKey(dst, v []byte) []byte {
	if v == nil {
		return append(dst, 0)
	}
	dst = append(dst, 1)
	start := len(dst)
	switch t.Class {
	case ClassInt:
		dst = appendCanonicalInt(dst, v)
	case ClassDecimal:
		d, err := ParseDecimal(v)
		if err != nil {
			dst = append(dst, v...)
			break
		}
		dst = appendCanonicalDecimal(dst, &d)
	case ClassFloat:
		f, _ := ParseDouble(v)
		if f == 0 {
			f = 0 // -0 equals 0
		}
		dst = strconv.AppendUint(dst, math.Float64bits(f), 16)
	case ClassString:
		if t.Collation != nil {
			dst = t.Collation.AppendKey(dst, v)
			break
		}
		dst = append(dst, v...)
	case ClassTime:
		dst = strconv.AppendInt(dst, timeMicros(v), 10)
	case ClassInet4, ClassInet6, ClassUUID:
		dst = appendFixedKey(dst, t.Class, v)
	default:
		dst = append(dst, v...)
	}
	// Self-delimiting: the key's length after it.
	n := len(dst) - start
	return append(dst, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

func appendCanonicalInt(dst, v []byte) []byte {
	neg := len(v) > 0 && v[0] == '-'
	if neg || (len(v) > 0 && v[0] == '+') {
		v = v[1:]
	}
	for len(v) > 1 && v[0] == '0' {
		v = v[1:]
	}
	if neg && !(len(v) == 1 && v[0] == '0') {
		dst = append(dst, '-')
	}
	return append(dst, v...)
}

// appendCanonicalDecimal writes d without trailing fraction zeros, so
// 1.50 and 1.5 share a key.
func appendCanonicalDecimal(dst []byte, d *Decimal) []byte {
	s := d.String()
	if d.scale > 0 {
		for s[len(s)-1] == '0' {
			s = s[:len(s)-1]
		}
		if s[len(s)-1] == '.' {
			s = s[:len(s)-1]
		}
	}
	if s == "-0" {
		s = "0"
	}
	return append(dst, s...)
}
