package router

// StatementKind classifies a statement for routing, transactions and metrics.
type StatementKind int

// Statement kinds.
const (
	KindSelect StatementKind = iota + 1
	KindInsert
	KindUpdate
	KindDelete
	KindDDL
	KindOther
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
	}
	return "unknown"
}

// RouteType says how many data nodes a plan reaches.
type RouteType int

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

// Plan is one bound statement: the routes to run and how to combine their
// results. A Plan is immutable; the proxy executes it and never changes it.
type Plan struct {
	Kind   StatementKind `json:"kind"`
	Type   RouteType     `json:"type"`
	Tables []string      `json:"tables,omitempty"` // logical tables the statement names
	Routes []Route       `json:"routes"`
	// Merge says how the routes' results combine into the one result the
	// client sees. Nil means: a single route's result passes through
	// unchanged, or (for writes) affected rows are summed.
	Merge *Merge `json:"merge,omitempty"`
	// Keys describes the keys the router generated for an INSERT; nil when
	// it generated none.
	Keys *GeneratedKeys `json:"keys,omitempty"`
}

// Route is one data source and the SQL to run on it.
type Route struct {
	DataSource string `json:"dataSource"`
	// Nodes are the data nodes (physical tables) the SQL touches, for
	// metrics and explain output.
	Nodes []DataNode `json:"nodes,omitempty"`
	SQL   string     `json:"sql"`
	// Args are the values for the SQL's ? placeholders, in order; nil when
	// the SQL carries its values as literals.
	Args []any `json:"args,omitempty"`
}

// DataNode names one physical table on one data source.
type DataNode struct {
	DataSource string `json:"dataSource"`
	Table      string `json:"table"`
}

// String returns the ds.table form used in rules files and explain output.
func (n DataNode) String() string { return n.DataSource + "." + n.Table }

// GeneratedKeys records the consecutive keys an INSERT was given.
type GeneratedKeys struct {
	Column string `json:"column"`
	First  int64  `json:"first"`
	Count  int    `json:"count"`
}
