package proxy

import "testing"

// TestMikroORMApplication runs a small MikroORM application
// (testdata/mikroorm/app.js, @mikro-orm/mysql with the mysql2 driver and
// @mikro-orm/migrations, from npm, installed by scripts/install-deps.sh)
// through the proxy over binding tables with the 53-bit key layout
// (MikroORM numbers a batched INSERT's keys from mysql2's insertId, a
// JavaScript Number) and against one MariaDB: both runs print the same,
// step by step.
func TestMikroORMApplication(t *testing.T) {
	app := nodeApp{dir: "mikroorm", script: "app.js", packages: []string{"@mikro-orm/core", "@mikro-orm/mysql", "@mikro-orm/migrations"}}
	runNodeApplication(t, app, "mikroorm", []string{"mikro_orm_migrations", "t_note", "t_order_item", "t_order"},
		`"updated schema" []`, `"persisted" [["Tolkien",true,1,[true,true,true]],["Pratchett",true,1,[true,true]],["Le Guin",true,1,[true]]]`,
		`"findAndCount populate" 15 [["Author 01",["Book 1"]],["Author 02",["Book 2"]],["Author 03",["Book 3"]]]`,
		`"rolled back" 0 0 "Le Guin"`, `"optimistic lock" true 2`, `"migrated" 1 1 0`)
}
