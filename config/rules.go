package config

import (
	"strings"
	"time"

	"github.com/shardflake/shardflake/algorithm"
)

// Rules is a loaded and validated rules file: the immutable snapshot a
// Router is built from and the proxy reads its settings from.
//
// Load fills it in (rules loading lives in config*.go); nothing changes it
// afterwards.
type Rules struct {
	// File is the path the rules came from, for error messages.
	File string
	// DatabaseName is the logical schema clients USE.
	DatabaseName string
	Server       Server
	// DataSources in the order the file lists them.
	DataSources []DataSource
	// DefaultDataSource holds tables without rules.
	DefaultDataSource string
	// Tables are the sharded logical tables, by lower-case name.
	Tables map[string]*TableRule
	// BroadcastTables exist on every data source, by lower-case name.
	BroadcastTables []string
	// BindingGroups are groups of logical tables that shard alike and join
	// suffix to suffix.
	BindingGroups [][]string
	// KeyGenerators by name, as the file declares them.
	KeyGenerators map[string]KeyGeneratorConfig
	// Algorithms are the shardingAlgorithms entries by name.
	Algorithms map[string]algorithm.Algorithm
	// ReadwriteGroups are the !READWRITE_SPLITTING groups, in the file's
	// order. Each is also in DataSources under its name, with its
	// primary's connection settings; its members are not.
	ReadwriteGroups []ReadwriteGroup
	// Warnings are findings that do not stop the proxy (data nodes no key
	// can reach, accepted-but-ignored ShardingSphere settings); the check
	// command prints them and serve logs them.
	Warnings []*Error

	broadcast map[string]bool
	binding   map[string][]string
	dsByName  map[string]*DataSource
	// groupMember maps a readwrite group member's data source to its group.
	groupMember map[string]string
}

// Table returns the rule of a sharded logical table, matching the name
// case-insensitively, or nil when the table has no sharding rule.
func (r *Rules) Table(name string) *TableRule {
	if t, ok := r.Tables[name]; ok {
		return t
	}
	return r.Tables[strings.ToLower(name)]
}

// IsBroadcast reports whether the logical table (any case) is a broadcast
// table.
func (r *Rules) IsBroadcast(name string) bool {
	return r.broadcast[name] || r.broadcast[strings.ToLower(name)]
}

// BindingGroup returns the lower-case logical tables bound with name (name
// included, in the file's order), or nil when name is in no binding group.
// Validation guarantees that the tables of a group shard alike: the same
// sharding values reach the data node at the same index of each table's
// DataNodes, so joins pair DataNodes[i] with DataNodes[i].
func (r *Rules) BindingGroup(name string) []string {
	if g, ok := r.binding[name]; ok {
		return g
	}
	return r.binding[strings.ToLower(name)]
}

// DataSource returns the data source with this name (exact match, as
// actualDataNodes spells it), or nil.
func (r *Rules) DataSource(name string) *DataSource {
	return r.dsByName[name]
}

// DataSourceNames returns the data source names in the file's order.
func (r *Rules) DataSourceNames() []string {
	names := make([]string, len(r.DataSources))
	for i := range r.DataSources {
		names[i] = r.DataSources[i].Name
	}
	return names
}

// DataSource is one MySQL database the proxy connects to.
type DataSource struct {
	Name     string
	Host     string
	Port     int
	Database string
	User     string
	Password string
	// Params are the URL's query parameters as written (last value wins);
	// the proxy uses those that mean something to its MySQL client (e.g.
	// charset, and useSSL, requireSSL, sslMode in TLS) and ignores
	// JDBC-only ones (serverTimezone). Nil when the URL has none.
	Params map[string]string
	// TLS is how connections to the data source are secured.
	TLS DataSourceTLS
	// Pool settings, from ShardingSphere's names (maxPoolSize,
	// minPoolSize, connectionTimeoutMilliseconds,
	// idleTimeoutMilliseconds, maxLifetimeMilliseconds) or their HikariCP
	// spellings; 0 when the file leaves them out (the proxy's default).
	MaxPoolSize       int
	MinPoolSize       int
	ConnectionTimeout time.Duration
	IdleTimeout       time.Duration
	MaxLifetime       time.Duration
}

// KeyGeneratorConfig is one entry of keyGenerators: its type (SNOWFLAKE,
// ...) and its props as written.
type KeyGeneratorConfig struct {
	Name  string
	Type  string
	Props map[string]string
}

// TableRule is the sharding rule of one logical table.
type TableRule struct {
	Name string
	// DataNodes lists every data node of the table, in actualDataNodes order.
	DataNodes []DataNode
	// DatabaseStrategy picks data sources and TableStrategy physical tables;
	// nil means "none" (every data source, or the only table).
	DatabaseStrategy *algorithm.Strategy
	TableStrategy    *algorithm.Strategy
	// KeyColumn is the column keyGenerateStrategy fills in, and KeyGenerator
	// the name of its generator; both empty when the table has none.
	KeyColumn    string
	KeyGenerator string
	// Auto marks a table from autoTables: its data nodes were generated
	// from the algorithm's sharding count (t_order_0 .. t_order_N-1 spread
	// round-robin over actualDataSources).
	Auto bool
	// Line is where the table's rule starts in the rules file.
	Line int

	dataSources []string            // distinct, in DataNodes order
	tables      map[string][]string // data source -> physical tables, in order
	allTables   []string            // distinct physical tables, in order
	nodes       map[DataNode]bool
}

// DataSources returns the distinct data sources of the table's data nodes,
// in actualDataNodes order. The slice must not be modified.
func (t *TableRule) DataSources() []string { return t.dataSources }

// Tables returns the physical tables of the logical table on data source
// ds, in actualDataNodes order; nil when ds holds none. The slice must not
// be modified.
func (t *TableRule) Tables(ds string) []string { return t.tables[ds] }

// ActualTables returns the distinct physical table names over all data
// sources, in actualDataNodes order. The slice must not be modified.
func (t *TableRule) ActualTables() []string { return t.allTables }

// Node reports whether ds.table is one of the table's data nodes.
func (t *TableRule) Node(ds, table string) bool {
	return t.nodes[DataNode{DataSource: ds, Table: table}]
}

// Route returns the data nodes that rows matching conds can live on, in
// DataNodes order: the database strategy picks among DataSources(), then
// the table strategy picks among Tables(ds) on each picked data source.
// conds follows Strategy.Route (keys are lower-case column names). For an
// INSERT row, exactly one data node comes back for a valid rules file
// (validation checks it); zero means the row's values match no data node.
func (t *TableRule) Route(conds map[string]algorithm.ColumnCondition) ([]DataNode, error) {
	dss, err := t.DatabaseStrategy.Route(t.dataSources, conds)
	if err != nil {
		return nil, err
	}
	var nodes []DataNode
	for _, ds := range dss {
		tables, err := t.TableStrategy.Route(t.tables[ds], conds)
		if err != nil {
			return nil, err
		}
		for _, tb := range tables {
			nodes = append(nodes, DataNode{DataSource: ds, Table: tb})
		}
	}
	return nodes, nil
}

// RouteHint is Route for SHARDINGSPHERE_HINT values: dbValues drive the
// database strategy and tableValues the table strategy (Strategy.RouteHint);
// nil values leave that level unrestricted.
func (t *TableRule) RouteHint(dbValues, tableValues []algorithm.Value) ([]DataNode, error) {
	dss, err := t.DatabaseStrategy.RouteHint(t.dataSources, dbValues)
	if err != nil {
		return nil, err
	}
	var nodes []DataNode
	for _, ds := range dss {
		tables, err := t.TableStrategy.RouteHint(t.tables[ds], tableValues)
		if err != nil {
			return nil, err
		}
		for _, tb := range tables {
			nodes = append(nodes, DataNode{DataSource: ds, Table: tb})
		}
	}
	return nodes, nil
}
