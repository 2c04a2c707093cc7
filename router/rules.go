package router

import "time"

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
}

// DataSource is one MySQL database the proxy connects to.
type DataSource struct {
	Name     string
	Host     string
	Port     int
	Database string
	User     string
	Password string
	// Params are the URL's query parameters, passed through when they mean
	// something to a MySQL connection (e.g. charset).
	Params map[string]string
	// Pool settings, from ShardingSphere's names (maxPoolSize,
	// minPoolSize, connectionTimeoutMilliseconds,
	// idleTimeoutMilliseconds, maxLifetimeMilliseconds).
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
	DatabaseStrategy *Strategy
	TableStrategy    *Strategy
	// KeyColumn is the column keyGenerateStrategy fills in, and KeyGenerator
	// the name of its generator; both empty when the table has none.
	KeyColumn    string
	KeyGenerator string
}

// StrategyKind is the shape of a sharding strategy.
type StrategyKind int

// Strategy kinds, as ShardingSphere names them.
const (
	StrategyStandard StrategyKind = iota + 1
	StrategyComplex
	StrategyHint
)

// Strategy is a databaseStrategy or tableStrategy: its sharding columns and
// the algorithm that maps their values to targets.
type Strategy struct {
	Kind          StrategyKind
	Columns       []string // lower-case; one for standard, several for complex, none for hint
	AlgorithmName string
	Algorithm     Algorithm
}
