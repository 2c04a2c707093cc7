package merge

import "context"

// Dialect is what the merge computes as the data sources' MariaDB does
// where MariaDB versions differ, so that a merged value is the one the
// data sources' own server would give, whichever patch release it is.
// The zero value is MariaDB 10.11.19's behaviour.
type Dialect struct {
	// NegativeZero: a DOUBLE negative zero prints as -0 (MariaDB 10.11.14
	// and earlier); otherwise it prints as 0.
	NegativeZero bool
	// ZeroQuotientOutOfRange: a negative DECIMAL without a fraction DIV a
	// BIGINT UNSIGNED, truncated to zero, is out of the UNSIGNED range
	// (1690; MariaDB 10.11.14 and earlier); otherwise it is 0.
	ZeroQuotientOutOfRange bool
}

// DialectSource tells the merge its Dialect.
type DialectSource interface {
	Dialect(ctx context.Context) Dialect
}
