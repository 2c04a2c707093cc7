package merge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/sqlvalue"
	"github.com/shardflake/shardflake/proxy/rows"
	"github.com/shardflake/shardflake/router"
)

// ResultMerger is the Merger that answers a multi-route SELECT as one
// MariaDB server would: it runs the pipeline router.Merge describes (k-way
// merge, grouping and aggregates, HAVING, expressions over aggregates,
// DISTINCT, in-memory ORDER BY, LIMIT, hidden columns stripped), streaming
// wherever the semantics allow and holding rows only for hashed grouping,
// DISTINCT and in-memory ordering, under the statement's budget.
//
// Values are compared with MariaDB's rules for their column's type
// (package sqlvalue). A string column's collation is the one its column
// definition implies (the connection's, or its charset's _bin one with
// BINARY_FLAG) unless Collations resolves the real one; when the routes'
// own order contradicts the collation the merge assumed, the statement
// fails rather than returning rows out of order. An INET4, INET6 or UUID
// column compares by its binary form, as MariaDB does, when its
// definition's extended metadata names the type; without the name (a
// data source connection without MariaDB's extended metadata) ordering
// it is refused.
//
// A ResultMerger is immutable and safe for concurrent use.
type ResultMerger struct {
	// MaxScatterRows caps the rows one statement may read from its data
	// nodes (server.maxScatterRows); 0 is no cap.
	MaxScatterRows int64
	// Collations, when set, tells the collations of string columns that
	// MariaDB's column definitions do not carry; without it a string
	// column compares by the collation its definition names.
	Collations CollationSource
	// Dialects, when set, tells how the data sources' MariaDB version
	// computes what differs between versions; without it the merge
	// computes as the zero Dialect says.
	Dialects DialectSource
}

// MergeCheck implements Checker: it refuses, before any route runs,
// a merge that names an aggregate or an expression operator (HAVING,
// computed columns) this merge does not know. Everything that depends on the result's column types is
// checked by Merge.
func (m *ResultMerger) MergeCheck(plan *router.Plan) error {
	spec := plan.Merge
	if spec == nil {
		return nil
	}
	if g := spec.Group; g != nil {
		for _, a := range g.Aggregates {
			if a.Func < router.AggCount || a.Func > router.AggLast {
				return &NotSupportedError{What: fmt.Sprintf("the aggregate %s across data nodes", a.Func)}
			}
		}
	}
	if err := checkExpr(spec.Having); err != nil {
		return err
	}
	for _, c := range spec.Compute {
		if err := checkExpr(c.Expr); err != nil {
			return err
		}
	}
	if m.Collations != nil && needsCollations(spec) && len(plan.Routes) > 0 {
		// Learn the collations now, while this statement holds no
		// connection of the data source; Merge finds them kept.
		ctx, cancel := context.WithTimeout(context.Background(), collationProbeTimeout)
		defer cancel()
		if _, err := m.Collations.RouteCollations(ctx, plan.Routes[0]); err != nil {
			return err
		}
	}
	return nil
}

func checkExpr(e *router.Expr) error {
	if e == nil {
		return nil
	}
	if !knownOp(e.Op) {
		return &NotSupportedError{What: fmt.Sprintf("the operator %s across data nodes", e.Op)}
	}
	for _, a := range e.Args {
		if err := checkExpr(a); err != nil {
			return err
		}
	}
	return nil
}

// Merge implements Merger.
func (m *ResultMerger) Merge(ctx context.Context, plan *router.Plan, streams []rows.Stream, budget int64) (rows.Stream, error) {
	rs, err := m.merge(ctx, plan, streams, budget)
	if err != nil {
		rows.CloseAll(streams)
		return nil, err
	}
	return rs, nil
}

func (m *ResultMerger) merge(ctx context.Context, plan *router.Plan, streams []rows.Stream, budget int64) (rows.Stream, error) {
	p, spec, err := m.newPipeline(ctx, plan, streams, budget)
	if err != nil {
		return nil, err
	}
	// 1. Combine.
	src, sorted, err := p.combine(spec, streams)
	if err != nil {
		return nil, err
	}
	if m.MaxScatterRows > 0 {
		src = &scatterCap{src: src, limit: m.MaxScatterRows}
	}
	// 2. Group.
	if g := spec.Group; g != nil {
		gs, err := p.newGrouper(src, g, sorted)
		if err != nil {
			return nil, err
		}
		src = gs
	}
	// 3. Having.
	if src, err = p.having(spec, src); err != nil {
		return nil, err
	}
	// 4. Compute (what DISTINCT and ORDER BY read), then Distinct.
	src, late, err := p.compute(spec, src)
	if err != nil {
		return nil, err
	}
	if set := spec.SetOp; set != nil && (set.Operator == router.SetOpIntersect || set.Operator == router.SetOpExcept) {
		// INTERSECT or EXCEPT over a set operation's branches (ungrouped,
		// unsorted, in order): the first branch's rows kept by the others.
		if spec.Group != nil || len(spec.Sort) > 0 {
			return nil, &InternalError{Msg: "INTERSECT or EXCEPT over grouped or sorted routes"}
		}
		for i := range p.visible {
			if err := p.types[i].EqualError(); err != nil {
				return nil, notMergeable(set.Operator.String(), p.fields[i], err)
			}
		}
		src = newSetOpFilter(set.Operator, !spec.Distinct, streams, p.types[:p.visible], p.mem)
	}
	if src, err = p.distinct(spec, src, sorted); err != nil {
		return nil, err
	}
	// 5 and 6. Order in memory, limit.
	var offset, count int64 = 0, -1
	if l := spec.Limit; l != nil {
		offset, count = max(l.Offset, 0), max(l.Count, 0)
	}
	if len(spec.OrderBy) > 0 {
		keys, err := p.orderKeys(spec.OrderBy, "ORDER BY")
		if err != nil {
			return nil, err
		}
		src = newMemSort(src, keys, offset, count, p.mem)
	}
	out := &mergedStream{
		src:     src,
		streams: streams,
		columns: p.fields[:p.visible],
		visible: p.visible,
		offset:  offset,
		count:   count,
		ctx:     ctx,
		late:    late,
	}
	return out, nil
}

// failedStream returns the error of a stream that has no columns because
// its route failed before its result began: a route that waits behind
// another on the same connection (inside a transaction) learns that only
// when it is opened, which Columns does, and its Next says why. A
// cancelled statement is the usual case: the client is to hear 1317 or
// 1969, not that the routes disagree on their columns.
func failedStream(s rows.Stream) error {
	if _, err := s.Next(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// newPipeline checks that the routes agree on their columns and the
// plan's merge on how many it hides, and resolves every column's type
// (with the routes' real collations where the merge compares strings).
// The merge spec it returns is never nil.
func (m *ResultMerger) newPipeline(ctx context.Context, plan *router.Plan, streams []rows.Stream, budget int64) (*pipeline, *router.Merge, error) {
	if len(streams) == 0 {
		return nil, nil, &InternalError{Msg: "merge of no streams"}
	}
	fields := streams[0].Columns()
	n := len(fields)
	if n == 0 {
		if err := failedStream(streams[0]); err != nil {
			return nil, nil, err
		}
	}
	for i, s := range streams[1:] {
		if got := len(s.Columns()); got != n {
			if err := failedStream(s); got == 0 && err != nil {
				return nil, nil, err
			}
			return nil, nil, &InternalError{Msg: fmt.Sprintf("route %d returned %d columns, route 0 returned %d", i+1, got, n)}
		}
	}
	spec := plan.Merge
	if spec == nil {
		spec = &router.Merge{}
	}
	if spec.Describe {
		var err error
		if fields, err = describedFields(spec, streams); err != nil {
			return nil, nil, err
		}
	}
	p := &pipeline{
		ctx:     ctx,
		fields:  fields,
		n:       n,
		mem:     &Budget{left: budget, total: budget},
		grouped: spec.Group != nil && len(spec.Group.Keys) > 0,
	}
	if m.Dialects != nil && (spec.Group != nil || len(spec.Compute) > 0 || spec.Having != nil) {
		p.dialect = m.Dialects.Dialect(ctx)
	}
	if spec.Hidden < 0 || spec.Hidden >= n {
		return nil, nil, &InternalError{Msg: fmt.Sprintf("merge hides %d of %d columns", spec.Hidden, n)}
	}
	p.visible = n - spec.Hidden
	var collations []uint16
	if m.Collations != nil && needsCollations(spec) && len(plan.Routes) > 0 {
		ids, err := m.Collations.RouteCollations(ctx, plan.Routes[0])
		if err != nil {
			return nil, nil, err
		}
		if len(ids) != n {
			return nil, nil, &InternalError{Msg: fmt.Sprintf("the route's prepared form has %d columns, its result %d", len(ids), n)}
		}
		collations = ids
	}
	p.resolveTypes(collations)
	return p, spec, nil
}

// combine joins the routes' streams into one: a k-way merge on spec.Sort
// (returning the columns the rows are then sorted by), or a concatenation.
func (p *pipeline) combine(spec *router.Merge, streams []rows.Stream) (src stage, sorted []int, err error) {
	if len(spec.Sort) == 0 {
		return &concatStage{streams: streams}, nil, nil
	}
	// The routes' order serves ORDER BY, or GROUP BY and DISTINCT
	// merged by streaming.
	keys, err := p.orderKeys(spec.Sort, "ORDER BY, GROUP BY or DISTINCT")
	switch {
	case err != nil && spec.AnyOrder:
		// Nobody needs that order: group and deduplicate by hashing.
		return &concatStage{streams: streams}, nil, nil
	case err != nil:
		return nil, nil, err
	}
	for _, k := range keys {
		sorted = append(sorted, k.col)
	}
	return newSortMerge(streams, keys), sorted, nil
}

// having adds spec's HAVING filter after src, if any.
func (p *pipeline) having(spec *router.Merge, src stage) (stage, error) {
	if spec.Having == nil {
		return src, nil
	}
	ev, err := p.compileExpr(spec.Having, "HAVING")
	if err != nil {
		return nil, err
	}
	if err := (&cexpr{args: []*cexpr{ev}}).noEnum("HAVING"); err != nil {
		return nil, err
	}
	return &havingFilter{src: src, cond: ev}, nil
}

// compute adds the computed columns DISTINCT and ORDER BY read after src,
// and returns the others as late, computed only for the rows the client
// receives (nil when there are none).
func (p *pipeline) compute(spec *router.Merge, src stage) (_ stage, late *computeStage, err error) {
	if len(spec.Compute) == 0 {
		return src, nil, nil
	}
	if spec.Group == nil {
		// Without grouping the rows are the routes' own buffers.
		return nil, nil, &InternalError{Msg: "computed columns without grouping"}
	}
	early, rest, err := p.splitCompute(spec)
	if err != nil {
		return nil, nil, err
	}
	if len(early) > 0 {
		cs, err := p.newCompute(src, early)
		if err != nil {
			return nil, nil, err
		}
		src = cs
	}
	if len(rest) > 0 {
		if late, err = p.newCompute(nil, rest); err != nil {
			return nil, nil, err
		}
	}
	return src, late, nil
}

// distinct adds spec's DISTINCT after src, if any: streaming when the
// merged routes' order (sorted) puts duplicates side by side, else by
// hashing under the memory budget.
func (p *pipeline) distinct(spec *router.Merge, src stage, sorted []int) (stage, error) {
	if !spec.Distinct {
		return src, nil
	}
	for i := range p.visible {
		if err := p.types[i].EqualError(); err != nil {
			return nil, notMergeable("DISTINCT", p.fields[i], err)
		}
	}
	if spec.Group == nil && spec.Having == nil && len(spec.Compute) == 0 && sortedOnVisible(sorted, p.visible) {
		// The merged streams' order puts duplicates side by side.
		return &sortedDistinct{src: src, types: p.types[:p.visible]}, nil
	}
	return &distinctFilter{src: src, types: p.types[:p.visible], mem: p.mem}, nil
}

// splitCompute divides the computed columns into those DISTINCT or the
// in-memory ORDER BY read, computed for every group, and the others,
// computed only for the rows the client receives: MariaDB evaluates a
// select-list expression when it sends the row, so a value that would be
// out of range in a group OFFSET skips or LIMIT cuts off raises no error.
func (p *pipeline) splitCompute(spec *router.Merge) (early, late []router.Computed, err error) {
	needed := map[int]bool{}
	for _, k := range spec.OrderBy {
		c, err := p.column(k.Column)
		if err != nil {
			return nil, nil, err
		}
		needed[c] = true
	}
	for _, k := range spec.Sort {
		c, err := p.column(k.Column)
		if err != nil {
			return nil, nil, err
		}
		needed[c] = true
	}
	for _, c := range spec.Compute {
		i, err := p.column(c.Column)
		if err != nil {
			return nil, nil, err
		}
		switch {
		case needed[i] || spec.Distinct && i < p.visible:
			early = append(early, c)
		case i < p.visible:
			late = append(late, c)
		}
		// A hidden column nothing reads (an ORDER BY expression of a
		// single group, router.selectMerge.bind) is not computed.
	}
	return early, late, nil
}

// describedFields returns the result's column definitions when the first
// stream describes the computed columns: those from it, the others from
// the first route that returns rows (the describing route's LIMIT 0 may
// run another plan, with other key and group flags).
func describedFields(spec *router.Merge, streams []rows.Stream) ([]*mysql.Field, error) {
	rollup := spec.Group != nil && spec.Group.Rollup
	if len(streams) < 2 || len(spec.Compute) == 0 && !rollup {
		return nil, &InternalError{Msg: fmt.Sprintf("a describing route with %d routes and %d computed columns", len(streams), len(spec.Compute))}
	}
	fields := slices.Clone(streams[1].Columns())
	if err := Describe(spec, streams[0].Columns(), fields); err != nil {
		return nil, err
	}
	return fields, nil
}

// Describe puts into cols, the column definitions of a route that runs
// the statement as sent, those of desc, the describing route's, where
// the merged result differs: the computed columns, and under WITH ROLLUP
// every visible column (the hidden ones stay as the routes return them).
// A prepare describes its result so too (proxy's routedColumns).
func Describe(spec *router.Merge, desc, cols []*mysql.Field) error {
	if spec.Group != nil && spec.Group.Rollup && len(desc) == len(cols) && spec.Hidden >= 0 && spec.Hidden < len(cols) {
		copy(cols, desc[:len(cols)-spec.Hidden])
	}
	for _, c := range spec.Compute {
		i := c.Column.Index(len(cols))
		if i < 0 || i >= len(cols) || i >= len(desc) {
			return &InternalError{Msg: fmt.Sprintf("merge computes column %s of %d", c.Column, len(cols))}
		}
		cols[i] = desc[i]
	}
	return nil
}

// stage is one step of the merge pipeline. The row next returns is valid
// until the following call.
type stage interface {
	Next() (rows.Row, error)
}

// pipeline is what the stages of one merge share.
type pipeline struct {
	ctx     context.Context
	fields  []*mysql.Field
	types   []sqlvalue.Type
	n       int // columns the routes return
	visible int // columns the client sees
	mem     *Budget
	grouped bool // GROUP BY with keys
	dialect Dialect
}

// resolveTypes derives every column's Type; collations, when not nil,
// are the columns' real collation ids.
func (p *pipeline) resolveTypes(collations []uint16) {
	p.types = make([]sqlvalue.Type, p.n)
	for i, f := range p.fields {
		var coll uint16
		if collations != nil && sqlvalue.IsText(f) {
			coll = collations[i]
		}
		p.types[i] = sqlvalue.TypeOf(f, coll)
	}
}

// column resolves a ColumnRef, failing on one outside the row.
func (p *pipeline) column(c router.ColumnRef) (int, error) {
	i := c.Index(p.n)
	if i < 0 || i >= p.n {
		return 0, &InternalError{Msg: fmt.Sprintf("merge refers to column %s of %d", c, p.n)}
	}
	return i, nil
}

// sortKey is one resolved sort key.
type sortKey struct {
	col  int
	desc bool
	typ  sqlvalue.Type
}

func (p *pipeline) orderKeys(keys []router.OrderKey, what string) ([]sortKey, error) {
	out := make([]sortKey, len(keys))
	for i, k := range keys {
		c, err := p.column(k.Column)
		if err != nil {
			return nil, err
		}
		if err := p.types[c].OrderError(); err != nil {
			return nil, notMergeable(what, p.fields[c], err)
		}
		out[i] = sortKey{col: c, desc: k.Desc, typ: p.types[c]}
	}
	return out, nil
}

// compareRows orders two rows by keys.
func compareRows(keys []sortKey, a, b rows.Row) int {
	for _, k := range keys {
		if c := k.typ.Compare(a[k.col], b[k.col]); c != 0 {
			if k.desc {
				return -c
			}
			return c
		}
	}
	return 0
}

// notMergeable is the 1235 error for a column the merge cannot compare.
func notMergeable(what string, f *mysql.Field, err error) error {
	return &NotSupportedError{What: fmt.Sprintf("%s across data nodes on column `%s` (%v)", what, f.Name, err)}
}

// Budget is the memory one statement may hold rows in (the merge's stages,
// or a CALL's buffered result sets). Its users run on one goroutine, so it
// needs no lock.
type Budget struct {
	left, total int64
}

// NewBudget returns a budget of bytes; bytes <= 0 is no limit.
func NewBudget(bytes int64) *Budget {
	if bytes <= 0 {
		bytes = 1 << 62
	}
	return &Budget{left: bytes, total: bytes}
}

// Take reserves n bytes for what, or fails with MemoryError.
func (b *Budget) Take(n int64, what string) error {
	if n > b.left {
		return &MemoryError{Budget: b.total, What: what}
	}
	b.left -= n
	return nil
}

// Give returns n bytes taken earlier.
func (b *Budget) Give(n int64) { b.left += n }

// RowBytes estimates what holding a cloned row costs, as a Budget is
// asked for it.
func RowBytes(r rows.Row) int64 {
	n := int64(48 + 24*len(r))
	for _, v := range r {
		n += int64(len(v))
	}
	return n
}

// concatStage reads the routes one after the other.
type concatStage struct {
	streams []rows.Stream
	cur     int
}

func (c *concatStage) Next() (rows.Row, error) {
	for c.cur < len(c.streams) {
		row, err := c.streams[c.cur].Next()
		if errors.Is(err, io.EOF) {
			c.streams[c.cur].Close()
			c.cur++
			continue
		}
		return row, err
	}
	return nil, io.EOF
}

// scatterCap fails once more rows than limit came from the data nodes.
type scatterCap struct {
	src   stage
	limit int64
	seen  int64
}

func (s *scatterCap) Next() (rows.Row, error) {
	row, err := s.src.Next()
	if err != nil {
		return nil, err
	}
	if s.seen++; s.seen > s.limit {
		return nil, &ScatterRowsError{Limit: s.limit}
	}
	return row, nil
}

// mergedStream is the rows.Stream a merge returns: the last stage, with
// LIMIT applied and hidden columns stripped.
type mergedStream struct {
	src     stage
	streams []rows.Stream
	columns []*mysql.Field
	visible int
	offset  int64
	count   int64 // -1: no limit
	sent    int64
	ctx     context.Context
	err     error
	done    bool
	late    *computeStage // computed columns filled as rows leave; nil for none
}

func (s *mergedStream) Columns() []*mysql.Field { return s.columns }

func (s *mergedStream) Next() (rows.Row, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.done || (s.count >= 0 && s.sent >= s.count) {
		s.finish()
		return nil, io.EOF
	}
	for {
		row, err := s.src.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				s.finish()
				return nil, io.EOF
			}
			if ctxErr := context.Cause(s.ctx); ctxErr != nil && s.ctx.Err() != nil {
				err = ctxErr
			}
			s.err = err
			rows.CloseAll(s.streams)
			return nil, err
		}
		if s.offset > 0 {
			s.offset--
			continue
		}
		if s.late != nil {
			if err := s.late.apply(row); err != nil {
				s.err = err
				rows.CloseAll(s.streams)
				return nil, err
			}
		}
		s.sent++
		return row[:s.visible:s.visible], nil
	}
}

// finish releases the routes as soon as no more rows are wanted, so a
// LIMIT that is reached early gives the backend connections back.
func (s *mergedStream) finish() {
	if !s.done {
		s.done = true
		rows.CloseAll(s.streams)
	}
}

func (s *mergedStream) Close() error {
	s.done = true
	return rows.CloseAll(s.streams)
}
