package proxy

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser"

	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/proxy/merge"
	"github.com/shardflake/shardflake/router"
)

// maxProbes bounds the probe results kept; past it they are dropped and
// probed again as statements need them.
const maxProbes = 4096

// routeProbe is the Server's merge.CollationSource. It prepares a route's SQL
// (COM_STMT_PREPARE, which runs nothing) on a connection of the route's
// data source with character_set_results = NULL: MariaDB then describes
// every result column in its own charset, with its own collation id,
// expressions and aggregates included. Results are kept by SQL text until
// DDL runs through the proxy, by the SQL's normalized form (literals
// replaced by ?): the collations of a result's columns do not depend on
// the values a statement compares with, so a workload of text statements
// that differ only in literals is probed once.
type routeProbe struct {
	srv  *snapshot
	seen *boundedMap[string, []uint16] // normalized route SQL -> collation ids
	// exact holds the results of routes with placeholders by their SQL as
	// it is: such a text comes back with every execution, and finding it
	// costs no normalizing (which parses the SQL with TiDB's lexer).
	exact *boundedMap[string, []uint16]
}

func newRouteProbe(srv *snapshot) *routeProbe {
	return &routeProbe{srv: srv, seen: newBoundedMap[string, []uint16](maxProbes), exact: newBoundedMap[string, []uint16](maxProbes)}
}

// RouteCollations implements merge.CollationSource.
func (c *routeProbe) RouteCollations(ctx context.Context, route router.Route) ([]uint16, error) {
	if ids, ok := c.exact.get(route.SQL); ok {
		return ids, nil
	}
	key := parser.Normalize(route.SQL, "ON") // "ON": literals become ?
	ids, ok := c.seen.get(key)
	if !ok {
		var err error
		if ids, err = c.probe(ctx, route); err != nil {
			return nil, err
		}
		c.seen.put(key, ids)
	}
	if len(route.Args) > 0 {
		c.exact.put(route.SQL, ids)
	}
	return ids, nil
}

// forget drops every probe result; DDL may have changed collations.
func (c *routeProbe) forget() {
	c.seen.clear()
	c.exact.clear()
}

// probe prepares route's SQL and reads its column definitions.
func (c *routeProbe) probe(ctx context.Context, route router.Route) ([]uint16, error) {
	p, err := c.srv.pool(route.DataSource, false)
	if err != nil {
		return nil, err
	}
	bcs, err := p.get(ctx, 1)
	if err != nil {
		return nil, err
	}
	bc := bcs[0]
	defer p.put(bc)
	if err := bc.apply("character_set_results = NULL"); err != nil {
		return nil, err
	}
	defer bc.apply("") // back to the baseline charset for the next user
	cols, err := bc.prepareColumns(route.SQL)
	if err != nil {
		return nil, err
	}
	ids := make([]uint16, len(cols))
	for i, f := range cols {
		if f.Charset != 63 {
			ids[i] = f.Charset
		}
	}
	return ids, nil
}

// dialectProbe is the Server's merge.DialectSource: it asks the default data
// source once, by running the expressions whose results differ, and keeps
// the answer. While the data source cannot be asked, it answers the zero
// Dialect and asks again next time.
type dialectProbe struct {
	srv   *snapshot
	known atomic.Pointer[merge.Dialect]
}

// Dialect implements merge.DialectSource.
func (d *dialectProbe) Dialect(ctx context.Context) merge.Dialect {
	if k := d.known.Load(); k != nil {
		return *k
	}
	got, err := d.probe(ctx)
	if err != nil {
		return merge.Dialect{}
	}
	d.known.Store(&got)
	return got
}

func (d *dialectProbe) probe(ctx context.Context) (merge.Dialect, error) {
	var dl merge.Dialect
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
