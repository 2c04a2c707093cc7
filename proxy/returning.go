package proxy

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/internal/sqllex"
	"github.com/shardflake/shardflake/router"
)

// INSERT ... RETURNING (MariaDB 10.5+), which ORMs send once the server
// says it is MariaDB (GORM, Django) to learn the keys of the rows they
// insert, and DELETE ... RETURNING (MariaDB 10.0.5+; bun's Returning on a
// delete). The SQL parser does not know the clause: the session cuts it
// off (sqlarg.SplitReturning), plans the INSERT or DELETE, and appends it
// to every route's SQL. Each route then returns the rows it inserted or
// deleted; the routes run one after the other. The rows of a multi-row
// INSERT split over data nodes are given back in the client's row order
// (Route.Rows), so the n-th row returned is the n-th row of the statement,
// as on MariaDB, generated keys included; a DELETE's come in data-node
// order, as a SELECT's without ORDER BY. A broadcast table's copies each
// return the same rows: the client gets the first copy's, as its OK counts
// the first copy's rows (combineOK).

// returningPlan is a planned INSERT or DELETE whose routes end in a
// RETURNING clause.
type returningPlan struct {
	PreparedPlan
	list string
}

// withReturning wraps pp for a RETURNING list ("" returns pp itself);
// only INSERT, REPLACE and DELETE take one.
func withReturning(pp PreparedPlan, list string) (PreparedPlan, error) {
	if list == "" {
		return pp, nil
	}
	if k := pp.Kind(); k != router.KindInsert && k != router.KindDelete {
		return nil, &NotSupportedError{What: "RETURNING on statements other than INSERT, REPLACE and DELETE"}
	}
	return returningPlan{PreparedPlan: pp, list: list}, nil
}

// Bind binds the INSERT or DELETE and returns a copy of its plan whose
// routes end in the RETURNING clause (the statement's plan may be shared).
func (p returningPlan) Bind(args []any) (*router.Plan, error) {
	plan, err := p.PreparedPlan.Bind(args)
	if err != nil {
		return nil, err
	}
	out := *plan
	out.Returning = p.list
	out.Routes = make([]router.Route, len(plan.Routes))
	for i, r := range plan.Routes {
		r.SQL += returningTail(&out, r)
		out.Routes[i] = r
	}
	return &out, nil
}

// returningTail is what a route of plan ends with for its RETURNING
// clause: " RETURNING " and the list, with the route's physical table
// for the logical one.
func returningTail(plan *router.Plan, r router.Route) string {
	if plan.Returning == "" {
		return ""
	}
	list := plan.Returning
	if len(r.Nodes) == 1 && len(plan.Tables) > 0 {
		list = returningFor(list, plan.Tables[0], r.Nodes[0].Table)
	}
	return " RETURNING " + list
}

// returningFor returns a RETURNING list for a route that inserts into
// physical table physical: each name of the INSERT's logical table that
// qualifies a column or a star (t_order.order_id, `t_order`.*, as Django
// writes it) names physical instead, as MariaDB resolves the list against
// the table the route names (1054 for the logical name). Strings, comments
// and a qualifier after a schema name are left as they are.
func returningFor(list, logical, physical string) string {
	if logical == physical || !strings.Contains(strings.ToLower(list), strings.ToLower(logical)) {
		return list
	}
	var b strings.Builder
	sc := sqllex.NewScanner(list, sqllex.Backslash)
	var prev sqllex.Token // the last token other than space and comments
	last := 0
	for {
		t, ok := sc.Next()
		if !ok {
			break
		}
		if t.Kind == sqllex.Space || t.Kind.Comment() {
			continue
		}
		afterDot := prev.Kind == sqllex.Punct && list[prev.Start] == '.'
		prev = t
		if t.Kind != sqllex.Word && t.Kind != sqllex.QuotedName || afterDot {
			continue
		}
		name := t.Text(list)
		if t.Kind == sqllex.QuotedName {
			name = sqllex.Unquote(list, t, sqllex.Backslash)
		}
		if !strings.EqualFold(name, logical) || !beforeDot(list, sc.Pos()) {
			continue
		}
		b.WriteString(list[last:t.Start])
		b.Write(appendIdent(nil, physical))
		last = t.End
	}
	if last == 0 {
		return list
	}
	b.WriteString(list[last:])
	return b.String()
}

// beforeDot reports whether the next token of list from i, past spaces
// and comments, is a dot.
func beforeDot(list string, i int) bool {
	sc := sqllex.NewScanner(list[i:], sqllex.Backslash)
	for {
		t, ok := sc.Next()
		if !ok {
			return false
		}
		if t.Kind != sqllex.Space && !t.Kind.Comment() {
			return t.Kind == sqllex.Punct && list[i+t.Start] == '.'
		}
	}
}

// runRoutes executes plan on conns: runPlanMode, or for an INSERT or
// DELETE ... RETURNING each route in turn, its rows buffered and put back
// in the client's row order.
func (s *Session) runRoutes(ctx context.Context, plan *router.Plan, conns connSource, mode backendMode, join *joinScope) (result, error) {
	if plan.RowLimit != nil {
		// An UPDATE or DELETE ... LIMIT over several data nodes (rowlimit.go).
		return s.runRowLimit(ctx, plan, conns, mode)
	}
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
			return result{}, &InternalError{Msg: "RETURNING returned no rows"}
		}
		if cols == nil {
			cols = res.rows.Columns()
		}
		rows, err := drainClone(res.rows)
		if err != nil {
			return result{}, err
		}
		if i > 0 && plan.Type == router.RouteBroadcast {
			// Another copy of a broadcast table: the same rows again.
			continue
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
