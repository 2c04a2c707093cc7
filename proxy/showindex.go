package proxy

import (
	"context"
	"strconv"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
)

// indexColumn is a row of SHOW INDEX: an index's logical name and the
// column's Seq_in_index.
type indexColumn struct{ index, seq string }

// indexCardinality returns the Cardinality of every index column of a
// sharded table summed over its data nodes (one query of
// information_schema.STATISTICS, which SHOW INDEX reads, per data
// source): the logical table's figure, as ShardingSphere reports it, where
// the first data node's alone is a fraction of it. A column no data node
// has a figure for (NULL) is left out. Cardinalities are estimates;
// after ANALYZE TABLE a primary key's is its data node's row count, so
// the sum is the logical table's.
func (s *Session) indexCardinality(ctx context.Context, nodes []config.DataNode) (map[indexColumn]uint64, error) {
	rules := s.srv.rules
	tables := map[string][]string{} // ds -> physical tables
	var sources []string
	for _, n := range nodes {
		if tables[n.DataSource] == nil {
			sources = append(sources, n.DataSource)
		}
		tables[n.DataSource] = append(tables[n.DataSource], n.Table)
	}
	out := map[indexColumn]uint64{}
	for _, ds := range sources {
		q := []byte("SELECT TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX, CARDINALITY FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ")
		q, _ = sqlarg.AppendLiteral(q, rules.DataSource(ds).Database, sqlarg.Backslash)
		q = append(q, " AND TABLE_NAME IN ("...)
		for i, t := range tables[ds] {
			if i > 0 {
				q = append(q, ", "...)
			}
			q, _ = sqlarg.AppendLiteral(q, t, sqlarg.Backslash)
		}
		q = append(q, ')')
		rows, err := s.queryRows(ctx, ds, string(q))
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if len(r) < 4 || r[0] == nil || r[1] == nil || r[3] == nil {
				continue
			}
			v, err := strconv.ParseUint(string(r[3]), 10, 64)
			if err != nil {
				continue
			}
			k := indexColumn{s.srv.logicalConstraint(string(r[0]), string(r[1])), string(r[2])}
			out[k] += v
		}
	}
	return out, nil
}
