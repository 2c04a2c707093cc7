package idgen

import (
	"strings"
	"testing"
	"time"
)

// js53 is a SNOWFLAKE layout of 53 bits, every key exact in a double.
var js53 = map[string]string{PropDatacenterBits: "0", PropWorkerBits: "4", PropSequenceBits: "8", PropWorkerID: "3"}

func TestKeyRangeCheckColumn(t *testing.T) {
	snow, _ := LookupType("snowflake")
	seg, _ := LookupType("SEGMENT")
	v7, _ := LookupType("UUIDv7")
	tests := []struct {
		name     string
		r        KeyRange
		give     string
		wantErr  string
		wantWarn string
	}{
		{"snowflake bigint", snow.Range(nil), "bigint(20)", "", ""},
		{"snowflake bigint unsigned", snow.Range(nil), "BIGINT UNSIGNED", "", ""},
		{"snowflake int", snow.Range(nil), "int(11)", "holds at most 2147483647", ""},
		{"snowflake int unsigned", snow.Range(nil), "int(10) unsigned", "holds at most 4294967295", ""},
		{"snowflake decimal(20)", snow.Range(nil), "decimal(20,0)", "", ""},
		{"53-bit snowflake int", snow.Range(js53), "int(11)", "go up to 9007199254740991", ""},
		{"53-bit snowflake bigint", snow.Range(js53), "bigint", "", ""},
		{"snowflake decimal(10)", snow.Range(nil), "decimal(10,0)", "cannot hold", ""},
		{"snowflake char(36)", snow.Range(nil), "char(36)", "", ""},
		{"snowflake date", snow.Range(nil), "date", "cannot hold", ""},
		{"segment int warns", seg.Range(nil), "int(11)", "", "up to 2147483647"},
		{"segment bigint", seg.Range(nil), "bigint", "", ""},
		{"v7 char(36)", v7.Range(nil), "char(36)", "", ""},
		{"v7 varchar(64)", v7.Range(nil), "varchar(64)", "", ""},
		{"v7 char(32)", v7.Range(nil), "char(32)", "cannot hold the generator's UUID keys, written as CHAR(36)", ""},
		{"v7 bigint", v7.Range(nil), "bigint(20)", "cannot hold", ""},
		{"v7 binary(16)", v7.Range(map[string]string{PropColumnType: "BINARY(16)"}), "binary(16)", "", ""},
		{"v7 binary into char", v7.Range(map[string]string{PropColumnType: "BINARY(16)"}), "char(36)", "written as BINARY(16)", ""},
		{"v4 char(32)", v7.Range(map[string]string{PropColumnType: "CHAR(32)"}), "char(32)", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			warn, err := tt.r.CheckColumn(tt.give)
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("error %v, want %q", err, tt.wantErr)
			}
			if (warn == "") != (tt.wantWarn == "") || !strings.Contains(warn, tt.wantWarn) {
				t.Fatalf("warning %q, want %q", warn, tt.wantWarn)
			}
		})
	}
}

// A 53-bit layout's keys stay below 2^53 (JavaScript's Number.MAX_SAFE_INTEGER
// + 1) even at the end of its time range, and decode back.
func TestSnowflake53BitKeys(t *testing.T) {
	cfg, err := ParseProps(js53)
	if err != nil {
		t.Fatal(err)
	}
	l := cfg.Layout
	last, err := l.Compose(Parts{Millis: l.MaxMillis(), Worker: l.MaxWorker(), Sequence: l.MaxSequence()})
	if err != nil || last != 1<<53-1 {
		t.Fatalf("the last key of the 53-bit layout: %d, %v; want 2^53-1", last, err)
	}
	clock := newFakeClock(t0)
	g := newTestGen(t, cfg, clock)
	for range 3000 {
		id, err := g.Next()
		if err != nil {
			t.Fatal(err)
		}
		if id <= 0 || id >= 1<<53 {
			t.Fatalf("key %d outside (0, 2^53)", id)
		}
		if p, err := l.Decode(id); err != nil || p.Worker != 3 {
			t.Fatalf("key %d decodes to %+v, %v; want worker 3", id, p, err)
		}
		clock.Advance(time.Microsecond * 300)
	}
}
