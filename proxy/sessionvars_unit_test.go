package proxy

import "testing"

func TestOneShotTransactionText(t *testing.T) {
	tests := []struct {
		give string
		want bool
	}{
		{"SET TRANSACTION READ ONLY", true},
		{"  set transaction read only", true},
		{"/* orm */ SET TRANSACTION READ ONLY", true},
		{"-- x\nSET TRANSACTION READ ONLY", true},
		{"/*!40101 SET TRANSACTION READ ONLY */", true},
		{"SET SESSION TRANSACTION READ ONLY", false},
		{"SET LOCAL TRANSACTION READ ONLY", false},
		{"/* SET TRANSACTION */ SET SESSION TRANSACTION READ ONLY", false},
		{"SET @@SESSION.tx_read_only = 1", false},
	}
	for _, tt := range tests {
		if got := oneShotTransaction.MatchString(tt.give); got != tt.want {
			t.Errorf("oneShotTransaction(%q) = %v, want %v", tt.give, got, tt.want)
		}
	}
}
