package proxy

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/router"
)

// SHOW SHARDING BINDING ORPHANS checks, on live data, the promise that
// declaring binding tables makes (router/binding.go): every child row
// lives on the data node paired with its parent's, so a join on the
// foreign key alone, which the proxy runs data node by data node, finds
// it. For each child table of a binding group and each of its data nodes
// it counts the rows there and those whose parent (the row of the
// group's first table with the same key, the parent's
// keyGenerateStrategy column) is not on the paired data node: rows such
// a join would miss. A group whose first table has no key column is
// listed with NULL counts.

// bindingOrphans answers SHOW SHARDING BINDING ORPHANS.
func (s *Session) bindingOrphans(ctx context.Context) ([]*mysql.Field, []Row, error) {
	cols := []*mysql.Field{stringColumn("child_table"), stringColumn("parent_table"), stringColumn("key_column"),
		stringColumn("child_data_node"), stringColumn("parent_data_node"), intColumn("child_rows"), intColumn("rows_without_parent_here")}
	var rows []Row
	for _, bp := range s.srv.rules.BindingPairs() {
		for _, n := range bp.Nodes {
			child, parent := n[0], n[1]
			if bp.Key == "" {
				rows = append(rows, rowOf(bp.Child, bp.Parent, nil, child.String(), parent.String(), nil, nil))
				continue
			}
			key := quoteName(bp.Key)
			sql := fmt.Sprintf("SELECT COUNT(*), COALESCE(SUM(NOT EXISTS (SELECT 1 FROM %s p WHERE p.%s = c.%s)), 0) FROM %s c",
				quoteName(parent.Table), key, key, quoteName(child.Table))
			r := router.Route{DataSource: child.DataSource, Nodes: []config.DataNode{child, parent}, SQL: sql}
			_, got, err := s.srv.fetch(ctx, poolSource{s}, r)
			if err != nil {
				return nil, nil, fmt.Errorf("checking %s against %s: %w", child, parent, err)
			}
			if len(got) != 1 || len(got[0]) != 2 {
				return nil, nil, &InternalError{Msg: "binding check: unexpected result of " + strings.TrimSpace(sql)}
			}
			rows = append(rows, rowOf(bp.Child, bp.Parent, bp.Key, child.String(), parent.String(), atoi64(got[0][0]), atoi64(got[0][1])))
		}
	}
	return cols, rows, nil
}

func atoi64(b []byte) int64 {
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int64(c-'0')
	}
	return n
}
