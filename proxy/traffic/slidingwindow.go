package traffic

import (
	"time"

	"github.com/shardflake/shardflake/config"
)

// newSlidingWindow counts permits over the last window, kept as
// subWindows buckets (Sentinel's LeapArray): a permit counts until its
// bucket leaves the window, so any window's length holds at most the
// limit plus what one bucket's length at the window's edge lets in,
// instead of the fixed window's twice the limit.
func newSlidingWindow(l config.TrafficLimit, c Clock) Limiter {
	size := max(l.Window/time.Duration(l.SubWindows), 1)
	return &windowCounter{clock: c, size: size, span: int64(l.SubWindows), limit: l.Permits}
}
