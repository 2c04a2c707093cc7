package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// maxIDer is a key generator that can say the largest key it issues; one
// that cannot is taken to issue any positive BIGINT (a Snowflake id uses
// 63 bits).
type maxIDer interface{ MaxID() int64 }

// integerMax is the largest value of MariaDB's integer types.
var integerMax = map[string]uint64{
	"tinyint": math.MaxInt8, "smallint": math.MaxInt16, "mediumint": 1<<23 - 1,
	"int": math.MaxInt32, "integer": math.MaxInt32, "bigint": math.MaxInt64,
}

// KeyColumnWarnings checks each existing sharded table's key column
// against its key generator: a column too narrow for the keys (a
// Snowflake generator on an INT column) fails the first INSERT that needs
// a key with 1264 "Out of range value", which is better said at start.
// Tables not created yet are skipped. It reads each table's first data
// node once; the answer is a warning per such table, in table order.
func (s *Server) KeyColumnWarnings(ctx context.Context) []string {
	var out []string
	names := make([]string, 0, len(s.current().rules.Tables))
	for name := range s.current().rules.Tables {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t := s.current().rules.Tables[name]
		gen := s.keys[t.KeyGenerator]
		if t.KeyColumn == "" || gen == nil || len(t.DataNodes) == 0 {
			continue
		}
		var limit int64 = math.MaxInt64
		if m, ok := gen.(maxIDer); ok {
			limit = m.MaxID()
		}
		home := t.DataNodes[0]
		db := s.current().rules.DataSource(home.DataSource).Database
		q := []byte("SELECT DATA_TYPE, COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ")
		q, _ = sqlarg.AppendLiteral(q, db, sqlarg.Backslash)
		q = append(q, " AND TABLE_NAME = "...)
		q, _ = sqlarg.AppendLiteral(q, home.Table, sqlarg.Backslash)
		q = append(q, " AND COLUMN_NAME = "...)
		q, _ = sqlarg.AppendLiteral(q, t.KeyColumn, sqlarg.Backslash)
		res, err := s.queryOn(ctx, home.DataSource, string(q))
		if err != nil || len(res) == 0 {
			continue
		}
		dataType, columnType := strings.ToLower(string(res[0][0])), strings.ToLower(string(res[0][1]))
		max, isInt := integerMax[dataType]
		if !isInt {
			continue
		}
		if strings.Contains(columnType, "unsigned") {
			max = max*2 + 1
		}
		if uint64(limit) > max {
			out = append(out, fmt.Sprintf("key column %s.%s is %s (up to %d) but key generator %s issues keys up to %d: the first INSERT that needs a key will fail with 1264 Out of range value; make the column BIGINT, or use a key generator whose keys fit", name, t.KeyColumn, columnType, max, t.KeyGenerator, limit))
		}
	}
	return out
}

// queryOn runs a small metadata query on data source ds without a
// session and returns its rows.
func (s *Server) queryOn(ctx context.Context, ds, sql string) ([]Row, error) {
	p, err := s.current().pool(ds, false)
	if err != nil {
		return nil, err
	}
	return queryPool(ctx, p, sql)
}

// queryPool runs a small metadata query on a connection of p and returns
// its rows.
func queryPool(ctx context.Context, p *pool, sql string) ([]Row, error) {
	bcs, err := p.get(ctx, 1)
	if err != nil {
		return nil, err
	}
	bc := bcs[0]
	defer p.put(bc)
	if err := bc.apply(""); err != nil {
		return nil, err
	}
	return bc.queryRows(sql)
}

// queryRows runs a small query on bc and returns its rows (none for a
// statement that returns an OK).
func (bc *backendConn) queryRows(sql string) ([]Row, error) {
	if err := bc.send(mysql.COM_QUERY, sql); err != nil {
		return nil, err
	}
	h, err := bc.readHead()
	if err != nil || h.columns == nil {
		return nil, err
	}
	var rows []Row
	for {
		pkt, err := bc.readRow()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		row, err := wire.SplitTextRow(pkt, len(h.columns), nil)
		if err != nil {
			bc.broken = true
			return nil, err
		}
		rows = append(rows, Row(row).Clone())
	}
}
