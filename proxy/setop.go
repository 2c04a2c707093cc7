package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/merge"
	"github.com/shardflake/shardflake/router"
)

// runSetOp runs a UNION, INTERSECT or EXCEPT whose branches the router
// planned apart (router.SetOpBranches, in the plan's Merge): each branch
// as the plan it is, its rows read into memory before the next branch
// starts (inside a transaction the branches share a data source's one
// connection), then the plan's merge over the branches' rows in order
// (for INTERSECT and EXCEPT, with the merge's set operation filter). The
// branches must agree on every column's definition and collation: where
// they differ MariaDB widens the result's type, and the proxy refuses
// rather than answer with other column definitions.
func runSetOp(ctx context.Context, plan *router.Plan, conns connSource, merger Merger, budget int64, obs Observer, mode backendMode) (result, error) {
	branches := plan.Merge.SetOp.Branches
	streams := make([]RowStream, 0, len(branches))
	mem := merge.NewBudget(budget)
	for i, b := range branches {
		res, err := runPlanMode(ctx, b, conns, merger, budget, obs, mode, nil)
		if err != nil {
			return result{}, err
		}
		if res.rows == nil {
			return result{}, &InternalError{Msg: fmt.Sprintf("branch %d of a UNION returned no result set", i+1)}
		}
		rows, err := readAllRows(res.rows, mem)
		cols := res.rows.Columns()
		res.rows.Close()
		if err != nil {
			return result{}, err
		}
		if i > 0 {
			if err := sameBranchColumns(streams[0].Columns(), cols, i); err != nil {
				return result{}, err
			}
		} else if err := orderByPositions(plan.Merge, len(cols)); err != nil {
			return result{}, err
		}
		streams = append(streams, newMemStream(cols, rows))
	}
	if err := sameBranchCollations(ctx, plan, merger); err != nil {
		return result{}, err
	}
	m := plan.Merge
	cols, err := unionColumns(streams[0].Columns(), streamedSetOp(m))
	if err != nil {
		return result{}, err
	}
	streams[0] = newMemStream(cols, streams[0].(*memStream).rows)
	// The merge asks the first branch's first route for its collations.
	view := &router.Plan{Kind: router.KindSelect, Type: plan.Type, Routes: branches[0].Routes[:1], Merge: plan.Merge}
	rows, err := merger.Merge(ctx, view, streams, budget)
	if err != nil {
		return result{}, err
	}
	return result{rows: rows}, nil
}

// orderByPositions refuses the ORDER BY of a set operation whose
// position is past its n columns, as MariaDB does (1054): the router
// knows the columns only when the first SELECT has no wildcard, and the
// set operation's ORDER BY is the merge's, never the data nodes'.
func orderByPositions(m *router.Merge, n int) error {
	for _, k := range m.OrderBy {
		if i := k.Column.Index(n); i < 0 || i >= n {
			return mysql.NewError(mysql.ER_BAD_FIELD_ERROR, fmt.Sprintf("Unknown column '%d' in 'ORDER BY'", int(k.Column)+1))
		}
	}
	return nil
}

// readAllRows reads rs to its end into rows that stay valid, each row
// taken from mem, the statement's mergeMemoryBytes that the branches
// share.
func readAllRows(rs RowStream, mem *merge.Budget) ([]Row, error) {
	var out []Row
	for {
		row, err := rs.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if err := mem.Take(merge.RowBytes(row), "the branches of a UNION across tables"); err != nil {
			return nil, err
		}
		out = append(out, row.Clone())
	}
}

// sameBranchColumns refuses branch i's columns unless they have the
// first branch's types, lengths, decimals, character sets and flags.
func sameBranchColumns(first, cols []*mysql.Field, i int) error {
	if len(cols) != len(first) {
		return mysql.NewError(mysql.ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT, "The used SELECT statements have a different number of columns")
	}
	for c, f := range cols {
		g := first[c]
		if f.Type != g.Type || f.ColumnLength != g.ColumnLength || f.Decimal != g.Decimal || f.Charset != g.Charset || f.Flag&unionFlags != g.Flag&unionFlags {
			return &NotSupportedError{What: fmt.Sprintf("a UNION across tables whose branches' column %d (%s, and %s in branch %d) differ in type, length, decimals, character set or nullability, where MariaDB widens the column", c+1, g.Name, f.Name, i+1)}
		}
	}
	return nil
}

// streamedSetOp reports whether MariaDB would stream the set operation
// merged by m, a UNION ALL without ORDER BY, rather than read it through
// a temporary table (UNION DISTINCT, INTERSECT, EXCEPT, their ALL forms,
// an ORDER BY over the result), which changes its column definitions
// (unionColumns) and compares its values.
func streamedSetOp(m *router.Merge) bool {
	return m == nil || !m.Distinct && len(m.OrderBy) == 0 && (m.SetOp == nil || m.SetOp.Operator == router.SetOpUnion)
}

// unionFlags are the column flags a UNION's result column keeps from
// its branches, which agree on them.
const unionFlags = mysql.NOT_NULL_FLAG | mysql.UNSIGNED_FLAG | mysql.BINARY_FLAG

// unionTypes are the column types whose UNION result definitions the
// proxy writes as MariaDB does (unionColumns); a UNION across tables
// with a column of another type (CHAR, ENUM, BLOB and TEXT, TIME,
// TIMESTAMP, binary strings, ...) gets 1235.
var unionTypes = [256]bool{
	mysql.MYSQL_TYPE_TINY: true, mysql.MYSQL_TYPE_SHORT: true, mysql.MYSQL_TYPE_INT24: true,
	mysql.MYSQL_TYPE_LONG: true, mysql.MYSQL_TYPE_LONGLONG: true, mysql.MYSQL_TYPE_NEWDECIMAL: true,
	mysql.MYSQL_TYPE_FLOAT: true, mysql.MYSQL_TYPE_DOUBLE: true, mysql.MYSQL_TYPE_DATE: true,
	mysql.MYSQL_TYPE_DATETIME: true, mysql.MYSQL_TYPE_VAR_STRING: true,
}

// unionColumns returns the first branch's column definitions as
// MariaDB's UNION result gives them: a value of the UNION, of no table.
// A UNION that MariaDB reads through a temporary table (UNION DISTINCT,
// or an ORDER BY over the UNION) names each column's original name as
// its name, with the flags of the temporary table's field; a UNION ALL
// that it streams
// names none, flags every binary (numeric and temporal) column BINARY,
// and gives a string NOT_FIXED_DEC decimals.
func unionColumns(cols []*mysql.Field, streamed bool) ([]*mysql.Field, error) {
	out := make([]*mysql.Field, len(cols))
	for i, f := range cols {
		binary := f.Charset == charsetBinary
		if !unionTypes[f.Type] || f.Flag&(mysql.ENUM_FLAG|mysql.SET_FLAG|mysql.BLOB_FLAG|mysql.ZEROFILL_FLAG) != 0 || binary && f.Type == mysql.MYSQL_TYPE_VAR_STRING {
			return nil, &NotSupportedError{What: fmt.Sprintf("a UNION across tables with column %d (%s) of this type, whose definition MariaDB's UNION changes", i+1, f.Name)}
		}
		c := mysql.Field{Name: f.Name, Charset: f.Charset, ColumnLength: f.ColumnLength, Type: f.Type, Flag: f.Flag & unionFlags, Decimal: f.Decimal}
		switch {
		case !streamed:
			c.OrgName = f.Name
			if binary {
				// The temporary table's field: a number is not BINARY, a
				// date is, whether the branch read a column or computed it.
				c.Flag &^= mysql.BINARY_FLAG
				if f.Type == mysql.MYSQL_TYPE_DATE || f.Type == mysql.MYSQL_TYPE_DATETIME {
					c.Flag |= mysql.BINARY_FLAG
				}
			} else {
				c.Decimal = 0 // a string field's, where an expression has NOT_FIXED_DEC
			}
		case binary:
			c.Flag |= mysql.BINARY_FLAG
		case f.Type == mysql.MYSQL_TYPE_VAR_STRING:
			c.Decimal = notFixedDecimals
		}
		out[i] = &c
	}
	return out, nil
}

// sameBranchCollations refuses a UNION whose merge compares strings
// (DISTINCT, ORDER BY) when its branches' first routes give a column
// different collations: MariaDB's result column would take one of them
// by its coercibility rules, or refuse the mix.
func sameBranchCollations(ctx context.Context, plan *router.Plan, merger Merger) error {
	m := plan.Merge
	if streamedSetOp(m) {
		return nil
	}
	rm, ok := merger.(*merge.ResultMerger)
	if !ok || rm.Collations == nil {
		return nil
	}
	var first []uint16
	for i, b := range plan.Merge.SetOp.Branches {
		if b.Merge != nil && (b.Merge.Hidden > 0 || b.Merge.Describe) {
			return &NotSupportedError{What: "a UNION DISTINCT, INTERSECT, EXCEPT or ORDER BY across tables whose branch computes columns across data nodes"}
		}
		ids, err := rm.Collations.RouteCollations(ctx, b.Routes[0])
		if err != nil {
			return err
		}
		if i == 0 {
			first = ids
		} else if !slices.Equal(first, ids) {
			return &NotSupportedError{What: "a UNION DISTINCT, INTERSECT, EXCEPT or ORDER BY across tables whose branches' columns have different collations"}
		}
	}
	return nil
}
