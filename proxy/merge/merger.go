package merge

import (
	"context"
	"errors"
	"io"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/rows"
	"github.com/shardflake/shardflake/router"
)

// Merger combines the row streams of a multi-route SELECT into the one
// result the client sees, as plan.Merge describes (ordering, grouping,
// aggregates, DISTINCT, LIMIT; hidden helper columns beyond
// plan.Merge.Columns are stripped).
//
// Merge owns the streams: it closes every one of them, also when it
// returns an error, and the stream it returns closes them when it is
// closed. Every stream has the same columns in the same order. ctx is
// cancelled when the client disconnects, KILLs the statement or it times
// out; a Merger that waits on anything but the streams must watch it
// (the streams themselves fail once ctx is done). budget is the memory a
// Merger may use for rows it has to hold (server.mergeMemoryBytes); past it
// Merge fails with a clear error rather than growing.
//
// Implementations must be safe for concurrent use by many sessions. A
// Merger that also implements Checker is asked first, before any
// route runs, whether it can merge a plan at all.
type Merger interface {
	Merge(ctx context.Context, plan *router.Plan, streams []rows.Stream, budget int64) (rows.Stream, error)
}

// Checker is implemented by Mergers that can refuse a plan before
// its routes run, so an unsupported query costs the backends nothing.
type Checker interface {
	MergeCheck(plan *router.Plan) error
}

// Concat is the Merger the proxy uses when none is configured: it
// answers a multi-route SELECT whose Merge needs no more than
// concatenation (hidden columns stripped, LIMIT applied while streaming)
// and rejects everything else with 1235, so a query it cannot merge is
// refused rather than answered wrongly.
type Concat struct{}

// MergeCheck refuses, before any route runs, the plans Merge cannot do.
func (Concat) MergeCheck(plan *router.Plan) error {
	m := plan.Merge
	if m != nil && (len(m.Sort) > 0 || m.Group != nil || len(m.Compute) > 0 || m.Having != nil || m.Distinct || len(m.OrderBy) > 0) {
		return &NotSupportedError{What: "merging ORDER BY, GROUP BY, aggregates or DISTINCT across data nodes"}
	}
	return nil
}

// Merge concatenates the streams in route order.
func (c Concat) Merge(ctx context.Context, plan *router.Plan, streams []rows.Stream, budget int64) (rows.Stream, error) {
	if err := c.MergeCheck(plan); err != nil {
		rows.CloseAll(streams)
		return nil, err
	}
	m := plan.Merge
	cs := &concatStream{streams: streams, visible: -1, left: -1}
	if len(streams) > 0 {
		cs.columns = streams[0].Columns()
	}
	if m != nil {
		cs.visible = len(cs.columns) - m.Hidden
		cs.columns = cs.columns[:cs.visible]
		if m.Limit != nil {
			cs.skip, cs.left = m.Limit.Offset, m.Limit.Count
		}
	}
	return cs, nil
}

// concatStream reads its streams one after the other.
type concatStream struct {
	streams []rows.Stream
	cur     int
	columns []*mysql.Field
	visible int   // columns the client sees; -1 for all
	skip    int64 // LIMIT offset still to skip
	left    int64 // LIMIT count still to return; -1 for no limit
}

func (c *concatStream) Columns() []*mysql.Field { return c.columns }

func (c *concatStream) Next() (rows.Row, error) {
	for c.cur < len(c.streams) && c.left != 0 {
		row, err := c.streams[c.cur].Next()
		if errors.Is(err, io.EOF) {
			c.streams[c.cur].Close()
			c.cur++
			continue
		}
		if err != nil {
			return nil, err
		}
		if c.skip > 0 {
			c.skip--
			continue
		}
		if c.left > 0 {
			c.left--
		}
		if c.visible >= 0 && c.visible < len(row) {
			row = row[:c.visible]
		}
		return row, nil
	}
	return nil, io.EOF
}

func (c *concatStream) Close() error {
	return rows.CloseAll(c.streams)
}

// Warner takes the warnings a merge raises itself, as MariaDB would raise
// them for the statement (SHOW WARNINGS, the result's warning count). The
// statement's context holds it under WarnerKey; a merge without
// GROUP_CONCAT never looks it up.
type Warner interface {
	// MergeWarning adds a warning the merge raised.
	MergeWarning(level string, code uint16, message string)
	// MergesConcat says that the merge joins the statement's
	// GROUP_CONCATs itself: the data nodes' own warnings 1260 (their
	// GROUP_CONCAT columns, cut within a route's finer groups, which the
	// merge replaces) are not the statement's.
	MergesConcat()
}

// WarnerKey is the context key of the statement's Warner. The key is
// exported so that a caller's own context type can answer it without a
// context.WithValue per statement.
type WarnerKey struct{}

// warnerOf returns ctx's Warner, or nil.
func warnerOf(ctx context.Context) Warner {
	w, _ := ctx.Value(WarnerKey{}).(Warner)
	return w
}
