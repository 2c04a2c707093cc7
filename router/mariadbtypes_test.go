package router

import (
	"github.com/shardflake/shardflake/internal/sqllex"
	"testing"
)

// TestStandInTypes: MariaDB's UUID, INET6 and INET4 after a column's name
// are read with stand-ins and restored as the client wrote them; the same
// words as names, functions or in strings and comments are left alone.
func TestStandInTypes(t *testing.T) {
	tests := []struct {
		give string
		want string // restored; "" for a statement StandInTypes leaves alone
	}{
		{
			give: "CREATE TABLE t (id INT, u UUID NOT NULL DEFAULT UUID(), ip inet6, KEY uuid (u))",
			want: "CREATE TABLE `t` (`id` INT,`u` UUID NOT NULL DEFAULT (UUID()),`ip` inet6,INDEX `uuid`(`u`))",
		},
		{
			give: "CREATE TABLE t (`uuid` Uuid(3), inet4 INET4 /* UUID */ COMMENT 'a UUID', i INET6 (1, 2))",
			want: "CREATE TABLE `t` (`uuid` Uuid(3),`inet4` INET4 COMMENT 'a UUID',`i` INET6 (1, 2))",
		},
		{
			give: "ALTER TABLE t ADD COLUMN ip4 INET4 AFTER uuid, MODIFY ip INET6 FIRST, CHANGE a b UUID",
			want: "ALTER TABLE `t` ADD COLUMN `ip4` INET4 AFTER `uuid`, MODIFY COLUMN `ip` INET6 FIRST, CHANGE COLUMN `a` `b` UUID",
		},
		{give: "CREATE TABLE t (a CHAR(36) DEFAULT uuid())"},
		{give: "ALTER TABLE t DROP COLUMN uuid, RENAME COLUMN inet6 TO inet4"},
		{give: "SELECT 'a UUID', x.inet6 FROM t x"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			_, types := StandInTypes(tt.give, sqllex.Backslash)
			if tt.want == "" {
				if len(types) != 0 {
					t.Fatalf("replaced %v", types)
				}
				return
			}
			stmt, err := ParseOne(tt.give)
			if err != nil {
				t.Fatal(err)
			}
			got, err := restoreSQL(stmt)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("restored\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
