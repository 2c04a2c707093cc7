// Package router loads sharding rules and turns SQL statements into plans.
//
// It sits between the proxy and the key generators
// (cmd → proxy → router → idgen) and is pure: no sockets, goroutines, clocks
// or loggers. Everything it builds (Rules, Router, Prepared, Plan) is
// immutable once returned and safe for concurrent use.
//
// Glossary, used with these meanings everywhere in shardflake:
//
//   - logical table: the table name clients use, e.g. t_order.
//   - physical table: a real table on a MySQL server, e.g. t_order_3.
//   - data source: one MySQL database the proxy connects to, e.g. ds_1.
//   - data node: one physical table on one data source, written ds_1.t_order_3.
//   - sharding column: a column whose value picks the data node of a row.
//   - route: one data source and the SQL to run there.
//   - plan: the routes of one statement plus the merge its results need.
package router
