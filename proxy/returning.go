package proxy

import (
	"context"
	"errors"
	"io"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/router"
)

// INSERT ... RETURNING (MariaDB 10.5+), which ORMs send once the server
// says it is MariaDB (GORM, Django) to learn the keys of the rows they
// insert. The SQL parser does not know the clause: the session cuts it off
// (sqlarg.SplitReturning), plans the INSERT, and appends it to every
// route's SQL. Each route then returns the rows it inserted; the routes
// of a multi-row INSERT split over data nodes run one after the other and
// their rows are given back in the client's row order (Route.Rows), so
// the n-th row returned is the n-th row of the statement, as on MariaDB,
// generated keys included.

// returningPlan is a planned INSERT whose routes end in a RETURNING
// clause.
type returningPlan struct {
	PreparedPlan
	list string
}

// withReturning wraps pp for a RETURNING list ("" returns pp itself);
// only INSERT and REPLACE take one.
func withReturning(pp PreparedPlan, list string) (PreparedPlan, error) {
	if list == "" {
		return pp, nil
	}
	if pp.Kind() != router.KindInsert {
		return nil, &NotSupportedError{What: "RETURNING on statements other than INSERT and REPLACE"}
	}
	return returningPlan{PreparedPlan: pp, list: list}, nil
}

// Bind binds the INSERT and returns a copy of its plan whose routes end
// in the RETURNING clause (the INSERT's plan may be shared).
func (p returningPlan) Bind(args []any) (*router.Plan, error) {
	plan, err := p.PreparedPlan.Bind(args)
	if err != nil {
		return nil, err
	}
	out := *plan
	out.Returning = p.list
	out.Routes = make([]router.Route, len(plan.Routes))
	for i, r := range plan.Routes {
		r.SQL += " RETURNING " + p.list
		out.Routes[i] = r
	}
	return &out, nil
}

// runRoutes executes plan on conns: runPlanMode, or for an INSERT ...
// RETURNING each route in turn, its rows buffered and put back in the
// client's row order.
func (s *Session) runRoutes(ctx context.Context, plan *router.Plan, conns connSource, mode backendMode, join *joinScope) (result, error) {
	if plan.Returning == "" {
		return runPlanMode(ctx, plan, conns, s.srv.merger, s.srv.rules.Server.MergeMemoryBytes, s.srv.obs, mode, join)
	}
	var cols []*mysql.Field
	perRoute := make([][]Row, len(plan.Routes))
	total := 0
	for i := range plan.Routes {
		one := *plan
		one.Routes = plan.Routes[i : i+1]
		one.Type = router.RouteSingle
		res, err := runPlanMode(ctx, &one, conns, s.srv.merger, 0, s.srv.obs, backendText, nil)
		if err != nil {
			return result{}, err
		}
		if res.rows == nil {
			return result{}, &InternalError{Msg: "INSERT ... RETURNING returned no rows"}
		}
		if cols == nil {
			cols = res.rows.Columns()
		}
		rows, err := drainClone(res.rows)
		if err != nil {
			return result{}, err
		}
		perRoute[i] = rows
		total += len(rows)
	}
	return result{rows: newMemStream(cols, clientOrder(plan, perRoute, total))}, nil
}

// clientOrder puts the routes' RETURNING rows in the order of the
// client's VALUES. When a route returned other than one row per row it
// was given (INSERT IGNORE skipping duplicates), the routes' rows are
// given back in route order.
func clientOrder(plan *router.Plan, perRoute [][]Row, total int) []Row {
	ordered := len(plan.Routes) > 1
	seen := make([]bool, total)
	for i, r := range plan.Routes {
		if !ordered || len(r.Rows) != len(perRoute[i]) {
			ordered = false
			break
		}
		for _, pos := range r.Rows {
			if pos < 0 || pos >= total || seen[pos] {
				ordered = false
				break
			}
			seen[pos] = true
		}
	}
	out := make([]Row, total)
	if !ordered {
		out = out[:0]
		for _, rows := range perRoute {
			out = append(out, rows...)
		}
		return out
	}
	for i, r := range plan.Routes {
		for k, pos := range r.Rows {
			out[pos] = perRoute[i][k]
		}
	}
	return out
}

// drainClone reads a stream to its end into rows that stay valid.
func drainClone(rs RowStream) ([]Row, error) {
	defer rs.Close()
	var out []Row
	for {
		row, err := rs.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, row.Clone())
	}
}
