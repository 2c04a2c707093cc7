// Package router turns SQL statements into plans: the planner.
//
// It sits between the proxy and the rules (cmd → proxy → router → config →
// algorithm, with idgen beside them) and is pure: no sockets, goroutines,
// clocks or loggers. It may import config (the loaded rules it plans
// against), algorithm (values, conditions and strategies' routing) and
// idgen (the key-generator interface); never the proxy. Everything it
// builds (Router, Prepared, Plan) is immutable once returned and safe for
// concurrent use. Its errors are the catalog below (Error, StateOf): an
// algorithm's refusal to route becomes 1235 here, at errRouting.
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
//
// # Planning a statement
//
// The proxy parses a statement (ParseWith, one parser per session), calls
// Router.Prepare once per statement text or prepared statement, and
// Prepared.Bind once per execution with the ? values. Bind generates keys,
// routes and returns a Plan: one Route per data node, each with rewritten
// SQL, and the Merge of their results. A statement without ? is planned at
// Prepare, so Bind returns the same Plan at no cost.
//
// # Supported SQL
//
// Routing reads WHERE and inner-join ON conditions on sharding columns:
// =, <=>, IN, BETWEEN, <, <=, >, >= against literals or ? (a literal cast
// to an integer, CAST('3' AS INT), is one where MariaDB's integer is the
// literal itself); AND narrows, OR is the union of its branches;
// conditions on both the data-source and the table column combine. No
// condition, NOT, an expression on the sharding column (order_id + 1 =
// 6) or a function reaches every data node of the table. Range
// conditions prune with range algorithms (BOUNDARY_RANGE, VOLUME_RANGE,
// INTERVAL, ...); INLINE routes a range to every data node
// only with allow-range-query-with-inline-sharding, else 1235. A SELECT,
// UPDATE or DELETE that no data node can match (contradicting conditions,
// NULL sharding values, a value whose inline expression names a data
// source or table that does not exist, such as user_id = -5 with
// ds_${user_id % 4}) runs once, on one data node, with its WHERE clause
// ANDed with 0: the right empty answer, column metadata and 0 affected
// rows, never the statement unchanged on an unrelated data node. An
// INSERT of such a value is 1235: its row has no data node.
//
// Each route gets the statement with physical table names: a table in FROM
// keeps its logical name as alias (FROM `t_order_3` AS `t_order`), so
// qualified columns and result metadata keep working; IN lists on sharding
// columns keep only the values of the route's data node; schema-qualified
// names (sharding_db.t_order) lose the schema. String literals are never
// touched: the SQL is restored from the parsed tree, not edited as text.
// Literals stay literals (re-escaped); each ? stays a ? and Route.Args holds
// its value. Unaliased select expressions get their original text as alias
// (COUNT(*) AS `COUNT(*)`) so column names are MySQL's.
//
//   - SELECT on one data node: passed through. On several: one route per
//     data node and a Merge for ORDER BY (any mix of columns, expressions,
//     aliases, positions; keys not selected become hidden columns), LIMIT
//     and OFFSET (routes get LIMIT offset+count), COUNT, SUM, MIN, MAX, AVG
//     (with hidden SUM and COUNT), BIT_OR, BIT_AND, BIT_XOR, VAR_POP,
//     VAR_SAMP, STDDEV_POP, STDDEV_SAMP (and STD, STDDEV, VARIANCE; with
//     hidden COUNT, SUM and VAR_POP), JSON_OBJECTAGG, JSON_ARRAYAGG (with
//     hidden group_concat_max_len),
//     COUNT/SUM/AVG(DISTINCT), GROUP BY
//     (streamed when the order allows; WITH ROLLUP's super-aggregate rows
//     added by the merge, Group.Rollup), HAVING (evaluated after merging)
//     and DISTINCT. Window functions run on each data node when every
//     window's PARTITION BY names all sharding columns (database and
//     table) of a sharded table of the block, outside an outer join's
//     nullable side, and the block does not group: each partition lives
//     on one data node (select_window.go). The rows then merge as a plain
//     SELECT's, also inside a derived table or CTE the outer block reads
//     (top N per key: WHERE rn <= N).
//   - Joins: binding tables (and a table joined with itself) pair data
//     node by data node, never a Cartesian product, when the join equates
//     all their sharding columns (o.user_id = i.user_id AND o.order_id =
//     i.order_id, in ON or WHERE, USING or NATURAL JOIN; for an outer join
//     in its ON clause): only then do joined rows live on paired data
//     nodes. Otherwise they are unrelated sharded tables. Broadcast tables
//     join on every data node; a table without rules joins only data nodes
//     on the default data source; unrelated sharded tables join only when
//     each reaches one data node, all on the same data source (the
//     statement then runs there), else 1235 asking for a join condition
//     that equates the sharding columns. An outer join that keeps the
//     rows of broadcast tables or tables without rules (t_dict LEFT JOIN
//     t_order) with a sharded table on its nullable side runs on one data
//     node only, unless its WHERE clause drops the NULL-extended rows (a
//     condition on a sharding column of the nullable side) or the
//     statement groups by (or is DISTINCT over) the kept side's columns
//     with COUNT, SUM, MIN, MAX or AVG of a nullable side's column
//     (nullsMerge): each data node would return the kept rows it finds no
//     match for; else 1235.
//   - Subqueries and derived tables: pushed down when everything reaches one
//     data node, or when a subquery on a binding table (or the same table)
//     equates all its sharding columns with the outer table's (EXISTS,
//     IN (SELECT ...) on the sharding columns; a column pinned to the same
//     literal in both blocks, user_id = 13, counts as equated); broadcast
//     tables anywhere. Across data nodes also three ORM shapes whose inner
//     block returns rows (no GROUP BY, HAVING, DISTINCT, aggregates or
//     LIMIT; window functions only as below): a SELECT from one derived table (SELECT
//     COUNT(*) FROM (SELECT ... FROM t_order WHERE ...) sub, or WITH sub
//     AS (SELECT ...) SELECT ... FROM sub reading the CTE once), which every
//     route runs whole and the outer query's merge combines; SELECT
//     [NOT] EXISTS (SELECT ... [LIMIT n]), the OR (AND) of the routes'
//     answers; and TypeORM's exists(), a constant row kept by WHERE
//     EXISTS (SELECT 1 AS row_exists FROM (SELECT 1 AS dummy_column)
//     dummy_table WHERE EXISTS (SELECT ...) LIMIT 1, also FROM DUAL or no
//     FROM; no aggregate in its select list), the row of any route that
//     returns one.
//   - INSERT, REPLACE, INSERT ... SET, ON DUPLICATE KEY UPDATE: keys are
//     generated before routing (for a missing key column, NULL, DEFAULT,
//     or 0 when WithAutoIncrement says the column is AUTO_INCREMENT and
//     PrepareOptions do not say NO_AUTO_VALUE_ON_ZERO), so a generated
//     key can be a sharding column; each row goes to its data
//     node and a multi-row INSERT splits by data node. INSERT ... SELECT
//     works when the target's sharding columns come from the same sharding
//     columns of a binding table (or the same table), or are literals and
//     everything reaches one data source; the proxy runs other INSERT ...
//     SELECTs into a sharded table in two steps (InsertSelectParts,
//     Plan.Fill), also without a column list (the table's columns, from
//     the proxy) and with ON DUPLICATE KEY UPDATE, whose clause follows
//     the rows when it names the target's columns and VALUES(col) only
//     (a column of the SELECT's tables or a subquery: 1235).
//   - UPDATE, DELETE, also multi-table on binding tables. A write to a
//     broadcast table reaches every data source.
//   - DDL: CREATE/ALTER/DROP/TRUNCATE TABLE and CREATE/DROP INDEX run on
//     every data node of a sharded table (CREATE TABLE creates them), on
//     every data source for a broadcast table, on the default data source
//     for others. SHOW CREATE TABLE, SHOW COLUMNS, DESCRIBE and SHOW INDEX
//     ask a sharded table's first data node (Plan.Rename names it back).
//     MariaDB's column types UUID, INET6 and INET4, which the SQL parser
//     does not know, are read with stand-ins of the same shape and sent as
//     the client wrote them (mariadbtypes.go).
//   - MariaDB's CAST and CONVERT types INT, INTEGER and INT4, which the SQL
//     parser does not know, are read as SIGNED, which MariaDB takes them
//     for, in any statement; the statements' and select fields' texts,
//     which name columns, stay the client's (mariadbcasts.go).
//   - Tables without rules live on the default data source; statements on
//     them pass through.
//   - The physical tables of sharded tables (every table an
//     actualDataNodes names, t_order_0) are not logical tables: naming one
//     is 1146 Table 'sharding_db.t_order_0' doesn't exist, as if reading
//     it without routing were an unsharded table's; CREATE TABLE under
//     such a name is 1235. The operator's way to read or repair one data
//     node is the DATA_SOURCE_NAME hint.
//   - Hints in comments (see Hints below).
//
// # Hints
//
// Two hints are read from /* ... */ comments anywhere in a statement (never
// from string literals or quoted names; -- and # comments, /*! ... */ and
// /*+ ... */ are not hints). The mysql command-line client strips comments
// unless started with -c.
//
//	/* SHARDINGSPHERE_HINT: t_order.SHARDING_DATABASE_VALUE=1, t_order.SHARDING_TABLE_VALUE=3 */
//	/* SHARDINGSPHERE_HINT: DATA_SOURCE_NAME=ds_1 */
//	/* shardflake: slice=2/8 */
//
// SHARDINGSPHERE_HINT is ShardingSphere's SQL hint: key=value pairs
// separated by commas, keys case-insensitive (the camelCase aliases
// shardingDatabaseValue, shardingTableValue and dataSourceName work too).
// [table.]SHARDING_DATABASE_VALUE and [table.]SHARDING_TABLE_VALUE give the
// sharding value of the database and table strategy of that table (of every
// sharded table when no table is named): a hint strategy (HINT_INLINE)
// routes by them, a standard strategy takes them as its sharding column's
// value, so the hint forces the data node. As in ShardingSphere, a
// strategy's hint values replace what the WHERE clause says about that
// strategy's columns (the WHERE clause still filters the rows, and still
// routes the other strategy); only an INSERT must agree with them, else
// 1235, since its row would land where no routed statement finds it. A
// repeated key gives several values; numbers are numbers and 'quoted'
// values strings; a table named must be sharded. DATA_SOURCE_NAME sends
// the statement unchanged, without rewriting or merging, to that data
// source (statements without tables too, which the proxy otherwise
// answers or sends to the default data source): name physical tables
// yourself (no other statement may name them). WRITE_ROUTE_ONLY=true
// marks the plan AccessWriteRouteOnly: a read/write group's primary
// answers it. ShardingSphere's other keys (USE_TRAFFIC, SKIP_SQL_REWRITE,
// SKIP_ENCRYPT_REWRITE, DISABLE_AUDIT_NAMES, SHADOW) are accepted and
// ignored; an unknown key is a 1064 error naming it, an unknown data
// source or table a 1235 error.
//
// # Read/write groups
//
// A !READWRITE_SPLITTING group (ReadwriteGroup: a primary and its
// replicas) is one data source to the router, under the group's name, with
// the primary's connection settings; its members are not data sources of
// their own. When the rules have groups, every plan carries an Access from
// the statement's tree (readwrite_access.go): AccessRead for a plain
// SELECT, which a replica may answer, and for everything else the reason
// it must run on the primary (a write, a locking read, a read of the
// backend session's own state, the WRITE_ROUTE_ONLY hint). Choosing the
// replica (load balancers, one file each, registered in loadbalancer.go),
// its health and read-your-writes are the proxy's.
//
// The shardflake hint slice=i/n (0 <= i < n) restricts a SELECT, UPDATE or
// DELETE to slice i of n of the data nodes of its first sharded table, for
// sharded jobs: data node k (in actualDataNodes order) belongs to slice
// k mod n, so executors 0..n-1 with the same n together cover every data
// node exactly once, and binding tables follow their partner's data node.
// A statement without sharded tables belongs to slice 0. A slice that holds
// no data node the statement reaches still returns a correct empty answer:
// the statement runs on one data node with its WHERE clause ANDed with 0,
// so column metadata and aggregates over no rows (COUNT 0) stay right.
//
// # Rejected with 1235 (never answered wrongly)
//
// Changing a sharding column where a row may have to move in an UPDATE
// of several tables or with ORDER BY/LIMIT (a single-table UPDATE runs:
// rows that stay are proven or checked, rows that belong elsewhere are
// moved, keymove.go), and in ON DUPLICATE KEY UPDATE other than
// col = VALUES(col); a write that calls LAST_INSERT_ID(expr) over several
// data nodes of a sharded table (oneInsertID: MariaDB keeps the value of
// the last row it changes, which the routes' OK packets do not tell); an
// INSERT without a column list into a sharded table (unless
// WithTableColumns knows the columns), or with an expression as sharding
// value; an INSERT ... SELECT the proxy runs in two steps whose ON
// DUPLICATE KEY UPDATE may name a column of the SELECT's tables (one they
// have, a derived table's or a CTE's) or holds a subquery
// (InsertSelectParts: rows of literals have no such columns); UPDATE or
// DELETE with a LIMIT other than an integer or a parameter on several
// data nodes of a sharded table (a LIMIT is the proxy's to spend node
// after node, Plan.RowLimit, in the ORDER BY's order read first,
// RowLimit.Order; ORDER BY alone takes every row, RowLimit.Unbounded; a
// broadcast table's copies, which hold the same rows, each take ORDER BY
// and LIMIT as they are);
// joins of unrelated sharded tables (binding tables too, unless the join
// equates all their sharding columns) and uncorrelated subqueries across
// data nodes (an UPDATE's or DELETE's IN (SELECT ...), and a SELECT's IN,
// scalar and EXISTS subqueries in WHERE and HAVING and scalar subqueries
// of the select fields, by themselves or inside an expression, the proxy
// evaluates first, with
// InSubqueries, SelectSubqueries and ReplaceSubqueries); INTERSECT, EXCEPT, a UNION other than
// of plain SELECTs each reading the same one sharded table (setop_lift.go), recursive CTEs and CTEs read twice
// across data nodes; across data nodes also window functions whose
// PARTITION BY does not name every sharding column of a sharded table of
// their block, or in a block that groups (select_window.go), GROUP BY ... WITH ROLLUP
// beside DISTINCT, an expression of a group key or HAVING key IS [NOT] NULL,
// aggregates other than the five, the BIT_ three, the variance family, GROUP_CONCAT,
// JSON_OBJECTAGG and JSON_ARRAYAGG (and GROUP_CONCAT of several expressions, or
// ordered by another expression than its argument), aggregates inside
// expressions (SUM(x)/COUNT(*)), HAVING with functions, SQL_CALC_FOUND_ROWS
// (the proxy takes it out of the statement and counts the rows itself)
// and SELECT ... INTO OUTFILE or DUMPFILE (INTO @var is the proxy's:
// the router sees the SELECT without it); RENAME of tables named in the rules; CREATE TABLE
// ... SELECT; views over sharded or broadcast tables.
//
// Statements the proxy answers itself (SET, USE, BEGIN, COMMIT, SHOW
// TABLES, KILL, CREATE DATABASE, statements on information_schema, ...)
// are Prepared with KindOther; their Bind fails with ErrProxyStatement.
//
// # Limits
//
// Table and schema names are matched case-insensitively. Sharding values
// are taken as written: a string compared with a numeric sharding column is
// read as MySQL reads it, but collations are not applied to string
// sharding columns. Backends must not run with NO_BACKSLASH_ESCAPES or
// ANSI_QUOTES. Join conditions pair tables only through plain column
// equalities ANDed together; an equality under OR, or through an
// expression, does not pair them.
package router
