package merge

import (
	"math"
	"testing"

	"github.com/shardflake/shardflake/proxy/internal/sqlvalue"
)

// TestDialectDifferences computes what MariaDB versions compute
// differently, under each Dialect.
func TestDialectDifferences(t *testing.T) {
	dec := func(s string) sqlvalue.Decimal {
		d, err := sqlvalue.ParseDecimal([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	tests := []struct {
		a, b           string
		zeroOutOfRange bool
		wantErr        bool
	}{
		{"-1", "5", true, true},    // 10.11.14: a negative zero quotient is out of range
		{"-1", "5", false, false},  // 10.11.19: 0
		{"-1.0", "5", true, false}, // a fraction: 0 in both
		{"-7", "3", false, true},   // -2 is out of range in both
	}
	for _, tt := range tests {
		v, err := intDivDecimal(dec(tt.a), dec(tt.b), true, tt.zeroOutOfRange)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s DIV %s (zeroOutOfRange %v) = %v, %v; want error %v", tt.a, tt.b, tt.zeroOutOfRange, v, err, tt.wantErr)
		}
	}
	// A DOUBLE is divided by its shortest digits: -1e0 is an integral -1.
	if _, err := intDivDecimal(exactOf(value{k: vFloat, f: -1}), dec("5"), true, true); err == nil {
		t.Error("-1e0 DIV 5 under zeroOutOfRange: no error")
	}
	if f := signedZero(math.Copysign(0, -1), false); math.Signbit(f) {
		t.Error("signedZero(-0, false) kept the sign")
	}
	if f := signedZero(math.Copysign(0, -1), true); !math.Signbit(f) {
		t.Error("signedZero(-0, true) lost the sign")
	}
	if f := signedZero(-1.5, false); f != -1.5 {
		t.Errorf("signedZero(-1.5) = %v", f)
	}
}
