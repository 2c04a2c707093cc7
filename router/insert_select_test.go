package router

import (
	"errors"
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
)

func TestInsertSelectParts(t *testing.T) {
	columns := func(schema, table string) (insert, all []string) {
		if schema != "" {
			return nil, nil
		}
		insert = map[string][]string{
			"t_order": {"order_id", "user_id", "status"},
			"t_plain": {"id", "v"},
			"t_src":   {"order_id", "user_id", "status", "cnt"},
		}[table]
		all = insert
		if table == "t_order" {
			all = append(all[:len(all):len(all)], "note") // INVISIBLE
		}
		return insert, all
	}
	tests := []struct {
		name string
		give string
		want InsertSelectText
		code uint16 // the error, else 0
	}{
		{
			name: "column list",
			give: "INSERT INTO t_order (user_id, status) SELECT id, v FROM t_plain",
			want: InsertSelectText{Select: "SELECT `id`,`v` FROM `t_plain` LOCK IN SHARE MODE", Head: "INSERT INTO `t_order` (`user_id`,`status`) VALUES ", Columns: 2},
		},
		{
			name: "no column list: the table's columns",
			give: "INSERT INTO t_order SELECT * FROM t_src WHERE cnt > 1",
			want: InsertSelectText{Select: "SELECT * FROM `t_src` WHERE `cnt`>1 LOCK IN SHARE MODE", Head: "INSERT INTO `t_order` (`order_id`,`user_id`,`status`) VALUES ", Columns: 3},
		},
		{name: "no column list, columns unknown", give: "INSERT INTO t_other SELECT * FROM t_src", code: CodeNotSupported},
		{
			name: "ODKU of VALUES() and the target's columns",
			give: "INSERT IGNORE INTO t_order (order_id, user_id, status) SELECT id, id, v FROM t_plain ON DUPLICATE KEY UPDATE status = CONCAT(status, VALUES(status)), user_id = VALUES(user_id)",
			want: InsertSelectText{Select: "SELECT `id`,`id`,`v` FROM `t_plain` LOCK IN SHARE MODE", Head: "INSERT IGNORE INTO `t_order` (`order_id`,`user_id`,`status`) VALUES ", Tail: " ON DUPLICATE KEY UPDATE `status`=CONCAT(`status`, VALUES(`status`)),`user_id`=VALUES(`user_id`)", Columns: 3},
		},
		{
			name: "ODKU naming the target, no FROM",
			give: "INSERT INTO t_order SELECT 1, 2, 'x' ON DUPLICATE KEY UPDATE status = t_order.status",
			want: InsertSelectText{Select: "SELECT 1,2,'x'", Head: "INSERT INTO `t_order` (`order_id`,`user_id`,`status`) VALUES ", Tail: " ON DUPLICATE KEY UPDATE `status`=`t_order`.`status`", Columns: 3},
		},
		{
			name: "ODKU naming the target's INVISIBLE column",
			give: "INSERT INTO t_order SELECT id, id, v FROM t_plain ON DUPLICATE KEY UPDATE note = CONCAT(note, '+')",
			want: InsertSelectText{Select: "SELECT `id`,`id`,`v` FROM `t_plain` LOCK IN SHARE MODE", Head: "INSERT INTO `t_order` (`order_id`,`user_id`,`status`) VALUES ", Tail: " ON DUPLICATE KEY UPDATE `note`=CONCAT(`note`, '+')", Columns: 3},
		},
		{name: "ODKU naming a column only the SELECT has", give: "INSERT INTO t_order SELECT order_id, user_id, status FROM t_src ON DUPLICATE KEY UPDATE status = cnt", code: CodeNotSupported},
		{name: "ODKU naming the SELECT's table", give: "INSERT INTO t_order SELECT s.order_id, s.user_id, s.status FROM t_src s ON DUPLICATE KEY UPDATE status = s.status", code: CodeNotSupported},
		{name: "ODKU naming a column both have", give: "INSERT INTO t_order SELECT order_id, user_id, status FROM t_src ON DUPLICATE KEY UPDATE status = CONCAT(status, 'x')", code: CodeNotSupported},
		{name: "ODKU naming the target the SELECT reads too", give: "INSERT INTO t_order SELECT order_id + 1, user_id, 'x' FROM t_order ON DUPLICATE KEY UPDATE status = t_order.status", code: CodeNotSupported},
		{name: "ODKU over a derived table", give: "INSERT INTO t_order SELECT * FROM (SELECT id, id AS u, v FROM t_plain) d ON DUPLICATE KEY UPDATE status = CONCAT(status, 'x')", code: CodeNotSupported},
		{name: "ODKU over a CTE shadowing a table", give: "INSERT INTO t_order WITH t_plain AS (SELECT 1 AS status) SELECT 1, 1, status FROM t_plain ON DUPLICATE KEY UPDATE status = CONCAT(status, 'x')", code: CodeNotSupported},
		{name: "ODKU with a subquery", give: "INSERT INTO t_order SELECT id, id, v FROM t_plain ON DUPLICATE KEY UPDATE status = (SELECT MAX(v) FROM t_plain)", code: CodeNotSupported},
		{name: "ODKU naming no table's column", give: "INSERT INTO t_order SELECT id, id, v FROM t_plain ON DUPLICATE KEY UPDATE status = nope", code: CodeBadField},
		{name: "ODKU naming a column the table lacks", give: "INSERT INTO t_order SELECT id, id, v FROM t_plain ON DUPLICATE KEY UPDATE status = t_order.nope", code: CodeBadField},
		{name: "not an INSERT ... SELECT", give: "INSERT INTO t_order (order_id) VALUES (1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := parser.New()
			stmt, err := p.ParseOneStmt(tt.give, "", "")
			if err != nil {
				t.Fatal(err)
			}
			got, ok, err := InsertSelectParts(stmt, columns)
			var rerr *Error
			switch {
			case tt.code != 0:
				if !errors.As(err, &rerr) || rerr.Code != tt.code || ok {
					t.Fatalf("got %+v, %v, %v; want error %d", got, ok, err, tt.code)
				}
				return
			case err != nil:
				t.Fatal(err)
			case ok != (tt.want.Head != "") || got != tt.want:
				t.Fatalf("got %+v, %v\nwant %+v", got, ok, tt.want)
			}
			if !ok {
				return
			}
			row := "(1" + strings.Repeat(",1", got.Columns-1) + ")"
			for _, sql := range []string{got.Select, got.Head + row + got.Tail} {
				if _, err := p.ParseOneStmt(sql, "", ""); err != nil {
					t.Errorf("%s does not parse: %v", sql, err)
				}
			}
		})
	}
}
