package router

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// A UNION whose branches read different tables, SELECT ... FROM t_order
// UNION ALL SELECT ... FROM t_order_item [ORDER BY ...] [LIMIT ...],
// cannot run whole on each data node (liftUnion) when its branches reach
// data nodes that do not pair up. Each branch is then planned alone, as
// the SELECT it is, with its own merge; the proxy runs the branches one
// after the other and merges their results as the UNION does (Merge.SetOp):
// rows concatenated, duplicates dropped for UNION DISTINCT, the UNION's
// ORDER BY and LIMIT applied last. Only when the whole statement cannot
// be routed: a UNION that reaches one data node, or that liftUnion
// plans, keeps its plan.

// SetOpBranches is a UNION whose branches the proxy runs apart and
// merges: Branches are the SELECTs' plans in the statement's order, and
// the Merge that holds it (Distinct, OrderBy by result column, Limit) is
// the UNION's own, over the branches' rows concatenated; the plan's
// Routes are all the branches' routes, for metrics and explain output. The result's
// columns are the first branch's; the proxy refuses the statement when
// the branches' column definitions or collations differ, where MariaDB
// would widen them.
type SetOpBranches struct {
	Branches []*Plan `json:"branches"`
}

// setOpBranches plans the branches of such a UNION at Prepare.
type setOpBranches struct {
	branches []*Prepared
	// params is each branch's count of ?s, which take the statement's
	// arguments in order.
	params []int
	merge  *selectMerge
}

// prepareBranches plans so's branches apart when it is a UNION of plain
// SELECTs, all UNION ALL or all UNION DISTINCT, whose ORDER BY names
// result columns by position or by the first branch's names; nil
// otherwise (the statement keeps the error its routing gives). so must
// not be rewritten yet.
func (r *Router) prepareBranches(a *analysis, so *ast.SetOprStmt) *setOpBranches {
	if so.With != nil || so.SelectList == nil || so.SelectList.With != nil || len(so.SelectList.Selects) < 2 {
		return nil
	}
	sb := &setOpBranches{merge: &selectMerge{}}
	var first *ast.SelectStmt
	var distinct *bool
	for i, n := range so.SelectList.Selects {
		sel, op := unionBranchSelect(n)
		if sel == nil || sel.Kind != ast.SelectStmtKindSelect || sel.SelectIntoOpt != nil || sel.With != nil {
			return nil
		}
		if o := sel.SelectStmtOpts; o != nil && o.CalcFoundRows {
			return nil
		}
		if i == 0 {
			first = sel
		} else {
			if op == nil || *op != ast.UnionAll && *op != ast.Union {
				return nil
			}
			if isDistinct := *op == ast.Union; distinct == nil {
				distinct = &isDistinct
			} else if *distinct != isDistinct {
				return nil // MariaDB's mixed UNION: left to the routing's error
			}
		}
		text, err := restoreBranch(sel)
		if err != nil {
			return nil
		}
		stmt, err := ParseOne(text)
		if err != nil {
			return nil
		}
		p, err := r.PrepareWith(stmt, text, a.db, PrepareOptions{ZeroKey: a.zeroKey})
		if err != nil || p.kind != KindSelect {
			return nil
		}
		sb.branches = append(sb.branches, p)
		sb.params = append(sb.params, p.params)
	}
	if so.OrderBy != nil {
		for _, by := range so.OrderBy.Items {
			col, ok := unionOrderColumn(first, by.Expr)
			if !ok {
				return nil
			}
			sb.merge.merge.OrderBy = append(sb.merge.merge.OrderBy, OrderKey{Column: ColumnRef(col), Desc: by.Desc})
		}
	}
	sb.merge.merge.Distinct = *distinct
	return sb
}

// restoreBranch restores a UNION's branch as a statement of its own,
// each unaliased expression of its select list named by the client's
// text (COUNT(*), not the COUNT(1) the restored text would give), as the
// UNION's result names it.
func restoreBranch(sel *ast.SelectStmt) (string, error) {
	var named []*ast.SelectField
	for _, f := range sel.Fields.Fields {
		if _, ok := f.Expr.(*ast.ColumnNameExpr); ok || f.Expr == nil || f.AsName.O != "" || f.Text() == "" {
			continue
		}
		f.AsName = ast.NewCIStr(f.Text())
		named = append(named, f)
	}
	text, err := restoreSQL(sel)
	for _, f := range named {
		f.AsName = ast.CIStr{}
	}
	return text, err
}

// bindLimit takes the UNION's LIMIT, once so is rewritten (its ?s
// numbered); false when it is neither an integer nor a ?.
func (sb *setOpBranches) bindLimit(so *ast.SetOprStmt) bool {
	var err error
	sb.merge.limit, err = limitOperandsOf(so.Limit)
	return err == nil
}

// bind binds every branch with its share of args, and the UNION's merge.
func (sb *setOpBranches) bind(args []any, tables []string) (*Plan, error) {
	plan := &Plan{Kind: KindSelect, Type: RouteMulti, Tables: tables}
	set := &SetOpBranches{}
	at := 0
	for i, p := range sb.branches {
		var bargs []any
		if n := sb.params[i]; n > 0 {
			bargs = args[at : at+n]
			at += n
		}
		bp, err := p.Bind(bargs)
		if err != nil {
			return nil, err
		}
		set.Branches = append(set.Branches, bp)
		plan.Routes = append(plan.Routes, bp.Routes...)
	}
	var err error
	if plan.Merge, _, err = sb.merge.bind(args); err != nil {
		return nil, err
	}
	plan.Merge.SetOp = set
	return plan, nil
}
