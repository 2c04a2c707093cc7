package proxy

import (
	"context"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

// runRowLimit runs an UPDATE or DELETE whose LIMIT is of the whole
// statement over several data nodes (plan.RowLimit): route after route,
// in data-node order, each with LIMIT the count less the rows the routes
// before it matched, until none are left. MariaDB's LIMIT without ORDER
// BY takes any rows up to the count; so does this, one data node's rows
// after another's. conns is the statement's atomic write (stmtGuard), so
// a route's error undoes the routes before it. A DELETE ... RETURNING
// gives back the rows of every route it ran, in that order.
func (s *Session) runRowLimit(ctx context.Context, plan *router.Plan, conns connSource, mode backendMode) (result, error) {
	full := *plan.RowLimit
	limit := " LIMIT " + strconv.FormatInt(full, 10)
	left := full
	ran := *plan
	ran.RowLimit = nil
	ran.Routes = plan.Routes[:0:0]
	var (
		oks  []wire.OK
		cols []*mysql.Field
		rows []Row
	)
	for i, r := range plan.Routes {
		if i > 0 && left == 0 {
			break
		}
		tail := returningTail(plan, r)
		if !strings.HasSuffix(r.SQL, limit+tail) {
			return result{}, &InternalError{Msg: "a route of an UPDATE or DELETE with LIMIT does not end with its LIMIT"}
		}
		if left != full {
			r.SQL = r.SQL[:len(r.SQL)-len(limit+tail)] + " LIMIT " + strconv.FormatInt(left, 10) + tail
		}
		one := ran
		one.Type = router.RouteSingle
		one.Routes = []router.Route{r}
		res, err := s.runRoutes(ctx, &one, conns, mode, nil)
		if err != nil {
			return result{}, err
		}
		ran.Routes = plan.Routes[:i+1]
		if res.rows == nil {
			oks = append(oks, res.ok)
			left -= min(left, matchedRows(plan.Kind, res.ok))
			continue
		}
		// DELETE ... RETURNING: a row for each row deleted.
		if cols == nil {
			cols = res.rows.Columns()
		}
		got, err := drainClone(res.rows)
		if err != nil {
			return result{}, err
		}
		rows = append(rows, got...)
		left -= min(left, int64(len(got)))
	}
	if plan.Returning != "" {
		return result{rows: newMemStream(cols, rows)}, nil
	}
	ok, _ := combineOK(&ran, oks)
	return result{ok: ok}, nil
}

// matchedRows is the number of rows a route's UPDATE or DELETE counted
// against its LIMIT: an UPDATE's rows matched (its info string; affected
// rows count only the rows it changed), a DELETE's affected rows.
func matchedRows(kind router.StatementKind, ok wire.OK) int64 {
	if kind == router.KindUpdate {
		if c, parsed := parseInfo(ok.Info); parsed {
			for i, l := range c.labels {
				if l == "Rows matched" {
					return int64(c.values[i])
				}
			}
		}
	}
	return int64(ok.AffectedRows)
}
