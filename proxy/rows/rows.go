package rows

import "github.com/go-mysql-org/go-mysql/mysql"

// Stream is one result's rows, read one at a time and in order.
//
// The executor opens one Stream per route of a SELECT; for a single route
// the session writes it to the client as it reads (forwarding the backend's
// packets unchanged when the protocols match), and for several routes it
// hands them to a Merger and writes the stream the Merger returns. Rows are
// pulled from the backends only as Next is called, so a stream never holds
// more than one row unless its producer buffers on purpose.
//
// A Stream is used by one goroutine at a time.
type Stream interface {
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

// CloseAll closes every stream (nil ones skipped) and returns the first
// error.
func CloseAll(streams []Stream) error {
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
