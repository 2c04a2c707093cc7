package proxy

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestGTIDPosCovers(t *testing.T) {
	tests := []struct {
		have, want string
		covers     bool
	}{
		{"0-1-42", "0-1-42", true},
		{"0-1-43", "0-1-42", true},
		{"0-1-41", "0-1-42", false},
		{"0-1-50,1-2-7", "1-2-7", true},
		{"0-1-50", "0-1-10,1-2-7", false}, // domain 1 never seen
		{"0-3-42", "0-1-42", true},        // a domain's sequence counts, not its server
		{"0-1-1", "", true},
		{"", "0-1-1", false},
	}
	for _, tt := range tests {
		have, err1 := parseGTIDPos(tt.have)
		want, err2 := parseGTIDPos(tt.want)
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		if got := have.covers(want); got != tt.covers {
			t.Errorf("%q covers %q = %v, want %v", tt.have, tt.want, got, tt.covers)
		}
	}
	p, _ := parseGTIDPos(" 1-2-7, 0-1-42 ")
	if p.String() != "0-1-42,1-2-7" {
		t.Errorf("String = %q", p.String())
	}
	for _, bad := range []string{"0-1", "a-1-2", "0-1-2-3", "0-1-x"} {
		if _, err := parseGTIDPos(bad); err == nil {
			t.Errorf("parseGTIDPos(%q) accepted", bad)
		}
	}
}

// TestCausalUsers: a user's write is waited for by the user's later
// reads for the window, resolved once per write.
func TestCausalUsers(t *testing.T) {
	cu := newCausalUsers()
	resolves := 0
	resolve := func(context.Context) (gtidPos, error) {
		resolves++
		return parseGTIDPos("0-1-" + string(rune('0'+resolves)))
	}
	ctx := context.Background()
	if p, _ := cu.position(ctx, "app", "g", time.Minute, resolve); p != nil || resolves != 0 {
		t.Fatalf("before any write: %v, %d resolves", p, resolves)
	}
	cu.wrote("app", "g")
	p1, _ := cu.position(ctx, "app", "g", time.Minute, resolve)
	p2, _ := cu.position(ctx, "app", "g", time.Minute, resolve)
	if p1.String() != "0-1-1" || p2.String() != "0-1-1" || resolves != 1 {
		t.Errorf("after a write: %v %v, %d resolves; want one resolve", p1, p2, resolves)
	}
	if p, _ := cu.position(ctx, "other", "g", time.Minute, resolve); p != nil {
		t.Errorf("another user waits for app's write: %v", p)
	}
	cu.wrote("app", "g")
	if p, _ := cu.position(ctx, "app", "g", time.Minute, resolve); p.String() != "0-1-2" {
		t.Errorf("after a second write: %v", p)
	}
	if p, _ := cu.position(ctx, "app", "g", 0, resolve); p != nil {
		t.Errorf("past the window: %v", p)
	}
}

// BenchmarkCausalCheck is the proxy's own cost of read-your-writes per
// replica read when a replica's polled position already covers the
// session's: the position comparison (the round trip of MASTER_GTID_WAIT,
// when needed, is the backend's; TestReadwriteSplittingReplication
// measures it end to end).
func BenchmarkCausalCheck(b *testing.B) {
	have, _ := parseGTIDPos("0-1-1000,1-2-500,2-3-42")
	want, _ := parseGTIDPos("0-1-999,1-2-500")
	b.ReportAllocs()
	for b.Loop() {
		if !have.covers(want) {
			b.Fatal("not covered")
		}
	}
}
