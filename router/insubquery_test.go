package router

import (
	"reflect"
	"slices"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
)

// TestSubqueries: the subqueries an UPDATE's or DELETE's WHERE
// (InSubqueries) and a SELECT's WHERE and HAVING (SelectSubqueries) give
// the proxy to evaluate first, and the statement with their values in.
func TestSubqueries(t *testing.T) {
	tests := []struct {
		name    string
		give    string
		selects []string   // an UPDATE's or DELETE's
		subs    []Subquery // a SELECT's
		values  [][]any
		want    string // the statement with values in
		wide    string // with TRUE and NULL in
	}{
		{
			name:    "django update",
			give:    "UPDATE t_order SET note = 'big' WHERE t_order.order_id IN (SELECT U0.order_id FROM t_order U0 INNER JOIN t_order_item U1 ON (U0.order_id = U1.order_id) WHERE U1.qty >= 10)",
			selects: []string{"SELECT `U0`.`order_id` FROM `t_order` AS `U0` JOIN `t_order_item` AS `U1` ON (`U0`.`order_id`=`U1`.`order_id`) WHERE `U1`.`qty`>=10 FOR UPDATE"},
			values:  [][]any{{int64(1), nil, "x'y", Decimal("2.50")}},
			want:    "UPDATE `t_order` SET `note`='big' WHERE `t_order`.`order_id` IN (1,NULL,'x''y',2.50)",
		},
		{
			name:    "derived table, empty",
			give:    "DELETE FROM t WHERE id IN (SELECT * FROM (SELECT U0.id FROM t U0 LIMIT 5) subquery) AND k = 1",
			selects: []string{"SELECT `U0`.`id` FROM `t` AS `U0` LIMIT 5 FOR UPDATE"},
			values:  [][]any{{}},
			want:    "DELETE FROM `t` WHERE 0 AND `k`=1",
		},
		{
			name:    "not in, empty",
			give:    "DELETE FROM t WHERE id NOT IN (SELECT id FROM u)",
			selects: []string{"SELECT `id` FROM `u` FOR UPDATE"},
			values:  [][]any{{}},
			want:    "DELETE FROM `t` WHERE 1",
		},
		{
			name:    "two, one inside OR",
			give:    "UPDATE t SET a = 1 WHERE id IN (SELECT id FROM u) OR b IN (SELECT b FROM v WHERE v.c = 2)",
			selects: []string{"SELECT `id` FROM `u` FOR UPDATE", "SELECT `b` FROM `v` WHERE `v`.`c`=2 FOR UPDATE"},
			values:  [][]any{{int64(3)}, {uint64(18446744073709551615)}},
			want:    "UPDATE `t` SET `a`=1 WHERE `id` IN (3) OR `b` IN (18446744073709551615)",
		},
		{name: "correlated", give: "UPDATE t SET a = 1 WHERE id IN (SELECT u.id FROM u WHERE u.k = t.k)"},
		{name: "limit, not wrapped", give: "DELETE FROM t WHERE id IN (SELECT id FROM u LIMIT 3)"},
		{name: "row", give: "DELETE FROM t WHERE (a, b) IN (SELECT a, b FROM u)"},
		{name: "inside EXISTS", give: "DELETE FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.id IN (SELECT id FROM v))"},
		{name: "a SELECT", give: "SELECT * FROM t WHERE id IN (SELECT id FROM u)", subs: []Subquery{{SQL: "SELECT `id` FROM `u`", Kind: SubqueryIn, Strings: true}}},
		{name: "a list", give: "DELETE FROM t WHERE id IN (1, 2)"},
		{
			name: "scalar, in, exists",
			give: "SELECT id FROM t WHERE k > (SELECT AVG(k) FROM t) AND c IN (SELECT c FROM u WHERE u.x = 1) AND NOT EXISTS (SELECT * FROM v) HAVING MAX(k) = (SELECT 3 FROM w)",
			subs: []Subquery{
				{SQL: "SELECT AVG(`k`) FROM `t`", Kind: SubqueryScalar, Strings: true, Average: "SELECT SUM(`k`),COUNT(`k`) FROM `t`"},
				{SQL: "SELECT `c` FROM `u` WHERE `u`.`x`=1", Kind: SubqueryIn, Strings: true},
				{SQL: "SELECT * FROM `v`", Kind: SubqueryExists},
				{SQL: "SELECT 3 FROM `w`", Kind: SubqueryScalar},
			},
			values: [][]any{{Decimal("2.5000")}, {"a'b", nil}, {}, {int64(3)}},
			want:   "SELECT `id` FROM `t` WHERE `k`>2.5000 AND `c` IN ('a''b',NULL) AND 1 HAVING MAX(`k`)=3",
			wide:   "SELECT `id` FROM `t` WHERE `k`>NULL AND 1 AND 1 HAVING MAX(`k`)=NULL",
		},
		{
			name:   "empty scalar, not in, exists with rows",
			give:   "SELECT 1 FROM t WHERE (SELECT k FROM u) + 1 = 2 OR id NOT IN (SELECT id FROM u) OR EXISTS (SELECT 1 FROM u) OR NOT EXISTS (SELECT 1 FROM u)",
			subs:   []Subquery{{SQL: "SELECT `k` FROM `u`", Kind: SubqueryScalar}, {SQL: "SELECT `id` FROM `u`", Kind: SubqueryIn, Strings: true}, {SQL: "SELECT 1 FROM `u`", Kind: SubqueryExists}, {SQL: "SELECT 1 FROM `u`", Kind: SubqueryExists}},
			values: [][]any{{}, {}, {int64(1)}, {int64(1)}},
			want:   "SELECT 1 FROM `t` WHERE NULL+1=2 OR 1 OR 1 OR 0",
		},
		{name: "correlated", give: "SELECT * FROM t WHERE k > (SELECT AVG(u.k) FROM u WHERE u.id = t.id)"},
		{name: "row comparison", give: "SELECT * FROM t WHERE (a, b) = (SELECT a, b FROM u)"},
		{name: "two columns", give: "SELECT * FROM t WHERE a = (SELECT a, b FROM u)"},
		{name: "any", give: "SELECT * FROM t WHERE a > ANY (SELECT a FROM u)"},
		{name: "row in", give: "SELECT * FROM t WHERE (a, b) IN (SELECT a, b FROM u)"},
		{name: "union", give: "SELECT * FROM t WHERE a = (SELECT a FROM u UNION SELECT a FROM v)"},
		{
			name: "select list",
			give: "SELECT (SELECT MAX(a) FROM u), id, (SELECT b, c FROM v) AS bc, 1 + (SELECT MIN(a) FROM u), (SELECT MAX(u.a) FROM u WHERE u.id = t.id) FROM t WHERE k > (SELECT AVG(k) FROM u) HAVING id > 0",
			subs: []Subquery{
				{SQL: "SELECT MAX(`a`) FROM `u`", Kind: SubqueryScalar, Field: 1},
				{SQL: "SELECT `b`,`c` FROM `v`", Kind: SubqueryScalar, Field: 3},
				{SQL: "SELECT MIN(`a`) FROM `u`", Kind: SubqueryScalar, Field: 4, Expression: true},
				{SQL: "SELECT AVG(`k`) FROM `u`", Kind: SubqueryScalar, Strings: true, Average: "SELECT SUM(`k`),COUNT(`k`) FROM `u`"},
			},
			values: [][]any{{"x"}, {}, {TypedNumber{Value: "18446744073709551615", Precision: 20, As: CastUnsigned}}, {Decimal("1.5")}},
			want:   "SELECT 'x',`id`,NULL AS `bc`,1+if(1, CAST(CAST(18446744073709551615 AS DECIMAL(20)) AS UNSIGNED), NULL),(SELECT MAX(`u`.`a`) FROM `u` WHERE `u`.`id`=`t`.`id`) FROM `t` WHERE `k`>1.5 HAVING `id`>0",
			wide:   "SELECT NULL,`id`,NULL AS `bc`,1+NULL,(SELECT MAX(`u`.`a`) FROM `u` WHERE `u`.`id`=`t`.`id`) FROM `t` WHERE `k`>NULL HAVING `id`>0",
		},
		{
			name: "select list, inside expressions",
			give: "SELECT COALESCE((SELECT MAX(a) FROM u), 0) + 1, SUM(k - (SELECT AVG(k) / 2 FROM u)) AS s, (SELECT x FROM v) IN (SELECT y FROM w), EXISTS (SELECT 1 FROM u), k > ALL (SELECT k FROM u) FROM t",
			subs: []Subquery{
				{SQL: "SELECT MAX(`a`) FROM `u`", Kind: SubqueryScalar, Field: 1, Expression: true},
				{SQL: "SELECT AVG(`k`)/2 FROM `u`", Kind: SubqueryScalar, Field: 2, Expression: true, Rounded: true, Aggregated: true, PerRow: true},
			},
			values: [][]any{{TypedNumber{Null: true, Precision: 20, As: CastSigned}}, {TypedNumber{Value: "-0.5", Precision: 1, Scale: 1}}},
			want:   "SELECT COALESCE(if(1, CAST(CAST(NULL AS DECIMAL(20)) AS SIGNED), NULL), 0)+1,SUM(`k`-if(1, CAST(-0.5 AS DECIMAL(1, 1)), NULL)) AS `s`,(SELECT `x` FROM `v`) IN (SELECT `y` FROM `w`),EXISTS (SELECT 1 FROM `u`),`k`>ALL (SELECT `k` FROM `u`) FROM `t`",
		},
		{
			name:   "select list, no HAVING: text means the same",
			give:   "SELECT (SELECT MAX(a) FROM u) AS m FROM t",
			subs:   []Subquery{{SQL: "SELECT MAX(`a`) FROM `u`", Kind: SubqueryScalar, Strings: true, Field: 1}},
			values: [][]any{{int64(7)}},
			want:   "SELECT 7 AS `m` FROM `t`",
		},
		{
			name: "select list, several columns",
			give: "SELECT COALESCE((SELECT a, b FROM u), 1), -(SELECT * FROM u), k - (SELECT a, b FROM u), GREATEST((SELECT a, b FROM u), 1) FROM t",
			subs: []Subquery{
				{SQL: "SELECT `a`,`b` FROM `u`", Kind: SubqueryScalar, Field: 1, Expression: true},
				{SQL: "SELECT * FROM `u`", Kind: SubqueryScalar, Field: 2, Expression: true},
			},
		},
		{name: "for update", give: "SELECT * FROM t WHERE a IN (SELECT a FROM u) FOR UPDATE"},
		{name: "with", give: "WITH sub AS (SELECT id FROM t) SELECT COUNT(*) FROM sub WHERE id IN (SELECT id FROM sub)"},
		{name: "a list with a subquery", give: "SELECT * FROM t WHERE a IN ((SELECT a FROM u), 2)"},
		{
			name:   "in, the subquery in parentheses",
			give:   "SELECT * FROM t WHERE a IN ((SELECT a FROM u))",
			subs:   []Subquery{{SQL: "SELECT `a` FROM `u`", Kind: SubqueryIn, Strings: true}},
			values: [][]any{{int64(1), int64(2)}},
			want:   "SELECT * FROM `t` WHERE `a` IN (1,2)",
		},
		{
			name:   "in, the one column of a derived table with LIMIT (MikroORM's)",
			give:   "SELECT * FROM t WHERE a IN (SELECT d.a FROM (SELECT u.a FROM u ORDER BY b LIMIT 2) AS d)",
			subs:   []Subquery{{SQL: "SELECT `u`.`a` FROM `u` ORDER BY `b` LIMIT 2", Kind: SubqueryIn, Strings: true}},
			values: [][]any{{int64(1), int64(2)}},
			want:   "SELECT * FROM `t` WHERE `a` IN (1,2)",
		},
		{
			name:    "in, the aliased column of a derived table, unqualified",
			give:    "DELETE FROM t WHERE a IN (SELECT x FROM (SELECT MAX(a) AS x FROM u GROUP BY b LIMIT 2) AS d)",
			selects: []string{"SELECT MAX(`a`) AS `x` FROM `u` GROUP BY `b` LIMIT 2 FOR UPDATE"},
			values:  [][]any{{int64(3)}},
			want:    "DELETE FROM `t` WHERE `a` IN (3)",
		},
		{
			name:    "in, an expression of a derived table's column: the SELECT as it is",
			give:    "DELETE FROM t WHERE a IN (SELECT d.a + 1 FROM (SELECT a FROM u LIMIT 2) AS d)",
			selects: []string{"SELECT `d`.`a`+1 FROM (SELECT `a` FROM `u` LIMIT 2) AS `d` FOR UPDATE"},
		},
		{name: "in, another table's column", give: "DELETE FROM t WHERE a IN (SELECT e.a FROM (SELECT a FROM u LIMIT 2) AS d)"},
		{name: "an UPDATE", give: "UPDATE t SET a = 1 WHERE k > (SELECT AVG(k) FROM u)"},
		{
			name: "derived table with ORDER BY and LIMIT (Sequelize's include)",
			give: "SELECT `Order`.*, `Items`.`qty` AS `Items.qty` FROM (SELECT `Order`.`order_id`, `Order`.`user_id` FROM `t_order` AS `Order` WHERE `Order`.`user_id` > 1 ORDER BY `Order`.`user_id` DESC, 1 LIMIT 3) AS `Order` LEFT OUTER JOIN `t_order_item` AS `Items` ON `Order`.`order_id` = `Items`.`order_id` ORDER BY `Order`.`user_id` DESC",
			subs: []Subquery{{SQL: "SELECT `Order`.`order_id`,`Order`.`user_id` FROM `t_order` AS `Order` WHERE `Order`.`user_id`>1 ORDER BY `Order`.`user_id` DESC,1 LIMIT 4", Kind: SubqueryDerived, Strings: true,
				Derived: &DerivedLimit{Count: 3, Columns: []int{0, 1}, Order: []int{1, 0}}}},
			values: [][]any{{ChosenRows{Key: []int{0}, Rows: [][]any{{int64(7)}, {uint64(18446744073709551615)}}}}},
			want:   "SELECT `Order`.*,`Items`.`qty` AS `Items.qty` FROM (SELECT `Order`.`order_id`,`Order`.`user_id` FROM `t_order` AS `Order` WHERE (`Order`.`user_id`>1) AND `Order`.`order_id` IN (7,18446744073709551615) LIMIT 18446744073709551615) AS `Order` LEFT JOIN `t_order_item` AS `Items` ON `Order`.`order_id`=`Items`.`order_id` ORDER BY `Order`.`user_id` DESC",
			wide:   "SELECT `Order`.*,`Items`.`qty` AS `Items.qty` FROM (SELECT `Order`.`order_id`,`Order`.`user_id` FROM `t_order` AS `Order` WHERE `Order`.`user_id`>1 LIMIT 18446744073709551615) AS `Order` LEFT JOIN `t_order_item` AS `Items` ON `Order`.`order_id`=`Items`.`order_id` ORDER BY `Order`.`user_id` DESC",
		},
		{
			name: "derived table with OFFSET, a key of two columns, an alias ordered",
			give: "SELECT * FROM (SELECT a, b AS bb, c + 1 AS c1 FROM t ORDER BY bb LIMIT 5, 2) d JOIN u ON u.a = d.a",
			subs: []Subquery{{SQL: "SELECT `a`,`b` AS `bb`,`c`+1 AS `c1` FROM `t` ORDER BY `bb` LIMIT 4,4", Kind: SubqueryDerived, Strings: true,
				Derived: &DerivedLimit{Skip: 1, Count: 2, Columns: []int{0, 1}, Order: []int{1}}}},
			values: [][]any{{ChosenRows{Key: []int{0, 1}, Rows: [][]any{{int64(1), "x"}, {int64(2), "y"}}}}},
			want:   "SELECT * FROM (SELECT `a`,`b` AS `bb`,`c`+1 AS `c1` FROM `t` WHERE ROW(`a`,`b`) IN (ROW(1,'x'),ROW(2,'y')) LIMIT 18446744073709551615) AS `d` JOIN `u` ON `u`.`a`=`d`.`a`",
		},
		{
			name:   "derived table choosing no row",
			give:   "SELECT * FROM (SELECT a FROM t LIMIT 2) d JOIN u ON u.a = d.a",
			subs:   []Subquery{{SQL: "SELECT `a` FROM `t` LIMIT 3", Kind: SubqueryDerived, Strings: true, Derived: &DerivedLimit{Count: 2, Columns: []int{0}}}},
			values: [][]any{{ChosenRows{}}},
			want:   "SELECT * FROM (SELECT `a` FROM `t` WHERE 0 LIMIT 18446744073709551615) AS `d` JOIN `u` ON `u`.`a`=`d`.`a`",
		},
		{
			name: "derived table ordered by an expression it does not select",
			give: "SELECT * FROM (SELECT a FROM t ORDER BY a + 1 LIMIT 2) d JOIN u ON u.a = d.a",
			subs: []Subquery{{SQL: "SELECT `a` FROM `t` ORDER BY `a`+1 LIMIT 3", Kind: SubqueryDerived, Strings: true,
				Derived: &DerivedLimit{Count: 2, Columns: []int{0}, Refused: "its ORDER BY names an expression it does not select"}}},
		},
		{name: "derived table with a wildcard", give: "SELECT * FROM (SELECT * FROM t LIMIT 2) d JOIN u ON u.a = d.a"},
		{name: "derived table grouped", give: "SELECT * FROM (SELECT a, COUNT(*) FROM t GROUP BY a LIMIT 2) d JOIN u ON u.a = d.a"},
		{name: "derived table without LIMIT", give: "SELECT * FROM (SELECT a FROM t LIMIT 18446744073709551615) d JOIN u ON u.a = d.a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := parser.New()
			stmt, err := p.ParseOneStmt(tt.give, "", "")
			if err != nil {
				t.Fatal(err)
			}
			selects, err := InSubqueries(stmt)
			if err != nil || !slices.Equal(selects, tt.selects) {
				t.Fatalf("InSubqueries = %q, %v; want %q", selects, err, tt.selects)
			}
			stmt, _ = p.ParseOneStmt(tt.give, "", "")
			subs, err := SelectSubqueries(stmt)
			if err != nil || !slices.EqualFunc(subs, tt.subs, func(a, b Subquery) bool { return reflect.DeepEqual(a, b) }) {
				t.Fatalf("SelectSubqueries = %+v, %v; want %+v", subs, err, tt.subs)
			}
			checkReplace(t, tt.give, tt.values, tt.want)
			checkReplace(t, tt.give, nil, tt.wide)
		})
	}
}

// checkReplace checks ReplaceSubqueries of give with values (none when
// want is empty), and that its text parses.
func checkReplace(t *testing.T, give string, values [][]any, want string) {
	t.Helper()
	if want == "" {
		return
	}
	p := parser.New()
	stmt, err := p.ParseOneStmt(give, "", "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReplaceSubqueries(stmt, values)
	if err != nil || got != want {
		t.Errorf("ReplaceSubqueries(%v) = %q, %v; want %q", values, got, err, want)
	}
	if _, err := p.ParseOneStmt(got, "", ""); err != nil {
		t.Errorf("%s does not parse: %v", got, err)
	}
}
