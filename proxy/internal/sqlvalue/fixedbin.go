package sqlvalue

import (
	"bytes"
	"net/netip"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// MariaDB's INET4, INET6 and UUID types (its data type plugins) keep a
// value in a few bytes and print it as text; they compare by the bytes,
// which the text's order does not follow ('::1' < '2001:db8::' <
// '::ffff:1.2.3.4' as INET6). A column definition calls them strings
// (MYSQL_TYPE_STRING with UNSIGNED_FLAG) and names the type only in
// MariaDB's extended metadata, which the proxy keeps in Field.Data (see
// wire.ParseColumn): a block of entries, each a byte (0: the data type's
// name, 1: its format's) and a length-encoded string.

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
// is not text MariaDB prints for the class.
func keyOf(c Class, v []byte) (k fixedKey, ok bool) {
	switch c {
	case ClassInet4, ClassInet6:
		a, err := netip.ParseAddr(string(v))
		if err != nil || a.Zone() != "" {
			return k, false
		}
		if c == ClassInet4 {
			if !a.Is4() {
				return k, false
			}
			b4 := a.As4()
			k.n = copy(k.b[:], b4[:])
			return k, true
		}
		if !a.Is6() {
			return k, false
		}
		k.b, k.n = a.As16(), 16
		return k, true
	case ClassUUID:
		return uuidKey(v)
	}
	return k, false
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
