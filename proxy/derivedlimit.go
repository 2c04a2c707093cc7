package proxy

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/proxy/internal/sqlvalue"
	"github.com/shardflake/shardflake/router"
)

// A derived table with LIMIT over several data nodes (Sequelize's
// findAll with an include and a limit, router/derived_limit.go) is read
// first as a SELECT of its own, merged across data nodes as any, on the
// statement's connections (a transaction's own writes included); the
// rows it chose are named by a unique key among its columns, and the
// statement runs with the derived table restricted to them. Where rows
// equal in its ORDER BY straddle the LIMIT or the OFFSET, which of them
// MariaDB chooses is its own: 1235, as for a derived table without a
// unique key among its columns.

// chosenRows reads sub, a SubqueryDerived, with sel, and returns the rows
// it chose as ReplaceSubqueries takes them.
func (s *Session) chosenRows(ctx context.Context, sel *router.Plan, sub router.Subquery, conns connSource, what string) ([]any, error) {
	d := sub.Derived
	refuse := func(why string) error {
		return &NotSupportedError{What: fmt.Sprintf("%s whose derived table with LIMIT spans data nodes and %s (the proxy reads such a derived table first and finds the rows it chose by a unique key among its columns)", what, why)}
	}
	if d.Count > maxSubqueryValues {
		return nil, refuse(fmt.Sprintf("takes more than %d rows", maxSubqueryValues))
	}
	rows, err := s.readRows(ctx, sel, conns, "a derived table")
	if err != nil {
		return nil, err
	}
	cols := rows.Columns()
	read, err := drain(rows)
	if err != nil {
		return nil, err
	}
	before, chosen, after := splitChosen(read, d)
	if len(chosen) == 0 {
		return []any{router.ChosenRows{}}, nil
	}
	if len(d.Order) > 0 {
		types, err := s.orderTypes(ctx, sel, cols, d.Order)
		if err != nil {
			return nil, err
		}
		if (before != nil && sameOrder(types, d.Order, before, chosen[0])) || (after != nil && sameOrder(types, d.Order, chosen[len(chosen)-1], after)) {
			return nil, refuse("has rows equal in its ORDER BY on both sides of its LIMIT or OFFSET (which of them MariaDB chooses is its own)")
		}
	}
	key, err := s.uniqueKey(ctx, sel, cols, d.Columns, chosen)
	if err != nil {
		return nil, err
	}
	if key == nil {
		return nil, refuse("selects no unique key of its table (all the columns of its PRIMARY KEY or of a UNIQUE key, without NULL in the rows chosen)")
	}
	out := router.ChosenRows{Key: key, Rows: make([][]any, len(chosen))}
	size := 0
	for r, row := range chosen {
		out.Rows[r] = make([]any, len(key))
		for j, k := range key {
			v, err := subqueryValue(cols[k], row[k], sub, what, "")
			if err != nil {
				return nil, err
			}
			out.Rows[r][j] = v
			size += len(row[k])
		}
	}
	if size > maxSubqueryBytes {
		return nil, refuse(fmt.Sprintf("chooses rows whose keys take more than %d MiB", maxSubqueryBytes>>20))
	}
	return []any{out}, nil
}

// splitChosen splits the rows of a derived table's widened read (one row
// on each side, DerivedLimit) into the row before the chosen ones, the
// chosen ones and the row after them; before and after are nil when the
// read has none.
func splitChosen(read []Row, d *router.DerivedLimit) (before Row, chosen []Row, after Row) {
	if d.Skip > 0 && len(read) > 0 {
		before, read = read[0], read[1:]
	}
	n := int64(len(read))
	if n > d.Count {
		after = read[d.Count]
		n = d.Count
	}
	return before, read[:n], after
}

// orderTypes are the types, with the columns' own collations, of the
// columns at order, as the merge compares them.
func (s *Session) orderTypes(ctx context.Context, sel *router.Plan, cols []*mysql.Field, order []int) ([]sqlvalue.Type, error) {
	var collations []uint16
	if s.srv.collations != nil && len(sel.Routes) > 0 {
		var err error
		if collations, err = s.srv.collations.RouteCollations(ctx, sel.Routes[0]); err != nil {
			return nil, err
		}
	}
	types := make([]sqlvalue.Type, len(order))
	for i, c := range order {
		var coll uint16
		if c < len(collations) && sqlvalue.IsText(cols[c]) {
			coll = collations[c]
		}
		types[i] = sqlvalue.TypeOf(cols[c], coll)
		if err := types[i].OrderError(); err != nil {
			return nil, &NotSupportedError{What: fmt.Sprintf("a derived table with LIMIT across data nodes ordered by column `%s` (%v)", cols[c].Name, err)}
		}
	}
	return types, nil
}

// sameOrder reports whether rows a and b are equal in every ORDER BY
// column.
func sameOrder(types []sqlvalue.Type, order []int, a, b Row) bool {
	for i, c := range order {
		if types[i].Compare(a[c], b[c]) != 0 {
			return false
		}
	}
	return true
}

// uniqueKey returns the positions, among columns (the derived table's
// plain columns, of one table), of the columns of a unique key of their
// table (the PRIMARY KEY, or a UNIQUE key) that the select list carries
// whole, with no NULL in chosen; nil when there is none. MariaDB's
// column flags do not tell: PRI_KEY_FLAG marks each column of a PRIMARY
// KEY of several, and a NOT NULL UNIQUE key standing in for a missing
// PRIMARY KEY; the keys are read from information_schema on the data
// source of the read's first route.
func (s *Session) uniqueKey(ctx context.Context, sel *router.Plan, cols []*mysql.Field, columns []int, chosen []Row) ([]int, error) {
	if len(columns) == 0 || len(sel.Routes) == 0 {
		return nil, nil
	}
	table := string(cols[columns[0]].OrgTable)
	byName := map[string]int{}
	for _, c := range columns {
		if string(cols[c].OrgTable) == table {
			byName[strings.ToLower(string(cols[c].OrgName))] = c
		}
	}
	ds := sel.Routes[0].DataSource
	q := []byte("SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE NON_UNIQUE = 0 AND TABLE_SCHEMA = ")
	q, _ = sqlarg.AppendLiteral(q, s.srv.rules.DataSource(ds).Database, sqlarg.Backslash)
	q = append(q, " AND TABLE_NAME = "...)
	q, _ = sqlarg.AppendLiteral(q, table, sqlarg.Backslash)
	q = append(q, " ORDER BY INDEX_NAME <> 'PRIMARY', INDEX_NAME, SEQ_IN_INDEX"...)
	rows, err := s.srv.srv.queryOn(ctx, ds, string(q))
	if err != nil {
		return nil, err
	}
	notNull := func(c int) bool {
		return !slices.ContainsFunc(chosen, func(row Row) bool { return row[c] == nil })
	}
	for i := 0; i < len(rows); {
		index, key, whole := string(rows[i][0]), []int(nil), true
		for ; i < len(rows) && string(rows[i][0]) == index; i++ {
			c, ok := byName[strings.ToLower(string(rows[i][1]))]
			whole = whole && ok && notNull(c)
			key = append(key, c)
		}
		if whole {
			return key, nil
		}
	}
	return nil, nil
}
