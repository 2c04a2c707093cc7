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
// Implementations must be safe for concurrent use by many sessions.
type Merger interface {
	Merge(ctx context.Context, plan *router.Plan, streams []RowStream, budget int64) (RowStream, error)
}

// ConcatMerger is the Merger the proxy uses when none is configured: it
// answers a multi-route SELECT whose Merge needs no more than concatenation
// (nil, or hidden columns only) and rejects everything else with 1235, so
// a query it cannot merge is refused rather than answered wrongly.
type ConcatMerger struct{}

// Merge concatenates the streams in route order.
func (ConcatMerger) Merge(ctx context.Context, plan *router.Plan, streams []RowStream, budget int64) (RowStream, error) {
	m := plan.Merge
	if m != nil && (len(m.Sort) > 0 || m.Group != nil || m.Having != nil || m.Distinct || len(m.OrderBy) > 0 || m.Limit != nil) {
		closeAll(streams)
		return nil, &NotSupportedError{What: "merging ORDER BY, GROUP BY, aggregates, DISTINCT or LIMIT across data nodes"}
	}
	visible := -1
	if m != nil && m.Hidden > 0 && len(streams) > 0 {
		visible = len(streams[0].Columns()) - m.Hidden
	}
	return newConcatStream(streams, visible), nil
}

// concatStream reads its streams one after the other.
type concatStream struct {
	streams []RowStream
	cur     int
	columns []*mysql.Field
	visible int // columns the client sees; -1 for all
}

func newConcatStream(streams []RowStream, visible int) *concatStream {
	c := &concatStream{streams: streams, visible: visible}
	if len(streams) > 0 {
		c.columns = streams[0].Columns()
		if visible >= 0 && visible < len(c.columns) {
			c.columns = c.columns[:visible]
		}
	}
	return c
}

func (c *concatStream) Columns() []*mysql.Field { return c.columns }

func (c *concatStream) Next() (Row, error) {
	for c.cur < len(c.streams) {
		row, err := c.streams[c.cur].Next()
		if err == nil {
			if c.visible >= 0 && c.visible < len(row) {
				row = row[:c.visible]
			}
			return row, nil
		}
		if !errors.Is(err, io.EOF) {
			return nil, err
		}
		c.streams[c.cur].Close()
		c.cur++
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
