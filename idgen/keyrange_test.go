package idgen

import (
	"strings"
	"testing"
)

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
