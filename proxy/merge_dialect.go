package proxy

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// Dialect is what the merge computes as the data sources' MariaDB does
// where MariaDB versions differ, so that a merged value is the one the
// data sources' own server would give, whichever patch release it is.
// The zero value is MariaDB 10.11.19's behaviour.
type Dialect struct {
	// NegativeZero: a DOUBLE negative zero prints as -0 (MariaDB 10.11.14
	// and earlier); otherwise it prints as 0.
	NegativeZero bool
	// ZeroQuotientOutOfRange: a negative DECIMAL without a fraction DIV a
	// BIGINT UNSIGNED, truncated to zero, is out of the UNSIGNED range
	// (1690; MariaDB 10.11.14 and earlier); otherwise it is 0.
	ZeroQuotientOutOfRange bool
}

// DialectSource tells the merge its Dialect.
type DialectSource interface {
	Dialect(ctx context.Context) Dialect
}

// dialectProbe is the Server's DialectSource: it asks the default data
// source once, by running the expressions whose results differ, and keeps
// the answer. While the data source cannot be asked, it answers the zero
// Dialect and asks again next time.
type dialectProbe struct {
	srv   *snapshot
	known atomic.Pointer[Dialect]
}

// Dialect implements DialectSource.
func (d *dialectProbe) Dialect(ctx context.Context) Dialect {
	if k := d.known.Load(); k != nil {
		return *k
	}
	got, err := d.probe(ctx)
	if err != nil {
		return Dialect{}
	}
	d.known.Store(&got)
	return got
}

func (d *dialectProbe) probe(ctx context.Context) (Dialect, error) {
	var dl Dialect
	p, err := d.srv.pool(d.srv.rules.DefaultDataSource, false)
	if err != nil {
		return dl, err
	}
	bcs, err := p.get(ctx, 1)
	if err != nil {
		return dl, err
	}
	bc := bcs[0]
	defer p.put(bc)
	// A server error (a backend that is not MariaDB may refuse the SQL)
	// is an answer; a lost connection is not.
	var me *mysql.MyError
	zero, err := firstValue(bc, "SELECT 0e0 * -1")
	if err != nil && !errors.As(err, &me) {
		return dl, err
	}
	dl.NegativeZero = err == nil && zero == "-0"
	_, err = firstValue(bc, "SELECT CAST(-1 AS DECIMAL) DIV CAST(5 AS UNSIGNED)")
	if err != nil && !errors.As(err, &me) {
		return dl, err
	}
	dl.ZeroQuotientOutOfRange = me != nil && me.Code == mysql.ER_DATA_OUT_OF_RANGE
	return dl, nil
}

// firstValue runs sql and returns the text of its first row's first
// column.
func firstValue(bc *backendConn, sql string) (string, error) {
	if err := bc.send(mysql.COM_QUERY, sql); err != nil {
		return "", err
	}
	h, err := bc.readHead()
	if err != nil {
		return "", err
	}
	if h.columns == nil {
		return "", wire.ErrMalformed
	}
	row, err := bc.readRow()
	if err != nil {
		return "", err
	}
	v, _, _, _ := wire.ReadLenEncString(row)
	s := string(v)
	return s, bc.discardRows()
}
