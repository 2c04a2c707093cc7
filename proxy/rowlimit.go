package proxy

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

// runRowLimit runs an UPDATE or DELETE whose LIMIT is of the whole
// statement over several data nodes (plan.RowLimit): route after route,
// in data-node order. Without ORDER BY (MariaDB then takes any rows up to
// the count) each route gets LIMIT the count less the rows the routes
// before it matched, until none are left. With ORDER BY, plan.RowLimit.Order
// reads and locks each route's first rows in that order first; merged,
// they say how many of the statement's first rows each route holds, and
// each route takes that many (ORDER BY ... LIMIT its share). conns is the
// statement's atomic write (stmtGuard), so a route's error undoes the
// routes before it. A DELETE ... RETURNING gives back the rows of every
// route it ran, in that order. ORDER BY without LIMIT (RowLimit.Unbounded)
// runs the same way with a count no table reaches.
func (s *Session) runRowLimit(ctx context.Context, plan *router.Plan, conns connSource, mode backendMode) (result, error) {
	conns = sharedConn{conns}
	full := plan.RowLimit.Count
	limit := " LIMIT " + strconv.FormatInt(full, 10)
	var shares []int64
	var sequence []int // the route of each of the statement's rows, in its order
	// ORDER BY without LIMIT takes every row, each route in its order:
	// the order over all routes is read only for the rows a RETURNING
	// gives back.
	if plan.RowLimit.Order != nil && (!plan.RowLimit.Unbounded || plan.Returning != "") {
		var err error
		if sequence, err = s.rowSequence(ctx, plan.RowLimit.Order, conns, len(plan.Routes)); err != nil {
			return result{}, err
		}
		shares = make([]int64, len(plan.Routes))
		for _, i := range sequence {
			shares[i]++
		}
	}
	left := full
	ran := *plan
	ran.RowLimit = nil
	var (
		oks     []wire.OK
		cols    []*mysql.Field
		rows    []Row
		byRoute = make([][]Row, len(plan.Routes))
	)
	for i, r := range plan.Routes {
		n := left
		if shares != nil {
			switch {
			case shares[i] > 0:
				n = shares[i]
			case i == 0 && len(sequence) == 0:
				// Nothing to take: the first route runs with the whole
				// LIMIT and matches nothing, for the answer's form (an
				// UPDATE's "Rows matched: 0", which LIMIT 0 does not say).
			default:
				continue
			}
		} else if i > 0 && n == 0 {
			// Without ORDER BY the first route always runs, for the
			// answer's form; the others while rows are left to take.
			break
		}
		tail := returningTail(plan, r)
		if !strings.HasSuffix(r.SQL, limit+tail) {
			return result{}, &InternalError{Msg: "a route of an UPDATE or DELETE with LIMIT does not end with its LIMIT"}
		}
		if n != full {
			r.SQL = r.SQL[:len(r.SQL)-len(limit+tail)] + " LIMIT " + strconv.FormatInt(n, 10) + tail
		}
		one := ran
		one.Type = router.RouteSingle
		one.Routes = []router.Route{r}
		res, err := s.runRoutes(ctx, &one, conns, mode, nil)
		if err != nil {
			return result{}, err
		}
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
		byRoute[i] = got
		left -= min(left, int64(len(got)))
	}
	if plan.Returning != "" {
		if sequence != nil && len(rows) == len(sequence) {
			// In the statement's order, as MariaDB returns the rows it
			// deleted: each route's rows come in that order, and the
			// sequence says whose row is next.
			rows = rows[:0]
			for _, i := range sequence {
				rows = append(rows, byRoute[i][0])
				byRoute[i] = byRoute[i][1:]
			}
		}
		return result{rows: newMemStream(cols, rows)}, nil
	}
	ok, _ := combineOK(&ran, oks)
	return result{ok: ok}, nil
}

// rowSequence runs order, a RowLimit.Order SELECT ... FOR UPDATE on conns (the
// statement's atomic write), and returns, for each merged row, the route
// of the n that holds it: the statement's first rows in its order.
func (s *Session) rowSequence(ctx context.Context, order *router.Plan, conns connSource, n int) ([]int, error) {
	rows, err := s.readRows(ctx, order, conns, "the ordered read of an UPDATE or DELETE with ORDER BY and LIMIT")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	sequence := []int{}
	for {
		row, err := rows.Next()
		if errors.Is(err, io.EOF) {
			return sequence, nil
		}
		if err != nil {
			return nil, err
		}
		i, err := strconv.Atoi(string(row[len(row)-1]))
		if err != nil || i < 0 || i >= n {
			return nil, &InternalError{Msg: "the ordered read of an UPDATE or DELETE with ORDER BY and LIMIT names no route"}
		}
		sequence = append(sequence, i)
	}
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

// sharedConn hands out, for each data source, only the first connection
// its source gives (a stmtGuard holds one per route, each in a
// transaction of its own): the ordered read and the writes of an UPDATE
// or DELETE with LIMIT then share one transaction per data source, and
// each write finds the rows its read locked instead of waiting for them.
type sharedConn struct{ connSource }

func (c sharedConn) acquire(ctx context.Context, ds string, n int) ([]*backendConn, error) {
	bcs, err := c.connSource.acquire(ctx, ds, 1)
	if len(bcs) > 1 {
		bcs = bcs[:1]
	}
	return bcs, err
}

func (c sharedConn) statusSink() *statusSink { return sinkOf(c.connSource) }
