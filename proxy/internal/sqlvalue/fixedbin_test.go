package sqlvalue

import (
	"bytes"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// TestPluginTypesOrderLikeMariaDB checks the order and equality of UUID,
// INET6 and INET4 values against a live server: values chosen so that
// their text's order is not MariaDB's (UUIDs of every version and
// variant, IPv4-mapped and -compatible INET6 addresses), ORDER BY, MIN,
// MAX and COUNT(DISTINCT) on MariaDB and the same with Type.Compare and
// Type.AppendKey.
func TestPluginTypesOrderLikeMariaDB(t *testing.T) {
	db := mariadb(t)
	r := rand.New(rand.NewPCG(7, 11))
	// Bytes that sit on the boundaries MariaDB's UUID order depends on.
	edge := []byte{0x00, 0x01, 0x0f, 0x10, 0x5f, 0x60, 0x7f, 0x80, 0x81, 0xff}
	randomBytes := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			if r.IntN(2) == 0 {
				b[i] = edge[r.IntN(len(edge))]
			} else {
				b[i] = byte(r.IntN(256))
			}
		}
		return b
	}
	var uuids, inet6s, inet4s []string
	for range 400 {
		b := randomBytes(16)
		h := fmt.Sprintf("%x", b)
		uuids = append(uuids, h[:8]+"-"+h[8:12]+"-"+h[12:16]+"-"+h[16:20]+"-"+h[20:])
		a := netip.AddrFrom16([16]byte(b))
		switch r.IntN(4) {
		case 0: // IPv4-mapped
			a = netip.AddrFrom16([16]byte(append([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, b[:4]...)))
		case 1: // IPv4-compatible, or short
			a = netip.AddrFrom16([16]byte(append(make([]byte, 12), b[:4]...)))
		}
		inet6s = append(inet6s, a.StringExpanded())
		inet4s = append(inet4s, netip.AddrFrom4([4]byte(b[:4])).String())
	}
	inet6s = append(inet6s, "::", "::1", "2001:db8::2", "::ffff:1.2.3.4", "::1.2.3.4", "fe80::1", "ffff::")
	inet4s = append(inet4s, "0.0.0.0", "9.0.0.1", "10.0.0.1", "255.255.255.255", "100.1.1.1")

	tests := []struct {
		typ    string
		block  string
		values []string
	}{
		{"UUID", "\x00\x04uuid", uuids},
		{"INET6", "\x00\x05inet6", inet6s},
		{"INET4", "\x00\x05inet4", inet4s},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			typ := TypeOf(plugin(tt.block, 0), 0)
			exec(t, db, "DROP TABLE IF EXISTS plugin_src, plugin_vals",
				"CREATE TABLE plugin_src (s VARCHAR(64))",
				"CREATE TABLE plugin_vals (v "+tt.typ+")",
				"INSERT INTO plugin_src VALUES ('"+strings.Join(tt.values, "'), ('")+"')")
			// MariaDB decides which texts are values of the type (a UUID
			// of version 8 or more with variant 0 is not).
			valid := strings1(t, db, "SELECT s FROM plugin_src WHERE CAST(s AS "+tt.typ+") IS NOT NULL")
			exec(t, db, "INSERT INTO plugin_vals VALUES ('"+strings.Join(valid, "'), ('")+"')")
			want := strings1(t, db, "SELECT v FROM plugin_vals ORDER BY v")
			if len(want) < len(tt.values)/2 {
				t.Fatalf("MariaDB kept %d of %d values", len(want), len(tt.values))
			}
			if slices.IsSorted(want) {
				t.Fatalf("MariaDB's order is the text's: the values do not test what they should")
			}
			got := slices.Clone(want)
			r.Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
			slices.SortStableFunc(got, func(a, b string) int { return typ.Compare([]byte(a), []byte(b)) })
			if !slices.Equal(got, want) {
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("sorted by Compare, value %d is %s; MariaDB's ORDER BY has %s", i, got[i], want[i])
					}
				}
			}
			for i := 1; i < len(want); i++ {
				c := typ.Compare([]byte(want[i-1]), []byte(want[i]))
				if c > 0 || (c == 0) != (want[i-1] == want[i]) {
					t.Errorf("Compare(%s, %s) = %d, MariaDB orders them %s before %s", want[i-1], want[i], c, want[i-1], want[i])
				}
				ka, kb := typ.AppendKey(nil, []byte(want[i-1])), typ.AppendKey(nil, []byte(want[i]))
				if bytes.Equal(ka, kb) != (want[i-1] == want[i]) {
					t.Errorf("keys of %s and %s: equal %v", want[i-1], want[i], bytes.Equal(ka, kb))
				}
			}
			mm := strings1(t, db, "SELECT MIN(v) FROM plugin_vals UNION ALL SELECT MAX(v) FROM plugin_vals")
			if mm[0] != want[0] || mm[1] != want[len(want)-1] {
				t.Errorf("MIN and MAX on MariaDB %v; first and last by ORDER BY %s and %s", mm, want[0], want[len(want)-1])
			}
			distinct := map[string]bool{}
			for _, v := range want {
				distinct[string(typ.AppendKey(nil, []byte(v)))] = true
			}
			if n := strings1(t, db, "SELECT COUNT(DISTINCT v) FROM plugin_vals"); n[0] != fmt.Sprint(len(distinct)) {
				t.Errorf("COUNT(DISTINCT v) on MariaDB %s, %d distinct keys", n[0], len(distinct))
			}
		})
	}
}

func exec(t *testing.T, db *sql.DB, statements ...string) {
	t.Helper()
	for _, s := range statements {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%.200s: %v", s, err)
		}
	}
}

// strings1 returns the first column of sql's rows.
func strings1(t *testing.T, db *sql.DB, sql string) []string {
	t.Helper()
	rows, err := db.Query(sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestParseAddresses checks the INET6 and INET4 readers against
// net/netip on addresses of every shape netip prints and on text that is
// no address.
func TestParseAddresses(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for range 20000 {
		var b [16]byte
		for i := range b {
			if r.IntN(3) > 0 {
				b[i] = byte(r.IntN(256))
			}
		}
		if r.IntN(4) == 0 {
			copy(b[:12], []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff})
		}
		a := netip.AddrFrom16(b)
		for _, s := range []string{a.String(), a.StringExpanded(), "::" + netip.AddrFrom4([4]byte(b[12:])).String()} {
			var got [16]byte
			want, err := netip.ParseAddr(s)
			if ok := parseIPv6(&got, []byte(s)); ok != (err == nil) || ok && got != want.As16() {
				t.Fatalf("parseIPv6(%q) = %x, %v; netip: %v, %v", s, got, ok, want, err)
			}
		}
		v4 := netip.AddrFrom4([4]byte(b[:4]))
		var got [4]byte
		if !parseIPv4(got[:], []byte(v4.String())) || got != v4.As4() {
			t.Fatalf("parseIPv4(%q) = %v", v4, got)
		}
	}
	for _, s := range []string{"", ":", ":::", "1:::2", "1::2::3", "12345::", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8::", "::1.2.3", "::1.2.3.256", "1.2.3.4", "::g", "1:", ":1", "::ffff:1.2.3.4:5"} {
		var got [16]byte
		_, err := netip.ParseAddr(s)
		if ok := parseIPv6(&got, []byte(s)); ok && (err != nil || strings.Count(s, ":") == 0) {
			t.Errorf("parseIPv6(%q) accepted it (netip: %v)", s, err)
		}
	}
	for _, s := range []string{"", "1.2.3", "1.2.3.4.5", "256.0.0.0", "1..2.3", "1.2.3.4 ", "1234.0.0.0"} {
		var got [4]byte
		if parseIPv4(got[:], []byte(s)) {
			t.Errorf("parseIPv4(%q) accepted it", s)
		}
	}
}
