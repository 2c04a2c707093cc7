package router

import (
	"slices"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
)

func TestInSubqueries(t *testing.T) {
	tests := []struct {
		name    string
		give    string
		selects []string
		values  [][]any
		want    string // the statement with values in
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
		{name: "a SELECT", give: "SELECT * FROM t WHERE id IN (SELECT id FROM u)"},
		{name: "a list", give: "DELETE FROM t WHERE id IN (1, 2)"},
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
			if tt.want == "" {
				return
			}
			stmt, _ = p.ParseOneStmt(tt.give, "", "")
			got, err := ReplaceInSubqueries(stmt, tt.values)
			if err != nil || got != tt.want {
				t.Errorf("ReplaceInSubqueries = %q, %v; want %q", got, err, tt.want)
			}
			if _, err := p.ParseOneStmt(got, "", ""); err != nil {
				t.Errorf("%s does not parse: %v", got, err)
			}
		})
	}
}
