package router

import "testing"

func TestHasRoutingHint(t *testing.T) {
	tests := []struct {
		give string
		want bool
	}{
		{"SELECT 1", false},
		{"/* a comment */ SELECT 1", false},
		{"/* SHARDINGSPHERE_HINT: DATA_SOURCE_NAME=ds_1 */ SELECT 1", true},
		{"SELECT * FROM t /* SHARDINGSPHERE_HINT: t.SHARDING_DATABASE_VALUE=3 */", true},
		{"/* shardflake: slice=0/2 */ SELECT * FROM t", true},
		{"/* SHARDINGSPHERE_HINT: WRITE_ROUTE_ONLY=true */ SELECT 1", false},
		{"SELECT '/* SHARDINGSPHERE_HINT: DATA_SOURCE_NAME=ds_1 */'", false},
		{"/* SHARDINGSPHERE_HINT: NO_SUCH_KEY=1 */ SELECT 1", true},
	}
	for _, tt := range tests {
		if got := HasRoutingHint(tt.give); got != tt.want {
			t.Errorf("HasRoutingHint(%q) = %v, want %v", tt.give, got, tt.want)
		}
	}
}
