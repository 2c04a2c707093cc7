package proxy

import (
	"errors"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// The responses a shared connection's reader reads (multiplex.go): whole,
// into memory, before the session they belong to sees them.

// readResponse reads one whole response. An error return is the
// connection's failure (it is out of step); a backend error is in the
// response.
func (c *muxConn) readResponse(p []byte) (muxResponse, error) {
	var r muxResponse
	var err error
	wc := c.bc.wc
	switch {
	case len(p) == 0:
		return r, wire.ErrMalformed
	case wire.IsOK(p):
		ok, err := wire.ParseOK(p, false)
		if err != nil {
			return r, err
		}
		r.ok, r.status, r.warns = ok, ok.Status, ok.Warnings
		return r, c.single(r.status)
	case wire.IsErr(p):
		r.err = wire.ParseErr(p)
		return r, nil
	case wire.IsLocalInfile(p):
		return r, errors.New("multiplex: LOCAL INFILE request")
	}
	n, _, _, ok := wire.ReadLenEncInt(p)
	if !ok || n == 0 {
		return r, wire.ErrMalformed
	}
	var size int64
	keep := func(p []byte) ([]byte, error) {
		size += int64(len(p)) + 32
		if size > c.set.budget {
			return nil, fmt.Errorf("multiplex: a response over %d bytes", c.set.budget)
		}
		return append([]byte(nil), p...), nil
	}
	r.columns = make([][]byte, n)
	for i := range r.columns {
		p, err := wc.ReadPacket()
		if err != nil {
			return r, err
		}
		if r.columns[i], err = keep(p); err != nil {
			return r, err
		}
	}
	if p, err = wc.ReadPacket(); err != nil {
		return r, err
	}
	if !wire.IsEOF(p) {
		return r, fmt.Errorf("%w: no EOF after column definitions", wire.ErrMalformed)
	}
	for {
		p, err := wc.ReadPacket()
		if err != nil {
			return r, err
		}
		if wire.IsEOF(p) {
			r.warns, r.status = wire.ParseEOF(p)
			return r, c.single(r.status)
		}
		if wire.IsErr(p) {
			// An error after the column definitions (at a later row):
			// the session sends the rows before it, then the error,
			// as MariaDB sent them.
			r.err = wire.ParseErr(p)
			return r, nil
		}
		row, err := keep(p)
		if err != nil {
			return r, err
		}
		r.rows = append(r.rows, row)
	}
}

// readPrepare reads a COM_STMT_PREPARE response. The definitions of
// parameters are skipped; the columns' only say whether a text query may
// run the statement (textExact): the execute's response has the columns
// its session sends.
func (c *muxConn) readPrepare(p []byte) (muxResponse, error) {
	var r muxResponse
	var err error
	wc := c.bc.wc
	if wire.IsErr(p) {
		r.err = wire.ParseErr(p)
		return r, nil
	}
	if r.prep, err = wire.ParsePrepareOK(p); err != nil {
		return r, err
	}
	if r.prep.Params > 0 {
		for range r.prep.Params + 1 {
			if _, err := wc.ReadPacket(); err != nil {
				return r, err
			}
		}
	}
	if r.prep.Columns > 0 {
		cols := make([]*mysql.Field, r.prep.Columns)
		for i := range cols {
			p, err := wc.ReadPacket()
			if err != nil {
				return r, err
			}
			if cols[i], err = c.column(p); err != nil {
				return r, err
			}
		}
		if _, err := wc.ReadPacket(); err != nil {
			return r, err
		}
		r.exact = textExact(cols)
	}
	return r, nil
}

// single checks that a response is the command's last: a plain SELECT
// has one result.
func (c *muxConn) single(status uint16) error {
	if status&mysql.SERVER_MORE_RESULTS_EXISTS != 0 {
		return errors.New("multiplex: a command with several results")
	}
	return nil
}

// column parses a column definition, from the connection's cache when
// the same definition came before.
func (c *muxConn) column(p []byte) (*mysql.Field, error) {
	c.colMu.Lock()
	f, ok := c.columns[string(p)]
	c.colMu.Unlock()
	if ok {
		return f, nil
	}
	f, err := wire.ParseColumn(p, c.bc.extendedMetadata)
	if err != nil {
		return nil, err
	}
	c.colMu.Lock()
	if len(c.columns) >= maxCachedColumns {
		c.columns = map[string]*mysql.Field{}
	}
	c.columns[string(p)] = f
	c.colMu.Unlock()
	return f, nil
}
