package sqlvalue

import (
	"bytes"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// MariaDB's INET4, INET6 and UUID types (its data type plugins) keep a
// value in a few bytes and print it as text; they compare by the bytes,
// which the text's order does not follow (as INET6 '::1' <
// '::ffff:1.2.3.4' < '2001:db8::', which the text puts first). A column
// definition calls them strings (MYSQL_TYPE_STRING with UNSIGNED_FLAG)
// and names the type only in MariaDB's extended metadata, which the
// proxy keeps in Field.Data (see wire.ParseColumn): a block of entries,
// each a byte (0: the data type's name, 1: its format's) and a
// length-encoded string.

// pluginClass returns the class of f's values when f's extended metadata
// names one of the types above, else 0.
func pluginClass(f *mysql.Field) Class {
	switch string(dataTypeName(f.Data)) {
	case "inet4":
		return ClassInet4
	case "inet6":
		return ClassInet6
	case "uuid":
		return ClassUUID
	}
	return 0
}

// dataTypeName returns the data type name in extended metadata block b,
// or nil.
func dataTypeName(b []byte) []byte {
	for len(b) >= 2 {
		kind, n := b[0], int(b[1])
		b = b[2:]
		switch {
		case n == 0xfc && len(b) >= 2:
			n, b = int(b[0])|int(b[1])<<8, b[2:]
		case n >= 0xfb:
			return nil // longer than a name gets, or malformed
		}
		if n > len(b) {
			return nil
		}
		if kind == 0 {
			return b[:n]
		}
		b = b[n:]
	}
	return nil
}

// fixedKey is a value's bytes in the order MariaDB compares them.
type fixedKey struct {
	b [16]byte
	n int
}

// keyOf reads text v of a class c value into its key; ok is false when v
// is not text MariaDB prints for the class. It allocates nothing: the
// merge compares a column's values many times over.
func keyOf(c Class, v []byte) (k fixedKey, ok bool) {
	switch c {
	case ClassInet4:
		k.n = 4
		return k, parseIPv4(k.b[:4], v)
	case ClassInet6:
		k.n = 16
		return k, parseIPv6(&k.b, v)
	case ClassUUID:
		return uuidKey(v)
	}
	return k, false
}

// parseIPv4 reads dotted-quad v ("192.0.2.1") into dst's 4 bytes.
func parseIPv4(dst []byte, v []byte) bool {
	n := 0
	for i := 0; i < 4; i++ {
		if i > 0 {
			if n >= len(v) || v[n] != '.' {
				return false
			}
			n++
		}
		x, digits := 0, 0
		for n < len(v) && v[n] >= '0' && v[n] <= '9' && digits < 3 {
			x = x*10 + int(v[n]-'0')
			n++
			digits++
		}
		if digits == 0 || x > 255 {
			return false
		}
		dst[i] = byte(x)
	}
	return n == len(v)
}

// parseIPv6 reads v as MariaDB prints an INET6 value (RFC 5952's text,
// "::" for the longest run of zero groups, the last 32 bits as a dotted
// quad for an IPv4-mapped or -compatible address) into dst.
func parseIPv6(dst *[16]byte, v []byte) bool {
	*dst = [16]byte{}
	gap := -1 // where "::" stands, in bytes of dst
	n := 0    // bytes of dst written
	if len(v) >= 2 && v[0] == ':' && v[1] == ':' {
		gap, v = 0, v[2:]
		if len(v) == 0 {
			return true
		}
	}
	for {
		if n > 14 {
			return false
		}
		// A dotted quad ends the address.
		if bytes.IndexByte(v, '.') >= 0 && bytes.IndexByte(v, ':') < 0 {
			if n > 12 || !parseIPv4(dst[n:n+4], v) {
				return false
			}
			n += 4
			break
		}
		x, digits := 0, 0
		for digits < len(v) && digits < 4 {
			d, ok := hexDigit(v[digits])
			if !ok {
				break
			}
			x = x<<4 | int(d)
			digits++
		}
		if digits == 0 {
			return false
		}
		dst[n], dst[n+1] = byte(x>>8), byte(x)
		n += 2
		v = v[digits:]
		if len(v) == 0 {
			break
		}
		if v[0] != ':' || len(v) == 1 {
			return false
		}
		v = v[1:]
		if v[0] == ':' {
			if gap >= 0 {
				return false
			}
			gap, v = n, v[1:]
			if len(v) == 0 {
				break
			}
		}
	}
	switch {
	case gap < 0:
		return n == 16
	case n == 16:
		return false // "::" must stand for at least one group
	}
	// Move what follows the gap to the end.
	tail := n - gap
	copy(dst[16-tail:], dst[gap:n])
	for i := gap; i < 16-tail; i++ {
		dst[i] = 0
	}
	return true
}

// uuidKey reads a UUID's 32 hex digits (and hyphens) into its 16 bytes in
// MariaDB's record order, which is how MariaDB 10.11 compares UUIDs
// (checked against the server in TestPluginTypesOrderLikeMariaDB): when
// the value looks like an RFC 4122 UUID of version 1 to 5 (byte 6 from
// 0x01 to 0x5f, the variant bit of byte 8 set), its segments compare in
// reverse, node first and time-low last; any other value compares by its
// bytes as they are.
func uuidKey(v []byte) (k fixedKey, ok bool) {
	var m [16]byte
	n := 0
	for i := 0; i < len(v); i++ {
		if v[i] == '-' {
			continue
		}
		if n == 32 {
			return k, false
		}
		d, ok := hexDigit(v[i])
		if !ok {
			return k, false
		}
		m[n/2] = m[n/2]<<4 | d
		n++
	}
	if n != 32 {
		return k, false
	}
	k.n = 16
	if m[6] < 0x01 || m[6] > 0x5f || m[8]&0x80 == 0 {
		k.b = m
		return k, true
	}
	copy(k.b[0:6], m[10:16]) // node
	copy(k.b[6:8], m[8:10])  // variant and clock sequence
	copy(k.b[8:10], m[6:8])  // version and time-high
	copy(k.b[10:12], m[4:6]) // time-mid
	copy(k.b[12:16], m[0:4]) // time-low
	return k, true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// compareFixed compares two non-NULL values of class c; text that is not
// a value of the class (never sent by MariaDB) sorts by its bytes, after
// every value.
func compareFixed(c Class, a, b []byte) int {
	ka, oka := keyOf(c, a)
	kb, okb := keyOf(c, b)
	switch {
	case oka && okb:
		return bytes.Compare(ka.b[:ka.n], kb.b[:kb.n])
	case oka:
		return -1
	case okb:
		return 1
	}
	return bytes.Compare(a, b)
}

// appendFixedKey appends v's key: 0 and its bytes, or for text that is
// not a value of class c, 1 and the text.
func appendFixedKey(dst []byte, c Class, v []byte) []byte {
	if k, ok := keyOf(c, v); ok {
		dst = append(dst, 0)
		return append(dst, k.b[:k.n]...)
	}
	dst = append(dst, 1)
	return append(dst, v...)
}
