package traffic

import (
	"github.com/shardflake/shardflake/config"
)

// newFixedWindow counts permits per period (window), as MariaDB's
// MAX_QUERIES_PER_HOUR: the count starts again at each period's start, so
// up to twice the limit can pass within one period's length around a
// boundary. Periods are aligned to the Unix epoch.
func newFixedWindow(l config.TrafficLimit, c Clock) Limiter {
	return &windowCounter{clock: c, size: l.Window, span: 1, limit: l.Permits}
}
