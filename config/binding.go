package config

import "strings"

// Binding tables, as ShardingSphere means them: declaring tables in one
// bindingTables group is the operator's promise that related rows (a
// child and its parent) have the same sharding values, so they live on
// paired data nodes (the same slot). ORMs join a child to its parent on
// the foreign key alone (Django select_related, Sequelize include,
// Hibernate join fetch, GORM Joins):
//
//	... FROM order_items JOIN orders ON order_items.order_id = orders.order_id
//	WHERE order_items.user_id = 3
//
// With server.bindingJoins: declared (the default) such a join pairs data
// node by data node when the ON or WHERE clause equates the parent's key
// column (the group's first table's keyGenerateStrategy column, which a
// foreign key names) with a column of the child; strict pairs them only when the join equates all
// their sharding columns (a join on fewer is then one of
// unrelated sharded tables, 1235 across data nodes). A broken promise (a
// child row whose parent lives on another data node) makes such a join
// miss that row; SHOW SHARDING BINDING ORPHANS counts them on live data.

// BindingJoins says when a join of tables of one binding group pairs
// their data nodes.
type BindingJoins int

const (
	// BindingDeclared pairs them on a foreign-key join to one table's key
	// column, trusting the declaration (ShardingSphere's meaning).
	BindingDeclared BindingJoins = iota
	// BindingStrict pairs them only when the join equates all their
	// sharding columns.
	BindingStrict
)

// String returns the setting's name in the rules file.
func (b BindingJoins) String() string {
	if b == BindingStrict {
		return "strict"
	}
	return "declared"
}

// PairNodes pairs the data nodes of table other (named otherName) with
// those of the first table of its binding group: slots[i] is the index of
// the first table's data node paired with other's data node i, on the
// same data source with the same physical-name suffix (t_order_3 and
// t_order_item_3), as ShardingSphere pairs them, else by position when
// the data sources line up. It reports false when they do not pair one
// to one.
func PairNodes(first *TableRule, firstName string, other *TableRule, otherName string) ([]int, bool) {
	if len(other.DataNodes) != len(first.DataNodes) {
		return nil, false
	}
	bySuffix := make(map[DataNode]int, len(first.DataNodes))
	for i, n := range first.DataNodes {
		bySuffix[DataNode{n.DataSource, strings.TrimPrefix(n.Table, firstName)}] = i
	}
	slots := make([]int, len(other.DataNodes))
	ok := true
	for i, n := range other.DataNodes {
		s, found := bySuffix[DataNode{n.DataSource, strings.TrimPrefix(n.Table, otherName)}]
		if !found {
			ok = false
			break
		}
		slots[i] = s
	}
	if ok {
		return slots, true
	}
	for i, n := range other.DataNodes {
		if n.DataSource != first.DataNodes[i].DataSource {
			return nil, false
		}
		slots[i] = i
	}
	return slots, true
}

// BindingPair is a child table of a binding group with its parent (the
// group's first table) and their paired data nodes, for checking the
// group's promise on live data.
type BindingPair struct {
	Parent, Child string
	// Key is the parent's key column (its keyGenerateStrategy column),
	// which the child's foreign key of the same name refers to; "" when
	// the parent has none.
	Key string
	// Nodes are the pairs, child data node first, in the child's
	// data-node order; both of a pair are on one data source.
	Nodes [][2]DataNode
}

// BindingPairs returns every child table of every binding group with its
// parent and paired data nodes.
func (r *Rules) BindingPairs() []BindingPair {
	var out []BindingPair
	for _, group := range r.BindingGroups {
		var first *TableRule
		var firstName string
		for _, name := range group {
			rule := r.Table(name)
			if rule == nil {
				continue
			}
			if first == nil {
				first, firstName = rule, strings.ToLower(name)
				continue
			}
			slots, ok := PairNodes(first, firstName, rule, strings.ToLower(name))
			if !ok {
				continue
			}
			bp := BindingPair{Parent: firstName, Child: strings.ToLower(name), Key: first.KeyColumn}
			for i, n := range rule.DataNodes {
				bp.Nodes = append(bp.Nodes, [2]DataNode{n, first.DataNodes[slots[i]]})
			}
			out = append(out, bp)
		}
	}
	return out
}
