package merge

import (
	"context"
	"time"

	"github.com/shardflake/shardflake/router"
)

// CollationSource tells the merge the collation MariaDB compares each
// result column with. MariaDB's column definitions name the connection's
// collation (collation_connection), not the column's, so a
// utf8mb4_unicode_ci column, a latin1_swedish_ci column read over a utf8mb4
// connection, or MAX() of either, all look like utf8mb4_general_ci.
type CollationSource interface {
	// RouteCollations returns the collation id of each column of route's
	// result (0 for a column without one), as the data source defines
	// them.
	RouteCollations(ctx context.Context, route router.Route) ([]uint16, error)
}

// collationProbeTimeout bounds a collation probe that runs before a statement's
// routes (MergeCheck has no context of its own).
const collationProbeTimeout = 10 * time.Second

// needsCollations reports whether merging plan compares values, so that
// string columns need their real collations.
func needsCollations(spec *router.Merge) bool {
	if spec == nil {
		return false
	}
	return len(spec.Sort) > 0 || spec.Group != nil || spec.Having != nil || spec.Distinct || len(spec.OrderBy) > 0
}
