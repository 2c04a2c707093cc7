package merge

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/rows"
	"github.com/shardflake/shardflake/router"
)

// fakeStream is a RowStream over fixed rows that behaves like a route's
// stream at its worst: every row it returns lives in one buffer that the
// next call overwrites, so a merge that keeps a row without cloning it
// sees garbage.
type fakeStream struct {
	cols   []*mysql.Field
	rows   [][]*string
	pos    int
	buf    []byte
	row    rows.Row
	closed bool
	err    error // returned after the rows, instead of io.EOF
	reads  int
}

func (s *fakeStream) Columns() []*mysql.Field { return s.cols }

func (s *fakeStream) Next() (rows.Row, error) {
	if s.closed {
		return nil, errors.New("fakeStream: Next after Close")
	}
	for i := range s.buf {
		s.buf[i] = '#'
	}
	if s.pos >= len(s.rows) {
		if s.err != nil {
			return nil, s.err
		}
		return nil, io.EOF
	}
	src := s.rows[s.pos]
	s.pos++
	s.reads++
	if s.buf == nil {
		s.buf = make([]byte, 0, 64) // empty strings must not come out as NULL
	}
	s.buf = s.buf[:0]
	for _, v := range src {
		if v != nil {
			s.buf = append(s.buf, *v...)
		}
	}
	s.row = make(rows.Row, len(src))
	off := 0
	for i, v := range src {
		if v == nil {
			continue
		}
		s.row[i] = s.buf[off : off+len(*v)]
		off += len(*v)
	}
	return s.row, nil
}

func (s *fakeStream) Close() error {
	s.closed = true
	return nil
}

// N is SQL NULL in test rows.
const N = "\x00NULL"

// rowsOf turns "a|b|c" lines into rows; N marks NULL.
func rowsOf(lines ...string) [][]*string {
	var out [][]*string
	for _, l := range lines {
		var r []*string
		for _, v := range strings.Split(l, "|") {
			if v == N {
				r = append(r, nil)
				continue
			}
			r = append(r, &v)
		}
		out = append(out, r)
	}
	return out
}

func fld(name string, typ uint8, flag uint16, charset uint16, decimals uint8) *mysql.Field {
	return &mysql.Field{Name: []byte(name), Type: typ, Flag: flag, Charset: charset, Decimal: decimals}
}

func intCol(name string) *mysql.Field { return fld(name, mysql.MYSQL_TYPE_LONGLONG, 0, 63, 0) }
func strCol(name string) *mysql.Field { return fld(name, mysql.MYSQL_TYPE_VAR_STRING, 0, 45, 0) }
func decCol(name string, d uint8) *mysql.Field {
	return fld(name, mysql.MYSQL_TYPE_NEWDECIMAL, 0, 63, d)
}
func dblCol(name string) *mysql.Field { return fld(name, mysql.MYSQL_TYPE_DOUBLE, 0, 63, 31) }

// streamsOf builds one fakeStream per block of rows, all with cols.
func streamsOf(cols []*mysql.Field, blocks ...[][]*string) []*fakeStream {
	var out []*fakeStream
	for _, b := range blocks {
		out = append(out, &fakeStream{cols: cols, rows: b})
	}
	return out
}

func asRowStreams(fs []*fakeStream) []rows.Stream {
	out := make([]rows.Stream, len(fs))
	for i, f := range fs {
		out[i] = f
	}
	return out
}

// runMerge merges the streams under spec and returns the rows as "a|b"
// lines, or the error.
func runMerge(t *testing.T, m *ResultMerger, spec *router.Merge, fs []*fakeStream, budget int64) ([]string, error) {
	t.Helper()
	plan := &router.Plan{Kind: router.KindSelect, Merge: spec, Routes: make([]router.Route, len(fs))}
	rs, err := m.Merge(context.Background(), plan, asRowStreams(fs), budget)
	if err != nil {
		for i, f := range fs {
			if !f.closed {
				t.Errorf("stream %d not closed after Merge failed", i)
			}
		}
		return nil, err
	}
	defer func() {
		rs.Close()
		for i, f := range fs {
			if !f.closed {
				t.Errorf("stream %d not closed after Close", i)
			}
		}
	}()
	var out []string
	for {
		row, err := rs.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if len(row) != len(rs.Columns()) {
			t.Fatalf("row has %d values, result %d columns", len(row), len(rs.Columns()))
		}
		parts := make([]string, len(row))
		for i, v := range row {
			if v == nil {
				parts[i] = "NULL"
			} else {
				parts[i] = string(v)
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
}

// mysqlCode is the error number a client would see for err: the number
// the proxy's error boundary gives the merge's own errors (package proxy's
// TestMergeErrorNumbers holds the boundary to it), a MySQL error's own
// number, and 1105 for anything else.
func mysqlCode(err error) uint16 {
	var (
		my  *mysql.MyError
		ns  *NotSupportedError
		sre *ScatterRowsError
		mme *MemoryError
	)
	switch {
	case err == nil:
		return 0
	case errors.As(err, &my):
		return my.Code
	case errors.As(err, &ns):
		return mysql.ER_NOT_SUPPORTED_YET
	case errors.As(err, &sre):
		return mysql.ER_TOO_BIG_SELECT
	case errors.As(err, &mme):
		return mysql.ER_OUT_OF_SORTMEMORY
	}
	return mysql.ER_UNKNOWN_ERROR
}
