package router

import "time"

// Server is the rules file's server: section, shardflake's own settings for
// the proxy process. The proxy owns the meaning of each field; Load fills
// in every default, so a zero value below means what its comment says.
type Server struct {
	// Listen is the MySQL protocol address (default 127.0.0.1:3307).
	Listen string
	// MetricsListen serves /metrics and /healthz (default 127.0.0.1:9307).
	MetricsListen string
	// Users are the accounts clients log in with; at least one.
	Users []User
	// DefaultDataSource holds tables without rules: server.defaultDataSource,
	// else the first data source in the file. Rules.DefaultDataSource
	// carries the same name.
	DefaultDataSource string
	// TLSCert and TLSKey are PEM file paths; TLS is offered when both are set.
	TLSCert string
	TLSKey  string
	// AuthPlugin is the authentication method offered first
	// (default mysql_native_password).
	AuthPlugin AuthPlugin
	// MaxConnections caps client connections (default 1024).
	MaxConnections int
	// HandshakeTimeout bounds the login handshake (default 10s).
	HandshakeTimeout time.Duration
	// StatementTimeout cancels a statement running longer (default 0: none).
	StatementTimeout time.Duration
	// MultiSourceTransactions says whether one transaction may write to
	// several data sources (default allow).
	MultiSourceTransactions MultiSourceTransactions
	// SlowStatementThreshold is the duration above which a statement is
	// logged and counted as slow (default 1s).
	SlowStatementThreshold time.Duration
	// MaxScatterRows caps the rows a statement that reaches several data
	// nodes may return (default 0: unlimited).
	MaxScatterRows int64
	// MergeMemoryBytes is the memory budget of one statement's in-memory
	// merge (sort, group, distinct) (default 64 MiB).
	MergeMemoryBytes int64
}

// Server defaults, applied by Load for keys the file leaves out.
const (
	DefaultListen                 = "127.0.0.1:3307"
	DefaultMetricsListen          = "127.0.0.1:9307"
	DefaultMaxConnections         = 1024
	DefaultHandshakeTimeout       = 10 * time.Second
	DefaultSlowStatementThreshold = time.Second
	DefaultMergeMemoryBytes       = 64 << 20
)

// User is one account clients log in with.
type User struct {
	Name     string
	Password string
}

// AuthPlugin is a MySQL authentication plugin the proxy offers.
type AuthPlugin int

// Authentication plugins.
const (
	AuthNativePassword AuthPlugin = iota + 1 // mysql_native_password
	AuthCachingSHA2                          // caching_sha2_password
)

// String returns the plugin name as MySQL spells it.
func (p AuthPlugin) String() string {
	switch p {
	case AuthNativePassword:
		return "mysql_native_password"
	case AuthCachingSHA2:
		return "caching_sha2_password"
	}
	return "unknown"
}

// MultiSourceTransactions is the policy for a transaction that writes to
// more than one data source (shardflake commits each data source's part
// separately, so such a transaction is not atomic across data sources).
type MultiSourceTransactions int

// Multi-source transaction policies.
const (
	MultiSourceAllow  MultiSourceTransactions = iota + 1 // allow, commit per data source
	MultiSourceReject                                    // reject the statement that would add a second data source
)

// String returns the policy as the rules file writes it.
func (m MultiSourceTransactions) String() string {
	switch m {
	case MultiSourceAllow:
		return "allow"
	case MultiSourceReject:
		return "reject"
	}
	return "unknown"
}
