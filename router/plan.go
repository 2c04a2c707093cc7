package router

import (
	"github.com/shardflake/shardflake/config"
)

// StatementKind classifies a statement for routing, transactions and metrics.
type StatementKind uint8

// Statement kinds.
const (
	KindSelect StatementKind = iota + 1
	KindInsert
	KindUpdate
	KindDelete
	KindDDL
	// KindOther is a statement the router does not route (SET, USE, BEGIN,
	// COMMIT, SHOW TABLES, KILL, CREATE DATABASE, ...): the proxy answers
	// it. Prepare returns such a Prepared without error and its Bind fails
	// with ErrProxyStatement.
	KindOther
	// KindShow is SHOW CREATE TABLE, SHOW COLUMNS/DESCRIBE and SHOW INDEX
	// on one table: routed to one data node, with Plan.Rename set when the
	// result names the physical table.
	KindShow
)

// String returns the lower-case name used in metrics labels and explain output.
func (k StatementKind) String() string {
	switch k {
	case KindSelect:
		return "select"
	case KindInsert:
		return "insert"
	case KindUpdate:
		return "update"
	case KindDelete:
		return "delete"
	case KindDDL:
		return "ddl"
	case KindOther:
		return "other"
	case KindShow:
		return "show"
	}
	return "unknown"
}

// MarshalText writes the kind by name, so plans print readably.
func (k StatementKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// RouteType says how many data nodes a plan reaches.
type RouteType uint8

// Route types.
const (
	RouteSingle    RouteType = iota + 1 // exactly one data node
	RouteMulti                          // several data nodes, not all of them
	RouteAll                            // every data node of the logical tables
	RouteBroadcast                      // every data source (broadcast tables, DDL)
)

// String returns the lower-case name used in metrics labels and explain output.
func (t RouteType) String() string {
	switch t {
	case RouteSingle:
		return "single"
	case RouteMulti:
		return "multi"
	case RouteAll:
		return "all"
	case RouteBroadcast:
		return "broadcast"
	}
	return "unknown"
}

// MarshalText writes the type by name, so plans print readably.
func (t RouteType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// Duplicates says what an INSERT does with a row whose key is taken; the
// zero value, a plain INSERT's, fails the statement.
type Duplicates uint8

// What an INSERT does with a row whose key is taken, and which rows
// MariaDB's info string counts as duplicates.
const (
	// DuplicatesSkipped is INSERT IGNORE's: the row is skipped and
	// counts (0 rows affected).
	DuplicatesSkipped Duplicates = iota + 1
	// DuplicatesReplaced is REPLACE's: the rows in the way are deleted
	// and count (rows affected beyond the one inserted).
	DuplicatesReplaced
	// DuplicatesUpdated is ON DUPLICATE KEY UPDATE's: a row it changes
	// counts (2 rows affected), an unchanged one does not (0, or 1 under
	// CLIENT_FOUND_ROWS).
	DuplicatesUpdated
	// DuplicatesSkippedOrUpdated is INSERT IGNORE ... ON DUPLICATE KEY
	// UPDATE's: an unchanged row counts (0 rows affected), a changed one
	// does not.
	DuplicatesSkippedOrUpdated
)

// String returns the lower-case name used in explain output.
func (d Duplicates) String() string {
	switch d {
	case 0:
		return "fail"
	case DuplicatesSkipped:
		return "skipped"
	case DuplicatesReplaced:
		return "replaced"
	case DuplicatesUpdated:
		return "updated"
	case DuplicatesSkippedOrUpdated:
		return "skipped-or-updated"
	}
	return "unknown"
}

// MarshalText writes the handling by name, so plans print readably.
func (d Duplicates) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Plan is one bound statement: the routes to run and how to combine their
// results. A Plan is immutable; the proxy executes it and never changes it.
// Bind may return the same *Plan to many callers (a statement without
// parameters is planned once, at Prepare).
type Plan struct {
	Kind StatementKind `json:"kind"`
	Type RouteType     `json:"type"`
	// Duplicates is, for an INSERT over data nodes, what it does with a
	// row whose key is taken: the proxy counts a route of one row, whose
	// answer has no info string, into the statement's "Duplicates: M"
	// from its rows affected. Beside Kind and Type, in the word they
	// leave.
	Duplicates Duplicates `json:"duplicates,omitempty"`
	Tables     []string   `json:"tables,omitempty"` // logical tables the statement names
	// Routes are the statements to run, in data-node order. There is
	// always at least one. Several routes may name the same data source
	// (one per data node); they are independent statements.
	Routes []Route `json:"routes"`
	// Merge says how the routes' results combine into the one result the
	// client sees. Nil means: a single route's result passes through
	// unchanged, or (for writes) affected rows are summed.
	Merge *Merge `json:"merge,omitempty"`
	// Unionable says the routes are SELECTs that may be branches of one
	// UNION ALL statement and mean there what they mean alone, with
	// columns that depend on neither the arguments nor the session's
	// variables: the proxy may send a data source's routes as one
	// statement (proxy/union.go). Set only with Merge.
	Unionable bool `json:"unionable,omitempty"`
	// Access says whether a read/write group's replica may answer the
	// plan (readwrite_access.go); zero, the primary, when the rules have
	// no !READWRITE_SPLITTING. Beside Unionable, so that the two share a
	// word: a plan is allocated per execution.
	Access Access `json:"access,omitempty"`
	// Keys describes the keys the router generated for an INSERT; nil when
	// it generated none.
	Keys *GeneratedKeys `json:"keys,omitempty"`
	// Rename is set when the result names a physical table that the client
	// must see under its logical name (SHOW CREATE TABLE, SHOW INDEX on a
	// sharded table).
	Rename *TableRename `json:"rename,omitempty"`
	// Move is set for an UPDATE of sharding columns that may move rows to
	// another data node: the proxy checks, and moves them (keymove.go).
	Move *KeyMove `json:"move,omitempty"`
	// First is set for an UPDATE or DELETE whose IN subqueries the
	// proxy evaluates before it routes the statement (insubquery.go);
	// Routes are then one per data source it may reach, with no SQL.
	First *SubqueriesFirst `json:"subqueriesFirst,omitempty"`
	// Fill is set for an INSERT ... SELECT into a sharded table that the
	// data nodes cannot run as it is: the proxy reads the SELECT's rows
	// first and inserts them as INSERT ... VALUES (insertselect.go);
	// Routes are then one per data source it may reach, with no SQL.
	Fill *InsertFill `json:"insertFill,omitempty"`
	// Returning is the select list of an INSERT ... RETURNING, which the
	// proxy appends to each route's SQL; the routes then return rows,
	// given back in the client's row order (Route.Rows).
	Returning string `json:"returning,omitempty"`
	// Drop is, for a DROP TABLE of several tables, the tables in the
	// client's order with the data nodes each one's DROP reaches: the
	// proxy names the tables none of whose data nodes existed in one
	// note or error 1051, as MariaDB names the client's missing tables,
	// where the data sources' own messages name physical tables. A
	// pointer: every statement's plan carries the field, and only a DROP
	// TABLE sets it.
	Drop *DroppedTables `json:"drop,omitempty"`
	// RowLimit is set for an UPDATE or DELETE with LIMIT over several
	// data nodes of a sharded table: the LIMIT is of the whole statement,
	// not of each data node.
	RowLimit *RowLimit `json:"rowLimit,omitempty"`
}

// DroppedTables are the tables of a DROP TABLE of several tables, in the
// client's order.
type DroppedTables []DroppedTable

// DroppedTable is one table of a DROP TABLE of several tables.
type DroppedTable struct {
	// Name is how MariaDB's 1051 names the table: the schema the client
	// qualified it with or the logical schema, a dot, and the name as
	// the client wrote them.
	Name  string            `json:"name"`
	Nodes []config.DataNode `json:"nodes"`
}

// SubqueriesFirst is an UPDATE, DELETE or SELECT that runs in two steps
// (an UPDATE or DELETE in one atomic write): the SELECTs of its
// uncorrelated subqueries, then the statement with their values in place
// of the subqueries (ReplaceSubqueries).
type SubqueriesFirst struct {
	// Selects are the subqueries' plans (an UPDATE's or DELETE's SELECT
	// ... FOR UPDATE), in the order ReplaceSubqueries takes their values.
	Selects []*Plan `json:"selects"`
	// Subqueries are what the statement makes of each one's rows.
	Subqueries []Subquery `json:"subqueries"`
	// Statement is the statement's text, to parse again.
	Statement string `json:"statement"`
	// Materialize is set for a SELECT whose only table is one derived
	// table that the router cannot merge across data nodes under the
	// statement around it: Selects[0] is the derived table's query, and
	// Statement is the SELECT with a temporary table in its place.
	Materialize *MaterializedDerived `json:"materialize,omitempty"`
}

// MaterializedDerived is a derived table the proxy reads first, merged
// across data nodes, into a temporary table of its own on one data
// source, where the statement around it then runs, as MariaDB
// materializes a derived table.
type MaterializedDerived struct {
	DataSource string `json:"dataSource"`
	// Table is the temporary table's name in the statement.
	Table string `json:"table"`
	// Origins name, by the derived table's column (lower case), the
	// table of a column that is MIN or MAX of a table's column, which
	// MariaDB describes as of that table where the read describes none.
	Origins map[string]string `json:"origins,omitempty"`
}

// RowLimit is the LIMIT of an UPDATE or DELETE over several data nodes.
// Each route's SQL ends with " LIMIT " and Count; the proxy runs the
// routes one after another in one atomic write. Without Order, each gets
// Count less the rows the routes before it matched, until none are left
// (any rows up to Count, as MariaDB takes them without ORDER BY).
type RowLimit struct {
	Count int64 `json:"count"`
	// Unbounded is set for ORDER BY without LIMIT, whose Count is
	// MaxInt64: every route takes all its rows, in the order the route
	// keeps, and Order (read only for a RETURNING) interleaves the rows
	// given back.
	Unbounded bool `json:"unbounded,omitempty"`
	// Order is set when the statement has ORDER BY: a SELECT ... FOR
	// UPDATE of each route's first Count rows in that order, whose last
	// column is the route's position in Routes, merged in that order and
	// cut at Count. The proxy runs it first; route i then takes as many
	// rows as the merged rows name i (ORDER BY and LIMIT that many), so
	// the rows changed are the statement's first in its order over all
	// data nodes.
	Order *Plan `json:"order,omitempty"`
}

// InsertFill is an INSERT ... SELECT the proxy runs in two steps, in one
// atomic write: Select, then the rows it read appended to Head as
// literal rows and followed by Tail, planned as an INSERT ... VALUES
// (keys generated for the rows that lack them, each row routed to its
// data node).
type InsertFill struct {
	// Select is the plan of the SELECT, a locking read (LOCK IN SHARE
	// MODE, as MariaDB reads the rows it inserts).
	Select *Plan `json:"select"`
	// Head is the INSERT up to its rows: "INSERT INTO `t` (`a`,`b`)
	// VALUES ".
	Head string `json:"head"`
	// Tail follows the rows: the statement's ON DUPLICATE KEY UPDATE
	// clause, or "".
	Tail string `json:"tail,omitempty"`
	// Columns is how many columns the SELECT must return: one per column
	// of Head (else 1136, as MariaDB answers before it reads a row).
	Columns int `json:"columns"`
}

// Route is one data source and the SQL to run on it.
type Route struct {
	DataSource string `json:"dataSource"`
	// Nodes are the data nodes (physical tables) the SQL touches, for
	// metrics and explain output.
	Nodes []config.DataNode `json:"nodes,omitempty"`
	// SQL is the statement for the data source. Literals of the client's
	// statement stay literals, correctly escaped (backslash escapes; the
	// proxy turns them into the NO_BACKSLASH_ESCAPES form for a backend
	// session in that mode); generated keys are
	// integer literals; each ? of the client's prepared statement that
	// this route still needs stays a ?.
	SQL string `json:"sql"`
	// Args are the values for SQL's ? placeholders, in order, taken
	// unchanged from the args given to Bind (pruned with IN lists and
	// split with INSERT rows); nil when SQL has no placeholder.
	Args []any `json:"args,omitempty"`
	// ArgTypes, when set, are the types a client bound Args with (two
	// bytes each, as COM_STMT_EXECUTE carries them), for a route that
	// passes a client's parameters on unchanged: a backend prepared
	// statement gets them under those types, so a bare parameter's result
	// column is described as the client's server would describe it.
	ArgTypes []byte `json:"-"`
	// Rows are, for a route of an INSERT split over several data nodes,
	// the positions (0-based) in the client's statement of the rows it
	// inserts, in its own order.
	Rows []int `json:"-"`
}

// GeneratedKeys records the keys an INSERT was given.
//
// The router asks the key generator once per statement for Count
// consecutive keys (First, First+1, ...); only when Count exceeds the
// generator's MaxBatch do the keys come in several blocks, each
// consecutive. First is what LAST_INSERT_ID() and the OK packet report.
type GeneratedKeys struct {
	Column string `json:"column"`
	First  int64  `json:"first"`
	Count  int    `json:"count"`
}

// TableRename is a physical table name in a result that the client must see
// as its logical name: in SHOW CREATE TABLE the Table column and the
// "CREATE TABLE `physical`" head of the Create Table column; in SHOW INDEX
// the Table column. SHOW COLUMNS results name no table.
type TableRename struct {
	Physical string `json:"physical"`
	Logical  string `json:"logical"`
}
