package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// schemaCollations is the Server's CollationSource: it reads the
// collations of a physical table's columns from its data source's
// information_schema the first time a merge needs them and keeps them
// until DDL runs through the proxy (Server.schemaChanged).
//
// Only plain columns resolve (the field names its origin table and
// column); an expression keeps the collation its definition implies, and
// the merge's order check refuses the statement if the routes' order
// proves that wrong.
type schemaCollations struct {
	srv    *Server
	mu     sync.Mutex
	tables map[collationTable]map[string]uint16 // column (lower case) -> collation id
}

type collationTable struct{ ds, schema, table string }

func newSchemaCollations(srv *Server) *schemaCollations {
	return &schemaCollations{srv: srv, tables: map[collationTable]map[string]uint16{}}
}

// ColumnCollation implements CollationSource.
func (c *schemaCollations) ColumnCollation(ctx context.Context, ds string, f *mysql.Field) (uint16, error) {
	if len(f.OrgTable) == 0 || len(f.OrgName) == 0 || len(f.Schema) == 0 {
		return 0, nil
	}
	key := collationTable{ds: ds, schema: string(f.Schema), table: string(f.OrgTable)}
	c.mu.Lock()
	cols, ok := c.tables[key]
	c.mu.Unlock()
	if !ok {
		var err error
		if cols, err = c.fetch(ctx, key); err != nil {
			return 0, err
		}
		c.mu.Lock()
		c.tables[key] = cols
		c.mu.Unlock()
	}
	return cols[strings.ToLower(string(f.OrgName))], nil
}

// forget drops everything learnt; DDL may have changed collations.
func (c *schemaCollations) forget() {
	c.mu.Lock()
	c.tables = map[collationTable]map[string]uint16{}
	c.mu.Unlock()
}

// forgetCollations tells merger's collation cache, if it has one, that
// the schema changed.
func forgetCollations(merger Merger) {
	if m, ok := merger.(*ResultMerger); ok {
		if sc, ok := m.Collations.(*schemaCollations); ok {
			sc.forget()
		}
	}
}

// fetch reads the collation ids of a table's string columns.
func (c *schemaCollations) fetch(ctx context.Context, key collationTable) (map[string]uint16, error) {
	p, err := c.srv.pool(key.ds, false)
	if err != nil {
		return nil, err
	}
	bcs, err := p.get(ctx, 1)
	if err != nil {
		return nil, err
	}
	bc := bcs[0]
	defer p.put(bc)
	if err := bc.apply(""); err != nil {
		return nil, err
	}
	q := "SELECT c.COLUMN_NAME, co.ID FROM information_schema.COLUMNS c" +
		" JOIN information_schema.COLLATIONS co ON co.COLLATION_NAME = c.COLLATION_NAME" +
		" WHERE c.TABLE_SCHEMA = " + quoteString(key.schema) + " AND c.TABLE_NAME = " + quoteString(key.table)
	if err := bc.send(mysql.COM_QUERY, q); err != nil {
		return nil, err
	}
	h, err := bc.readHead()
	if err != nil {
		return nil, err
	}
	if len(h.columns) != 2 {
		return nil, &InternalError{Msg: "collation lookup returned no rows"}
	}
	cols := map[string]uint16{}
	for {
		pkt, err := bc.readRow()
		if errors.Is(err, io.EOF) {
			return cols, nil
		}
		if err != nil {
			return nil, err
		}
		row, err := wire.SplitTextRow(pkt, 2, nil)
		if err != nil {
			bc.broken = true
			return nil, &DataSourceError{DataSource: key.ds, Lost: true, Err: err}
		}
		id, err := strconv.ParseUint(string(row[1]), 10, 16)
		if err != nil {
			return nil, &InternalError{Msg: fmt.Sprintf("collation id %q of %s.%s", row[1], key.table, row[0])}
		}
		cols[strings.ToLower(string(row[0]))] = uint16(id)
	}
}

// quoteString writes s as a SQL string literal (backslash escapes, as the
// proxy's backends run without NO_BACKSLASH_ESCAPES).
func quoteString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch r {
		case '\'', '\\':
			b.WriteByte('\\')
		case 0:
			b.WriteString("\\0")
			continue
		}
		b.WriteRune(r)
	}
	b.WriteByte('\'')
	return b.String()
}
