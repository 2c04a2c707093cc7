package proxy

import (
	"strings"
	"testing"
)

// TestBadTableMessage: the 1051 message cuts the list of tables as
// MariaDB 10.11 does (its answers to the same DROPs): at most 100 bytes,
// longer lists cut to 97 bytes on a character boundary and "...".
func TestBadTableMessage(t *testing.T) {
	a := "sharding_db." + strings.Repeat("a", 40)
	tests := []struct {
		give []string
		want string
	}{
		{[]string{"sharding_db.t_gone", "sharding_db.t_other"}, "Unknown table 'sharding_db.t_gone,sharding_db.t_other'"},
		{[]string{a, "sharding_db." + strings.Repeat("b", 35)}, "Unknown table '" + a + ",sharding_db." + strings.Repeat("b", 35) + "'"},
		{[]string{a, "sharding_db." + strings.Repeat("b", 36)}, "Unknown table '" + a + ",sharding_db." + strings.Repeat("b", 32) + "...'"},
		{[]string{a, "sharding_db." + strings.Repeat("b", 30) + "ééééé"}, "Unknown table '" + a + ",sharding_db." + strings.Repeat("b", 30) + "é...'"},
		{[]string{a, "sharding_db." + strings.Repeat("b", 31) + "ééééé"}, "Unknown table '" + a + ",sharding_db." + strings.Repeat("b", 31) + "...'"},
	}
	for _, tt := range tests {
		if got := badTableMessage(tt.give); got != tt.want {
			t.Errorf("badTableMessage(%q)\n got %s\nwant %s", tt.give, got, tt.want)
		}
	}
}
