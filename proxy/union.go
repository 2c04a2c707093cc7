package proxy

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/router"
)

// Joining routes (server.unionRoutes): a multi-route SELECT reaches each
// data source once per physical table, and every one of those statements
// costs a round trip and a backend connection. The routes of one data
// source are sent instead as one statement,
//
//	(route 1) UNION ALL (route 2) ... [ORDER BY positions] [LIMIT n]
//
// (a DISTINCT's routes as a UNION of their SELECTs without DISTINCT:
// unionDedups)
// whose result is what the merge expects from a single route: the same
// columns, sorted on plan.Merge.Sort when the routes were, never more rows
// than a route would bound itself to. The merge then reads one stream per
// data source and folds several rows of one stream where it folded one
// row of each route (aggregates without GROUP BY give one row per table).
//
// MariaDB describes a UNION's columns as belonging to no table (empty
// schema, table and original table; an alias as original name; no key
// flags; an ENUM as a VARCHAR), so a statement shape runs apart once, and
// its first route's column definitions are kept (joinCache) and shown for
// the joined statements after it: the client sees exactly the column
// definitions it saw before.
//
// Joining pays for small results (sysbench's 100-row ranges: 2 backend
// statements instead of 8) and costs large ones: MariaDB materialises a
// UNION before sorting it, where each table alone streams in index order,
// and one connection per data source reads what four read in parallel (a
// 1,000,000-row scan, or ORDER BY ... LIMIT 10 OFFSET 900000, ran at half
// the speed joined). So every run counts the rows its streams return, and
// a shape that returned more than the cache's rowLimit (10,000) runs apart
// from then on.

// joinedPlan is a plan whose routes were joined per data source.
type joinedPlan struct {
	plan *router.Plan
	// joined[i] says plan.Routes[i] is a UNION of several routes (a data
	// source with a single route keeps it as it is).
	joined []bool
	// groups[i] are the original plan's routes plan.Routes[i] runs.
	groups [][]int
}

// joinRoutes returns plan with the routes of each data source that has
// several of them joined into one UNION ALL statement, or nil when the
// plan must run as it is: not a SELECT, no merge, a describing route,
// sort keys counted from the end (their absolute positions are not known
// without counting a wildcard's columns), routes the router did not find
// fit to be UNION branches (Plan.Unionable), or no data source with two
// routes.
func joinRoutes(plan *router.Plan) *joinedPlan {
	m := plan.Merge
	if plan.Kind != router.KindSelect || !plan.Unionable || len(plan.Routes) < 2 || m == nil || m.Describe {
		return nil
	}
	for _, k := range m.Sort {
		if k.Column < 0 {
			return nil
		}
	}
	byDS := map[string][]int{}
	var order []string
	for i := range plan.Routes {
		r := &plan.Routes[i]
		if _, ok := byDS[r.DataSource]; !ok {
			order = append(order, r.DataSource)
		}
		byDS[r.DataSource] = append(byDS[r.DataSource], i)
	}
	if len(order) == len(plan.Routes) {
		return nil
	}
	limit := unionLimit(plan)
	dedup := unionDedups(plan)
	jp := newJoinedPlan(plan, len(order))
	for g, ds := range order {
		idx := byDS[ds]
		jp.groups[g] = idx
		if len(idx) == 1 {
			jp.plan.Routes[g] = plan.Routes[idx[0]]
			continue
		}
		jp.plan.Routes[g] = joinedRoute(plan, idx, limit, dedup && allDistinct(plan, idx))
		jp.joined[g] = true
	}
	return jp
}

func newJoinedPlan(plan *router.Plan, n int) *joinedPlan {
	return &joinedPlan{
		plan:   &router.Plan{Kind: plan.Kind, Type: plan.Type, Tables: plan.Tables, Merge: plan.Merge, Routes: make([]router.Route, n)},
		joined: make([]bool, n),
		groups: make([][]int, n),
	}
}

// joinTemplate is how the plans of one shape were joined, so that the
// next plan of that shape is joined without building its SQL again: it
// applies to a plan whose routes have the same data sources and SQL in
// the same order, and whose merge sorts and limits the union alike (a
// LIMIT ? is a different number at each execution).
type joinTemplate struct {
	ds, sql []string // per route of the plan
	sort    []router.OrderKey
	limit   int64
	groups  [][]int  // joinedPlan.groups
	sqls    []string // per joined route: its SQL, "" for a single route kept as it is
}

func newJoinTemplate(plan *router.Plan, jp *joinedPlan) *joinTemplate {
	t := &joinTemplate{
		ds: make([]string, len(plan.Routes)), sql: make([]string, len(plan.Routes)),
		sort: plan.Merge.Sort, limit: unionLimit(plan), groups: jp.groups, sqls: make([]string, len(jp.groups)),
	}
	for i := range plan.Routes {
		t.ds[i], t.sql[i] = plan.Routes[i].DataSource, plan.Routes[i].SQL
	}
	for g := range jp.groups {
		if jp.joined[g] {
			t.sqls[g] = jp.plan.Routes[g].SQL
		}
	}
	return t
}

// apply joins plan as the template says, or returns nil when plan is not
// of the template's shape.
func (t *joinTemplate) apply(plan *router.Plan) *joinedPlan {
	if t == nil || len(plan.Routes) != len(t.ds) || !slices.Equal(plan.Merge.Sort, t.sort) || unionLimit(plan) != t.limit {
		return nil
	}
	for i := range plan.Routes {
		if r := &plan.Routes[i]; r.DataSource != t.ds[i] || r.SQL != t.sql[i] {
			return nil
		}
	}
	jp := newJoinedPlan(plan, len(t.groups))
	for g, idx := range t.groups {
		jp.groups[g] = idx
		if t.sqls[g] == "" {
			jp.plan.Routes[g] = plan.Routes[idx[0]]
			continue
		}
		jp.plan.Routes[g] = gatherRoute(plan, idx)
		jp.plan.Routes[g].SQL = t.sqls[g]
		jp.joined[g] = true
	}
	return jp
}

// unionLimit returns the LIMIT every route carries, which the joined
// statement may carry too, or -1 for none. A route carries LIMIT
// offset+count when its first rows in Sort order are all the merge needs
// (the router says so: Limit.Pushed); then the union's first
// offset+count rows in that order are too, unless rows of different
// routes fold together (grouping) or drop out as duplicates (DISTINCT):
// then the union keeps every route's rows.
func unionLimit(plan *router.Plan) int64 {
	m := plan.Merge
	if m.Limit == nil || !m.Limit.Pushed || m.Group != nil || m.Distinct || m.Having != nil {
		return -1
	}
	if m.Limit.Count > math.MaxInt64-m.Limit.Offset {
		return math.MaxInt64
	}
	return m.Limit.Count + m.Limit.Offset
}

// selectDistinct begins the SQL of a route whose outermost SELECT is
// DISTINCT, as the router writes it.
const selectDistinct = "SELECT DISTINCT "

// unionDedups reports whether the routes of a data source may be sent as
// a UNION (DISTINCT) of their SELECTs without DISTINCT, instead of a
// UNION ALL of SELECT DISTINCTs: the merge keeps the distinct rows of all
// routes, and the distinct rows of a union of tables are the distinct
// rows of the union of each table's distinct rows, under the same
// collations. It needs a DISTINCT applied to the rows as the tables give
// them: no grouping or aggregate (DISTINCT then applies to the groups),
// no HAVING or computed columns, and no LIMIT (a route's LIMIT counts
// distinct rows). MariaDB then fills one temporary table per statement,
// where each DISTINCT branch filled its own (a sysbench DISTINCT range
// over 4 tables: ~235 -> ~205 us of the server's CPU).
func unionDedups(plan *router.Plan) bool {
	m := plan.Merge
	return m.Distinct && m.Group == nil && m.Having == nil && len(m.Compute) == 0 && m.Limit == nil
}

// allDistinct reports whether every route idx of plan begins with
// selectDistinct.
func allDistinct(plan *router.Plan, idx []int) bool {
	for _, i := range idx {
		if !strings.HasPrefix(plan.Routes[i].SQL, selectDistinct) {
			return false
		}
	}
	return true
}

// joinedRoute is the UNION ALL of the routes idx of plan (one data
// source), ordered by the merge's sort keys as absolute positions, NULLs
// first ascending and strings by the columns' collations as in each
// route's own ORDER BY. With dedup (unionDedups, allDistinct) it is the
// UNION of the routes' SELECTs without their DISTINCT.
func joinedRoute(plan *router.Plan, idx []int, limit int64, dedup bool) router.Route {
	jr := gatherRoute(plan, idx)
	n := 0
	for _, i := range idx {
		n += len(plan.Routes[i].SQL) + 13
	}
	var b strings.Builder
	b.Grow(n + 16*len(plan.Merge.Sort) + 32)
	for j, i := range idx {
		r := &plan.Routes[i]
		if j > 0 {
			if dedup {
				b.WriteString(" UNION ")
			} else {
				b.WriteString(" UNION ALL ")
			}
		}
		b.WriteByte('(')
		if dedup {
			b.WriteString("SELECT ")
			b.WriteString(r.SQL[len(selectDistinct):])
		} else {
			b.WriteString(r.SQL)
		}
		b.WriteByte(')')
	}
	for j, k := range plan.Merge.Sort {
		if j == 0 {
			b.WriteString(" ORDER BY ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(int(k.Column) + 1))
		if k.Desc {
			b.WriteString(" DESC")
		}
	}
	if limit >= 0 {
		b.WriteString(" LIMIT ")
		b.WriteString(strconv.FormatInt(limit, 10))
	}
	jr.SQL = b.String()
	return jr
}

// gatherRoute is the routes idx of plan (one data source) as one route
// without SQL: their data nodes and their arguments, in order.
func gatherRoute(plan *router.Plan, idx []int) router.Route {
	nodes, args := 0, 0
	for _, i := range idx {
		nodes += len(plan.Routes[i].Nodes)
		args += len(plan.Routes[i].Args)
	}
	jr := router.Route{DataSource: plan.Routes[idx[0]].DataSource, Nodes: make([]config.DataNode, 0, nodes)}
	if args > 0 {
		jr.Args = make([]any, 0, args)
	}
	for _, i := range idx {
		jr.Nodes = append(jr.Nodes, plan.Routes[i].Nodes...)
		jr.Args = append(jr.Args, plan.Routes[i].Args...)
	}
	return jr
}

// joinedStream is a joined route's rows with the column definitions the
// first route's own result had.
type joinedStream struct {
	RowStream
	cols []*mysql.Field
}

func (j *joinedStream) Columns() []*mysql.Field {
	if got := j.RowStream.Columns(); len(got) != len(j.cols) {
		// Not the shape learnt (the tables changed behind the proxy's
		// back): the UNION's own definitions at least count right.
		return got
	}
	return j.cols
}

// joinCache keeps, per first route SQL and session settings, the column definitions of that
// route's result, as the client saw them when the plan last ran with its
// routes apart. MariaDB describes a UNION's columns differently from a
// table's (no schema or table, no key or GROUP flags, an ENUM as a
// VARCHAR), and no cheaper source gives the definitions exactly (a
// prepared statement's lack the flags execution sets), so a statement
// shape runs apart once and joined after that. The definitions do not
// depend on the arguments, since joinable routes have no ? or variable
// in their select lists (Plan.Unionable).
type joinCache struct {
	seen *boundedMap[joinKey, joinEntry]
	// joined counts the statements that ran joined.
	joined atomic.Uint64
	// rowLimit is the most rows a shape's run may return and still run
	// joined the next time.
	rowLimit int64
}

// joinEntry is what the cache knows of a statement shape.
type joinEntry struct {
	cols []*mysql.Field
	// apart: a run returned more than rowLimit rows; the shape runs
	// apart from then on.
	apart bool
	// tmpl is how the shape's last joined plan was joined.
	tmpl *joinTemplate
}

// defaultJoinRowLimit is joinCache.rowLimit.
const defaultJoinRowLimit = 10_000

// joinKey is a first route's SQL under a session's settings.
type joinKey struct{ settings, sql string }

func newJoinCache() *joinCache {
	return &joinCache{
		seen:     newBoundedMap[joinKey, joinEntry](maxProbes),
		rowLimit: defaultJoinRowLimit,
	}
}

// get returns what is known of a shape.
func (c *joinCache) get(k joinKey) joinEntry {
	e, _ := c.seen.get(k)
	return e
}

// keep records how a shape was joined.
func (c *joinCache) keep(k joinKey, t *joinTemplate) {
	c.seen.update(k, func(e *joinEntry) { e.tmpl = t })
}

func (c *joinCache) put(k joinKey, cols []*mysql.Field) {
	c.seen.update(k, func(e *joinEntry) { e.cols = cols })
}

// markApart makes a shape run apart from now on.
func (c *joinCache) markApart(k joinKey) {
	c.seen.update(k, func(e *joinEntry) { e.apart = true })
}

// forget drops every shape: DDL may have changed the columns.
func (c *joinCache) forget() { c.seen.clear() }

// countingStream counts the rows the streams of one run return (n is
// shared by them) and marks the shape apart once they pass the limit.
type countingStream struct {
	RowStream
	n     *atomic.Int64
	limit int64
	mark  func()
}

func (c *countingStream) Next() (Row, error) {
	row, err := c.RowStream.Next()
	if err == nil && c.n.Add(1) == c.limit+1 {
		c.mark()
	}
	return row, err
}

// joinScope is a session's view of the join cache: column definitions
// depend on the session's settings (character_set_results names the
// charset and sizes strings, div_precision_increment AVG's decimals), so
// they are kept per settings.
type joinScope struct {
	cache    *joinCache
	settings string // the session's settings, as applied to its backend connections
}

// joinFor returns the joined form of plan and the columns its streams
// show, when join is set (server.unionRoutes) and the plan's shape ran
// apart before under the same settings and returned no more than the
// cache's rowLimit rows; learn says the plan runs apart now so that the
// caller records its first route's columns. Either way, a non-zero key
// asks the caller to count the run's rows (countingStream).
func joinFor(plan *router.Plan, join *joinScope) (jp *joinedPlan, cols []*mysql.Field, key joinKey, learn bool) {
	if join == nil {
		return nil, nil, joinKey{}, false
	}
	if plan.Kind != router.KindSelect || !plan.Unionable || len(plan.Routes) < 2 || plan.Merge == nil || plan.Merge.Describe {
		return nil, nil, joinKey{}, false
	}
	key = joinKey{join.settings, plan.Routes[0].SQL}
	e := join.cache.get(key)
	if e.apart {
		return nil, nil, joinKey{}, false
	}
	jp = e.tmpl.apply(plan)
	if jp == nil {
		if jp = joinRoutes(plan); jp == nil {
			return nil, nil, joinKey{}, false
		}
		if e.cols != nil {
			join.cache.keep(key, newJoinTemplate(plan, jp))
		}
	}
	cols = e.cols
	if cols == nil {
		return nil, nil, key, true
	}
	for _, f := range cols {
		// A UNION's column drops ZEROFILL: MariaDB would send 4.50
		// where the table sends 000004.50. (YEAR, always ZEROFILL,
		// keeps it.)
		if f.Flag&mysql.ZEROFILL_FLAG != 0 && f.Type != mysql.MYSQL_TYPE_YEAR {
			return nil, nil, joinKey{}, false
		}
	}
	for _, k := range plan.Merge.Sort {
		// The UNION's column is a VARCHAR where the route's is an ENUM
		// or SET: ORDER BY would sort the names, not the members'
		// positions.
		if int(k.Column) >= len(cols) {
			return nil, nil, joinKey{}, false
		}
		f := cols[k.Column]
		if f.Flag&(mysql.ENUM_FLAG|mysql.SET_FLAG) != 0 || f.Type == mysql.MYSQL_TYPE_ENUM || f.Type == mysql.MYSQL_TYPE_SET {
			return nil, nil, joinKey{}, false
		}
	}
	join.cache.joined.Add(1)
	return jp, cols, key, false
}
