package proxy

import (
	"context"
	"errors"
	"io"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/router"
)

// RowStream is one result's rows, read one at a time and in order.
//
// The executor opens one RowStream per route of a SELECT; for a single route
// the session writes it to the client as it reads (forwarding the backend's
// packets unchanged when the protocols match), and for several routes it
// hands them to a Merger and writes the stream the Merger returns. Rows are
// pulled from the backends only as Next is called, so a stream never holds
// more than one row unless its producer buffers on purpose.
//
// A RowStream is used by one goroutine at a time.
type RowStream interface {
	// Columns describes the result's columns. It is valid for the life of
	// the stream and must not be modified.
	Columns() []*mysql.Field
	// Next returns the next row, or io.EOF after the last one. Any other
	// error ends the stream (a backend error, a cancelled statement).
	Next() (Row, error)
	// Close ends the stream early or after io.EOF and releases what it
	// holds (for a route: stops the backend query if rows are left and
	// gives the connection back). It is safe to call more than once.
	Close() error
}

// Row is one result row in the text protocol's form: one value per column,
// nil for SQL NULL, otherwise the value as MySQL prints it (integers in
// decimal, DECIMAL with its scale, dates as 'YYYY-MM-DD hh:mm:ss', strings
// and blobs as their bytes).
//
// A Row and the bytes it points to are only valid until the next call to
// Next or Close on the stream that returned it; keep one longer with Clone.
type Row [][]byte

// Clone returns a copy of r that stays valid.
func (r Row) Clone() Row {
	n := 0
	for _, v := range r {
		n += len(v)
	}
	buf := make([]byte, 0, n)
	out := make(Row, len(r))
	for i, v := range r {
		if v == nil {
			continue
		}
		start := len(buf)
		buf = append(buf, v...)
		out[i] = buf[start:len(buf):len(buf)]
	}
	return out
}

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
// Merger that also implements MergeChecker is asked first, before any
// route runs, whether it can merge a plan at all.
type Merger interface {
	Merge(ctx context.Context, plan *router.Plan, streams []RowStream, budget int64) (RowStream, error)
}

// MergeChecker is implemented by Mergers that can refuse a plan before
// its routes run, so an unsupported query costs the backends nothing.
type MergeChecker interface {
	MergeCheck(plan *router.Plan) error
}

// ConcatMerger is the Merger the proxy uses when none is configured: it
// answers a multi-route SELECT whose Merge needs no more than
// concatenation (hidden columns stripped, LIMIT applied while streaming)
// and rejects everything else with 1235, so a query it cannot merge is
// refused rather than answered wrongly.
type ConcatMerger struct{}

// MergeCheck refuses, before any route runs, the plans Merge cannot do.
func (ConcatMerger) MergeCheck(plan *router.Plan) error {
	m := plan.Merge
	if m != nil && (len(m.Sort) > 0 || m.Group != nil || len(m.Compute) > 0 || m.Having != nil || m.Distinct || len(m.OrderBy) > 0) {
		return &NotSupportedError{What: "merging ORDER BY, GROUP BY, aggregates or DISTINCT across data nodes"}
	}
	return nil
}

// Merge concatenates the streams in route order.
func (c ConcatMerger) Merge(ctx context.Context, plan *router.Plan, streams []RowStream, budget int64) (RowStream, error) {
	if err := c.MergeCheck(plan); err != nil {
		closeAll(streams)
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
	streams []RowStream
	cur     int
	columns []*mysql.Field
	visible int   // columns the client sees; -1 for all
	skip    int64 // LIMIT offset still to skip
	left    int64 // LIMIT count still to return; -1 for no limit
}

func (c *concatStream) Columns() []*mysql.Field { return c.columns }

func (c *concatStream) Next() (Row, error) {
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
	return closeAll(c.streams)
}

// closeAll closes every stream and returns the first error.
func closeAll(streams []RowStream) error {
	var first error
	for _, s := range streams {
		if s == nil {
			continue
		}
		if err := s.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
