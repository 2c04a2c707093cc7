package proxy

import (
	"fmt"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/merge"
)

// mysqlCode is the error number a client would see for err.
func mysqlCode(err error) uint16 {
	if err == nil {
		return 0
	}
	return mysqlError(err).Code
}

// TestMergeErrorNumbers holds the error boundary to the numbers package
// merge's tests assume for the merge's own errors (its mysqlCode helper),
// also when they arrive wrapped.
func TestMergeErrorNumbers(t *testing.T) {
	tests := []struct {
		name      string
		give      error
		wantCode  uint16
		wantState string
	}{
		{"not supported", &merge.NotSupportedError{What: "x"}, mysql.ER_NOT_SUPPORTED_YET, "42000"},
		{"scatter rows", &merge.ScatterRowsError{Limit: 10}, mysql.ER_TOO_BIG_SELECT, "42000"},
		{"memory", &merge.MemoryError{Budget: 10, What: "ORDER BY"}, mysql.ER_OUT_OF_SORTMEMORY, "HY001"},
		{"internal", &merge.InternalError{Msg: "x"}, mysql.ER_UNKNOWN_ERROR, "HY000"},
		{"wrapped memory", fmt.Errorf("route 1: %w", &merge.MemoryError{Budget: 10, What: "DISTINCT"}), mysql.ER_OUT_OF_SORTMEMORY, "HY001"},
		{"a backend's own error", mysql.NewError(mysql.ER_DATA_OUT_OF_RANGE, "out of range"), mysql.ER_DATA_OUT_OF_RANGE, "22003"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mysqlError(tt.give)
			if got.Code != tt.wantCode || got.State != tt.wantState {
				t.Errorf("mysqlError(%v) = %d/%s, want %d/%s", tt.give, got.Code, got.State, tt.wantCode, tt.wantState)
			}
			if want := tt.give.Error(); got.Error() != want && got.Message != want {
				t.Errorf("message %q, want the error's own %q", got.Message, want)
			}
		})
	}
}
