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
// ORDER BY and LIMIT applied last. INTERSECT and EXCEPT (their DISTINCT
// forms) run so too: the first branch's rows that the others' rows
// hold, or do not. Only when the whole statement cannot be routed: a
// UNION that reaches one data node, or that liftUnion plans, keeps its
// plan.

// SetOpBranches is a UNION whose branches the proxy runs apart and
// merges: Branches are the SELECTs' plans in the statement's order, and
// the Merge that holds it (Distinct, OrderBy by result column, Limit) is
// the UNION's own, over the branches' rows concatenated; the plan's
// Routes are all the branches' routes, for metrics and explain output. The result's
// columns are the first branch's; the proxy refuses the statement when
// the branches' column definitions or collations differ, where MariaDB
// would widen them.
type SetOpBranches struct {
	Operator SetOperator `json:"operator"`
	Branches []*Plan     `json:"branches"`
}

// SetOperator is the one operator between all the branches of a
// SetOpBranches.
type SetOperator uint8

// Set operators, NULL equal to NULL. INTERSECT and EXCEPT under the
// Merge's Distinct are the first branch's distinct rows that every other
// branch holds (INTERSECT) or none of them does (EXCEPT); without it they
// are INTERSECT ALL and EXCEPT ALL, which count: a row the first branch
// holds n times is kept as many times as every other branch holds it, up
// to n (INTERSECT ALL), or n less the times the others hold it (EXCEPT
// ALL).
const (
	SetOpUnion SetOperator = iota + 1
	SetOpIntersect
	SetOpExcept
)

// String returns the operator's SQL keyword, lower-case.
func (o SetOperator) String() string {
	switch o {
	case SetOpUnion:
		return "union"
	case SetOpIntersect:
		return "intersect"
	case SetOpExcept:
		return "except"
	}
	return "unknown"
}

// MarshalText writes the operator by name, so plans print readably.
func (o SetOperator) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// setOpBranches plans the branches of such a UNION at Prepare.
type setOpBranches struct {
	branches []*Prepared
	// params is each branch's count of ?s, which take the statement's
	// arguments in order.
	params   []int
	operator SetOperator
	merge    *selectMerge
}

// prepareBranches plans so's branches apart when it is a UNION,
// INTERSECT or EXCEPT of plain SELECTs with one operator throughout (all
// UNION ALL, all UNION DISTINCT, all INTERSECT [ALL] or all EXCEPT [ALL]),
// whose
// ORDER BY names
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
			if op == nil {
				return nil
			}
			operator, isDistinct := SetOpUnion, true
			switch *op {
			case ast.UnionAll:
				isDistinct = false
			case ast.Union:
			case ast.Intersect:
				operator = SetOpIntersect
			case ast.Except:
				operator = SetOpExcept
			case ast.IntersectAll:
				operator, isDistinct = SetOpIntersect, false
			case ast.ExceptAll:
				operator, isDistinct = SetOpExcept, false
			default:
				return nil
			}
			if distinct == nil {
				distinct, sb.operator = &isDistinct, operator
			} else if *distinct != isDistinct || sb.operator != operator {
				return nil // mixed operators: left to the routing's error
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

// unionOrderError is the error MariaDB gives for a set operation's
// ORDER BY that names no result column, when the proxy cannot run the
// statement whole on one data node. A column named with its table's (or
// schema's and table's) name, anywhere in the ORDER BY outside a
// subquery, is MariaDB's 1250 as it parses the statement, before it reads
// a branch's tables: the result's columns belong to no table. Otherwise
// the result's columns take the first SELECT's names, and the ORDER BY
// sees only those (1054); nil unless every ORDER BY item up to the
// unknown name is a position in range or a bare name, and the first
// SELECT names each of its columns plainly (no wildcard, no unaliased
// expression, whose name is its text).
func unionOrderError(so *ast.SetOprStmt) error {
	if so.OrderBy == nil || so.SelectList == nil || len(so.SelectList.Selects) == 0 {
		return nil
	}
	for _, by := range so.OrderBy.Items {
		var names nameFinder
		by.Expr.Accept(&names)
		for _, n := range names.names {
			if n.Name.Table.O != "" {
				return newError(CodeTableNotHere, "42000", "Table '%s' from one of the SELECTs cannot be used in ORDER BY", n.Name.Table.O)
			}
		}
	}
	first, _ := unionBranchSelect(so.SelectList.Selects[0])
	if first == nil || first.Fields == nil {
		return nil
	}
	for _, f := range first.Fields.Fields {
		if _, isColumn := f.Expr.(*ast.ColumnNameExpr); f.WildCard != nil || f.AsName.L == "" && !isColumn {
			return nil
		}
	}
	for _, by := range so.OrderBy.Items {
		_, found := unionOrderColumn(first, by.Expr)
		switch x := by.Expr.(type) {
		case *ast.PositionExpr:
			if !found || x.N > len(first.Fields.Fields) {
				return nil
			}
		case *ast.ColumnNameExpr:
			if x.Name.Table.L != "" {
				return nil
			}
			if !found {
				return newError(CodeBadField, "42S22", "Unknown column '%s' in 'ORDER BY'", x.Name.Name.O)
			}
		default:
			return nil
		}
	}
	return nil
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
	set := &SetOpBranches{Operator: sb.operator}
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
