package idgen

import (
	"bytes"
	"regexp"
	"sync"
	"testing"
	"time"
)

var uuidText = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestUUIDv4VersionVariantUnique(t *testing.T) {
	g, err := NewUUIDv4(nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[UUID]bool{}
	buf := make([]UUID, 1000)
	for round := 0; round < 20; round++ {
		if err := g.NextUUIDs(buf); err != nil {
			t.Fatal(err)
		}
		for _, u := range buf {
			if u.Version() != 4 || !u.Variant() {
				t.Fatalf("%s: version %d, variant ok %v; want 4, true", u, u.Version(), u.Variant())
			}
			if !uuidText.MatchString(u.String()) {
				t.Fatalf("%q is not 8-4-4-4-12 lower-case hex", u.String())
			}
			if seen[u] {
				t.Fatalf("duplicate %s", u)
			}
			seen[u] = true
		}
	}
}

func TestUUIDv7OrderedWithinGenerator(t *testing.T) {
	clk := newFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	g, err := NewUUIDv7(map[string]string{PropColumnType: "BINARY(16)"}, WithUUIDClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	if g.Encoding() != UUIDBinary16 {
		t.Fatalf("encoding %v, want BINARY(16)", g.Encoding())
	}
	var prev UUID
	var prevText string
	buf := make([]UUID, 500)
	for round := 0; round < 40; round++ {
		switch round % 4 {
		case 1:
			clk.Advance(time.Millisecond)
		case 2:
			clk.Advance(-50 * time.Millisecond) // a clock step back
		case 3:
			clk.Advance(3 * time.Second)
		}
		if err := g.NextUUIDs(buf); err != nil {
			t.Fatal(err)
		}
		for _, u := range buf {
			if u.Version() != 7 || !u.Variant() {
				t.Fatalf("%s: version %d, variant ok %v; want 7, true", u, u.Version(), u.Variant())
			}
			if bytes.Compare(u[:], prev[:]) <= 0 {
				t.Fatalf("round %d: %s not above the previous %s", round, u, prev)
			}
			if text := u.String(); text <= prevText {
				t.Fatalf("text %s not above the previous %s", text, prevText)
			}
			prev, prevText = u, u.String()
		}
	}
	if got := prev.Time(); got.Before(clk.Now().Add(-time.Second)) || got.After(clk.Now().Add(time.Second)) {
		t.Fatalf("last key's time %v, clock %v", got, clk.Now())
	}
}

func TestUUIDv7CounterOverflowBorrowsNextMillisecond(t *testing.T) {
	clk := newFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	g, _ := NewUUIDv7(nil, WithUUIDClock(clk))
	buf := make([]UUID, 1)
	g.NextUUIDs(buf)
	g.mu.Lock()
	g.hi, g.lo = hiMax, loMax-1 // as if 2^74 keys were issued this millisecond
	g.mu.Unlock()
	two := make([]UUID, 2)
	if err := g.NextUUIDs(two); err != nil {
		t.Fatal(err)
	}
	if two[0].Time() != buf[0].Time() || two[1].Time() != buf[0].Time().Add(time.Millisecond) {
		t.Fatalf("times %v %v, want %v then one millisecond later", two[0].Time(), two[1].Time(), buf[0].Time())
	}
	if bytes.Compare(two[1][:], two[0][:]) <= 0 {
		t.Fatalf("%s not above %s", two[1], two[0])
	}
}

func TestUUIDv7ConcurrentUnique(t *testing.T) {
	g, _ := NewUUIDv7(nil)
	var mu sync.Mutex
	seen := map[UUID]bool{}
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]UUID, 7)
			for i := 0; i < 500; i++ {
				if err := g.NextUUIDs(buf); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, u := range buf {
					if seen[u] {
						t.Errorf("duplicate %s", u)
					}
					seen[u] = true
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != 8*500*7 {
		t.Fatalf("%d keys, want %d", len(seen), 8*500*7)
	}
}

func TestUUIDProps(t *testing.T) {
	tests := []struct {
		give    map[string]string
		want    UUIDEncoding
		wantErr string
	}{
		{give: nil, want: UUIDChar36},
		{give: map[string]string{PropColumnType: "char(32)"}, want: UUIDChar32},
		{give: map[string]string{PropColumnType: "BINARY (16)"}, want: UUIDBinary16},
		{give: map[string]string{PropColumnType: "BIGINT"}, wantErr: `uuid prop column-type: "BIGINT": want CHAR(36), CHAR(32) or BINARY(16)`},
		{give: map[string]string{"worker-id": "1"}, wantErr: `uuid prop worker-id: unknown prop; known: column-type`},
	}
	for _, tt := range tests {
		got, err := parseUUIDProps(tt.give)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("%v: error %v, want %s", tt.give, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%v: %v, %v; want %v", tt.give, got, err, tt.want)
		}
	}
	var u UUID
	for i := range u {
		u[i] = byte(i * 17)
	}
	if got := UUIDChar32.Text(u); got != "00112233445566778899aabbccddeeff" {
		t.Errorf("CHAR(32) text %s", got)
	}
	if got := UUIDChar36.Text(u); got != "00112233-4455-6677-8899-aabbccddeeff" {
		t.Errorf("CHAR(36) text %s", got)
	}
	if got := UUIDBinary16.Text(u); got != string(u[:]) {
		t.Errorf("BINARY(16) text %x", got)
	}
}
