package proxy

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser"

	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

// CollationSource tells the merge the collation MariaDB compares each
// result column with. MariaDB's column definitions name the connection's
// collation (collation_connection), not the column's, so a
// utf8mb4_unicode_ci column, a latin1_swedish_ci column read over a utf8mb4
// connection, or MAX() of either, all look like utf8mb4_general_ci.
type CollationSource interface {
	// RouteCollations returns the collation id of each column of route's
	// result (0 for a column without one), as the data source defines
	// them.
	RouteCollations(ctx context.Context, route router.Route) ([]uint16, error)
}

// collationProbeTimeout bounds a collation probe that runs before a statement's
// routes (MergeCheck has no context of its own).
const collationProbeTimeout = 10 * time.Second

// maxProbes bounds the probe results kept; past it they are dropped and
// probed again as statements need them.
const maxProbes = 4096

// routeProbe is the Server's CollationSource. It prepares a route's SQL
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

// RouteCollations implements CollationSource.
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

// forgetCollations tells merger's collation cache, if it has one, that
// the schema changed.
func forgetCollations(merger Merger) {
	if m, ok := merger.(*ResultMerger); ok {
		if p, ok := m.Collations.(*routeProbe); ok {
			p.forget()
		}
	}
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
	if err := bc.send(mysql.COM_STMT_PREPARE, route.SQL); err != nil {
		return nil, err
	}
	pkt, err := bc.wc.ReadPacket()
	if err != nil {
		return nil, bc.lost(err)
	}
	if wire.IsErr(pkt) {
		return nil, wire.ParseErr(pkt)
	}
	if len(pkt) < 9 || pkt[0] != wire.HeaderOK {
		return nil, bc.lost(fmt.Errorf("%w: prepare response", wire.ErrMalformed))
	}
	id := binary.LittleEndian.Uint32(pkt[1:5])
	ncols := int(binary.LittleEndian.Uint16(pkt[5:7]))
	nparams := int(binary.LittleEndian.Uint16(pkt[7:9]))
	// Parameter definitions, then column definitions, each block
	// closed by an EOF packet.
	if nparams > 0 {
		for range nparams + 1 {
			if _, err := bc.wc.ReadPacket(); err != nil {
				return nil, bc.lost(err)
			}
		}
	}
	ids := make([]uint16, ncols)
	if ncols > 0 {
		for i := range ncols {
			pkt, err := bc.wc.ReadPacket()
			if err != nil {
				return nil, bc.lost(err)
			}
			f, err := wire.ParseColumn(pkt)
			if err != nil {
				return nil, bc.lost(err)
			}
			if f.Charset != 63 {
				ids[i] = f.Charset
			}
		}
		if pkt, err := bc.wc.ReadPacket(); err != nil || !wire.IsEOF(pkt) {
			return nil, bc.lost(fmt.Errorf("%w: no EOF after the prepared statement's columns", wire.ErrMalformed))
		}
	}
	// COM_STMT_CLOSE has no response.
	var arg [4]byte
	binary.LittleEndian.PutUint32(arg[:], id)
	if err := bc.send(mysql.COM_STMT_CLOSE, string(arg[:])); err != nil {
		return nil, err
	}
	return ids, nil
}

// needsCollations reports whether merging plan compares values, so that
// string columns need their real collations.
func needsCollations(spec *router.Merge) bool {
	if spec == nil {
		return false
	}
	return len(spec.Sort) > 0 || spec.Group != nil || spec.Having != nil || spec.Distinct || len(spec.OrderBy) > 0
}
