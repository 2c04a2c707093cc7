package proxy

import (
	"reflect"
	"testing"

	"github.com/shardflake/shardflake/internal/sqllex"
)

func TestMatchMaintenance(t *testing.T) {
	tests := []struct {
		give string
		want *maintenanceStmt // nil: not one
	}{
		{give: "CHECK TABLE t_order", want: &maintenanceStmt{op: "CHECK", tables: []maintenanceTable{{name: "t_order"}}}},
		{give: "check table `sharding_db`.`t``x`, t2 QUICK;", want: &maintenanceStmt{op: "CHECK",
			tables: []maintenanceTable{{schema: "sharding_db", name: "t`x"}, {name: "t2"}}, options: "QUICK"}},
		{give: "ANALYZE /*!40101 NO_WRITE_TO_BINLOG */ TABLE a PERSISTENT FOR COLUMNS (x, y) INDEXES ()", want: &maintenanceStmt{op: "ANALYZE", modifier: "NO_WRITE_TO_BINLOG",
			tables: []maintenanceTable{{name: "a"}}, options: "PERSISTENT FOR COLUMNS (x, y) INDEXES ()"}},
		{give: "/* c */ OPTIMIZE LOCAL TABLES a , b", want: &maintenanceStmt{op: "OPTIMIZE", modifier: "LOCAL", tables: []maintenanceTable{{name: "a"}, {name: "b"}}}},
		{give: "CHECKSUM TABLE db . t EXTENDED", want: &maintenanceStmt{op: "CHECKSUM", tables: []maintenanceTable{{schema: "db", name: "t"}}, options: "EXTENDED"}},
		{give: "REPAIR TABLE t USE_FRM", want: &maintenanceStmt{op: "REPAIR", tables: []maintenanceTable{{name: "t"}}, options: "USE_FRM"}},
		{give: "CHECK LOCAL TABLE t"},
		{give: "CHECK TABLE"},
		{give: "CHECK TABLE t,"},
		{give: "CHECK TABLE t; DROP TABLE t"},
		{give: "CHECK TABLE t 'x'"},
		{give: "ANALYZE SELECT 1"},
		{give: "SELECT 1"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			got, ok := matchMaintenance(tt.give, sqllex.Backslash)
			if tt.want == nil {
				if ok {
					t.Fatalf("matched: %+v", got)
				}
				return
			}
			if !ok || !reflect.DeepEqual(got, *tt.want) {
				t.Fatalf("got %+v (%v), want %+v", got, ok, *tt.want)
			}
		})
	}
}
