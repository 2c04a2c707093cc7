package router

import (
	"strings"

	"github.com/shardflake/shardflake/config"
)

// boundJoin reports whether two top-level references of different tables
// of one binding group pair under BindingDeclared: an equality of their
// blocks joins the parent's key column (the group's first table's
// keyGenerateStrategy column, which a foreign key names) to a column of
// the child, so
// each row joins its parent, which the declaration puts on the paired
// data node. A join on a column that does not identify the parent (both
// tables' user_id) relates rows the declaration says nothing about, and
// does not pair.
func (a *analysis) boundJoin(x, y *tableRef, eqs []colEq) bool {
	if a.r == nil || a.r.rules.Server.BindingJoins == config.BindingStrict {
		return false
	}
	if x.name == y.name || x.info.group < 0 || x.info.group != y.info.group {
		return false
	}
	// The parent is the group's first table; the join must name its key.
	parent, child := x, y
	if y.name == strings.ToLower(firstOfGroup(a.r.rules, x.info.group)) {
		parent, child = y, x
	}
	key := parent.info.rule.KeyColumn
	if key == "" || parent.name != strings.ToLower(firstOfGroup(a.r.rules, x.info.group)) {
		return false
	}
	for _, e := range eqs {
		if (e.ref1 == parent.idx && e.col1 == key && e.ref2 == child.idx) || (e.ref2 == parent.idx && e.col2 == key && e.ref1 == child.idx) {
			return true
		}
	}
	return false
}

func firstOfGroup(r *config.Rules, group int) string {
	if group < 0 || group >= len(r.BindingGroups) || len(r.BindingGroups[group]) == 0 {
		return ""
	}
	return r.BindingGroups[group][0]
}
