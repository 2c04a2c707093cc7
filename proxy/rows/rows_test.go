package rows

import (
	"errors"
	"io"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// TestCloneOutlivesTheBuffer checks that a clone keeps its values when
// the buffer the row pointed into is overwritten, keeps NULL apart from
// the empty string, and cannot be grown into a neighbour's bytes.
func TestCloneOutlivesTheBuffer(t *testing.T) {
	buf := []byte("abcdef")
	r := Row{buf[0:2], nil, buf[2:2], buf[2:6]}
	c := r.Clone()
	for i := range buf {
		buf[i] = '#'
	}
	if string(c[0]) != "ab" || c[1] != nil || c[2] == nil || len(c[2]) != 0 || string(c[3]) != "cdef" {
		t.Fatalf("clone = %q, want [ab NULL '' cdef]", c)
	}
	_ = append(c[0], 'x')
	if string(c[3]) != "cdef" {
		t.Errorf("appending to one value changed the next: %q", c[3])
	}
}

type closer struct {
	err    error
	closed bool
}

func (c *closer) Columns() []*mysql.Field { return nil }
func (c *closer) Next() (Row, error)      { return nil, io.EOF }
func (c *closer) Close() error            { c.closed = true; return c.err }

// TestCloseAll checks that every stream is closed, nil ones skipped, and
// the first error is the one returned.
func TestCloseAll(t *testing.T) {
	first, second := errors.New("first"), errors.New("second")
	a, b, c := &closer{}, &closer{err: first}, &closer{err: second}
	if err := CloseAll([]Stream{a, nil, b, c}); !errors.Is(err, first) {
		t.Errorf("CloseAll = %v, want the first error", err)
	}
	for i, s := range []*closer{a, b, c} {
		if !s.closed {
			t.Errorf("stream %d not closed", i)
		}
	}
}
