package config

import (
	"net"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

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
	// MaxConnectionsPerQuery caps the backend connections one statement
	// takes from one data source (1 to 8, default 8): routes beyond it
	// share them. With 1, as ShardingSphere's max-connections-size-per-query
	// default, a read's (and LOAD DATA's) routes on one data source run
	// one after another on one connection. A write takes one connection
	// per data source whatever the setting, one backend transaction there.
	MaxConnectionsPerQuery int
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
	// LockWaitTimeout is applied to every backend session as
	// innodb_lock_wait_timeout (whole seconds); 0 leaves the data
	// source's own setting (MariaDB's default is 50s). A deadlock between
	// data sources is detected by no server: the proxy's detector
	// (DeadlockDetection) ends it, or else a lock wait timeout does.
	LockWaitTimeout time.Duration
	// DeadlockDetection is how long a statement runs before the proxy
	// asks the data sources it waits on for their lock waits and ends a
	// deadlock that crosses data sources with 1213, as one MariaDB would
	// (default DefaultDeadlockDetection; 0, "off" in the file: none, such
	// a deadlock lasts until a lock wait times out).
	DeadlockDetection time.Duration
	// UnionRoutes joins the routes of a multi-route SELECT that share a
	// data source into one statement, (q1) UNION ALL (q2) ..., so the
	// data source answers once instead of once per table (default true;
	// false sends one statement per data node, as before).
	UnionRoutes bool
	// Multiplex runs the autocommit single-route SELECTs of sessions that
	// carry no session state on a few shared backend connections per
	// data source, several commands pipelined in one write (default
	// false; "server.multiplex: on"). MultiplexConnections is how many
	// per data source (default 1: with 2, the statements of a data source
	// no longer keep one backend thread busy, and the switch no longer
	// pays; BENCHMARKS.md). MultiplexMaxWait bounds how long a
	// statement waits on a shared connection behind another session's
	// command: one that waited that long while the oldest command on the
	// connection has been out as long runs on a pooled connection
	// instead, and no statement joins a connection whose oldest command
	// is that old (default DefaultMultiplexMaxWait).
	Multiplex            bool
	MultiplexConnections int
	MultiplexMaxWait     time.Duration
	// MoveUpdatedRows lets an UPDATE that assigns a sharding column move
	// each row whose new values belong to another data node there
	// (DELETE on the old, INSERT on the new one, in the statement's
	// atomic write), as Vitess does for its primary vindex (default
	// true). False refuses such a statement with 1235, as ShardingSphere
	// does, and changes nothing; an UPDATE whose rows all stay runs
	// either way.
	MoveUpdatedRows bool
	// BindingJoins says when a join of binding tables pairs their data
	// nodes (binding.go): declared (default), also on a foreign-key join
	// to one table's key column; strict, only when it equates all their
	// sharding columns.
	BindingJoins BindingJoins
	// CPUScheduling is the Linux scheduling policy the binary gives its
	// threads at start (default batch; see CPUScheduling).
	CPUScheduling CPUScheduling
	// Traffic are the rate and concurrency limits (server.traffic), in
	// file order.
	Traffic []TrafficRule
	// Version is the server version the proxy announces at login and as
	// VERSION() and @@version. Drivers pick features and variable names
	// from its leading major.minor.patch. Empty (the default): the
	// proxy announces the default data source's version with a
	// "-shardflake" suffix, so a MariaDB-aware client sees MariaDB
	// (10.11.19-MariaDB-shardflake), and DefaultVersion when that data
	// source cannot be asked.
	Version string
	// Limits bound what clients can make the proxy hold (server_limits.go).
	Limits Limits
	// TransactionMode is how a transaction that writes to several data
	// sources commits (default local): local commits each data source in
	// turn, xa commits them atomically with two-phase commit (XA) and a
	// durable decision. Sessions may change it with SET
	// shardflake_transaction_mode. One data source commits one phase in
	// either mode.
	TransactionMode TransactionMode
	// Cluster, when set, runs the proxy in a fleet that shares its rules
	// and membership through etcd (server_cluster.go); nil: standalone.
	Cluster *Cluster
}

// TransactionMode is server.transactionMode.
type TransactionMode int

// Transaction modes.
const (
	TransactionLocal TransactionMode = iota + 1 // commit each data source in turn
	TransactionXA                               // two-phase commit across data sources
)

// String returns the mode as the rules file writes it.
func (m TransactionMode) String() string {
	switch m {
	case TransactionLocal:
		return "local"
	case TransactionXA:
		return "xa"
	}
	return "unknown"
}

// ParseTransactionMode reads a transaction mode, case-insensitively:
// local or xa (ShardingSphere's LOCAL and XA). ok is false for anything
// else.
func ParseTransactionMode(s string) (TransactionMode, bool) {
	switch strings.ToLower(s) {
	case "local":
		return TransactionLocal, true
	case "xa":
		return TransactionXA, true
	}
	return 0, false
}

// Server defaults, applied by Load for keys the file leaves out.
const (
	DefaultListen                 = "127.0.0.1:3307"
	DefaultMetricsListen          = "127.0.0.1:9307"
	DefaultMaxConnections         = 1024
	DefaultMaxConnectionsPerQuery = 8
	DefaultHandshakeTimeout       = 10 * time.Second
	DefaultSlowStatementThreshold = time.Second
	DefaultMergeMemoryBytes       = 64 << 20
	DefaultMultiplexMaxWait       = 10 * time.Millisecond
	DefaultDeadlockDetection      = 250 * time.Millisecond
	// MinDeadlockDetection is deadlockDetection's least value: InnoDB
	// refreshes information_schema's lock tables only when they were
	// last read over 0.1 s ago, so reading them more often reads the
	// same lock waits again and again.
	MinDeadlockDetection = 200 * time.Millisecond
	// DefaultVersion is what the proxy announces when the default data
	// source's version is unknown: a MySQL 5.7 number, the dialect
	// MariaDB 10.x backends speak (utf8mb4_general_ci, tx_isolation, the query cache
	// variables). A client told "8.0" may ask for what MariaDB refuses,
	// such as the utf8mb4_0900_ai_ci collation.
	DefaultVersion = "5.7.99-shardflake"
	// MaxLockWaitTimeout is innodb_lock_wait_timeout's largest value.
	MaxLockWaitTimeout = 1073741824 * time.Second
)

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

// serverKeys are the keys of the server: section.
func serverKeys() []string {
	return []string{"listen", "metricsListen", "users", "defaultDataSource", "tls", "authPlugin",
		"maxConnections", "maxConnectionsPerQuery", "handshakeTimeout", "statementTimeout", "multiSourceTransactions",
		"slowStatementThreshold", "maxScatterRows", "mergeMemoryBytes", "version", "lockWaitTimeout", "deadlockDetection",
		"unionRoutes", "multiplex", "multiplexConnections", "multiplexMaxWait", "moveUpdatedRows", "bindingJoins", "cpuScheduling", "traffic", "transactionMode", "cluster"}
}

// allServerKeys are serverKeys and the keys of Limits.
func allServerKeys() []string { return append(serverKeys(), limitKeys()...) }

// server decodes the server: section and applies the defaults. root is
// the file's top mapping, for errors about a missing section.
func (d *decoder) server(r *Rules, n *yaml.Node, root *yaml.Node) {
	s := &r.Server
	f := d.fields(n, "server", allServerKeys()...)
	missing := f == nil
	if missing {
		// A ShardingSphere file has no server: section; it loads (check and
		// explain work) but CheckServe refuses to serve it without users.
		f = &fieldSet{node: root}
		d.warnf(nil, "no server: section: defaults apply, and serve needs server.users to accept logins")
	}
	s.Listen = d.address(f, "listen", DefaultListen)
	s.MetricsListen = d.address(f, "metricsListen", DefaultMetricsListen)
	if s.Listen == s.MetricsListen {
		d.errorf(f.keyNode("metricsListen"), "server.metricsListen %s is the same address as server.listen", s.MetricsListen)
	}
	if !missing {
		d.users(s, f, r.DatabaseName)
	}
	s.DefaultDataSource = d.str(f.get("defaultDataSource"), "server.defaultDataSource")
	if s.DefaultDataSource != "" && r.dsByName != nil && r.dsByName[s.DefaultDataSource] == nil {
		d.errorf(f.get("defaultDataSource"), "server.defaultDataSource %q is not in dataSources", s.DefaultDataSource)
	}
	if tls := d.fields(f.get("tls"), "server.tls", "cert", "key"); tls != nil {
		s.TLSCert = d.str(tls.get("cert"), "server.tls.cert")
		s.TLSKey = d.str(tls.get("key"), "server.tls.key")
		if (s.TLSCert == "") != (s.TLSKey == "") {
			d.errorf(f.keyNode("tls"), "server.tls needs both cert and key (PEM file paths)")
		}
	}
	s.AuthPlugin = AuthNativePassword
	switch p := d.str(f.get("authPlugin"), "server.authPlugin"); p {
	case "", "mysql_native_password":
	case "caching_sha2_password":
		s.AuthPlugin = AuthCachingSHA2
	default:
		d.errorf(f.get("authPlugin"), "server.authPlugin %q: want mysql_native_password or caching_sha2_password", p)
	}
	s.MaxConnections = int(d.integer(f.get("maxConnections"), "server.maxConnections", DefaultMaxConnections))
	if s.MaxConnections <= 0 {
		d.errorf(f.get("maxConnections"), "server.maxConnections must be positive")
	}
	s.MaxConnectionsPerQuery = int(d.integer(f.get("maxConnectionsPerQuery"), "server.maxConnectionsPerQuery", DefaultMaxConnectionsPerQuery))
	if s.MaxConnectionsPerQuery < 1 || s.MaxConnectionsPerQuery > DefaultMaxConnectionsPerQuery {
		d.errorf(f.get("maxConnectionsPerQuery"), "server.maxConnectionsPerQuery %d: want 1 to %d", s.MaxConnectionsPerQuery, DefaultMaxConnectionsPerQuery)
	}
	s.HandshakeTimeout = d.duration(f.get("handshakeTimeout"), "server.handshakeTimeout", DefaultHandshakeTimeout)
	if s.HandshakeTimeout == 0 {
		d.errorf(f.get("handshakeTimeout"), "server.handshakeTimeout must be positive")
	}
	s.StatementTimeout = d.duration(f.get("statementTimeout"), "server.statementTimeout", 0)
	s.MultiSourceTransactions = MultiSourceAllow
	switch m := d.str(f.get("multiSourceTransactions"), "server.multiSourceTransactions"); m {
	case "", "allow":
	case "reject":
		s.MultiSourceTransactions = MultiSourceReject
	default:
		d.errorf(f.get("multiSourceTransactions"), "server.multiSourceTransactions %q: want allow or reject", m)
	}
	s.SlowStatementThreshold = d.duration(f.get("slowStatementThreshold"), "server.slowStatementThreshold", DefaultSlowStatementThreshold)
	s.MaxScatterRows = d.integer(f.get("maxScatterRows"), "server.maxScatterRows", 0)
	if s.MaxScatterRows < 0 {
		d.errorf(f.get("maxScatterRows"), "server.maxScatterRows cannot be negative (0 means unlimited)")
	}
	s.MergeMemoryBytes = d.bytesize(f.get("mergeMemoryBytes"), "server.mergeMemoryBytes", DefaultMergeMemoryBytes)
	if s.MergeMemoryBytes == 0 {
		d.errorf(f.get("mergeMemoryBytes"), "server.mergeMemoryBytes must be positive")
	}
	if f.has("lockWaitTimeout") {
		s.LockWaitTimeout = d.duration(f.get("lockWaitTimeout"), "server.lockWaitTimeout", 0)
		switch lw := s.LockWaitTimeout; {
		case lw < time.Second:
			d.errorf(f.get("lockWaitTimeout"), "server.lockWaitTimeout must be at least 1s (leave it out to keep the data sources' innodb_lock_wait_timeout)")
		case lw%time.Second != 0:
			d.errorf(f.get("lockWaitTimeout"), "server.lockWaitTimeout must be whole seconds (innodb_lock_wait_timeout counts seconds), got %s", lw)
		case lw > MaxLockWaitTimeout:
			d.errorf(f.get("lockWaitTimeout"), "server.lockWaitTimeout must be at most %s", MaxLockWaitTimeout)
		}
	}
	if v := f.get("deadlockDetection"); strings.EqualFold(d.str(v, "server.deadlockDetection"), "off") {
		s.DeadlockDetection = 0
	} else if s.DeadlockDetection = d.duration(v, "server.deadlockDetection", DefaultDeadlockDetection); s.DeadlockDetection < MinDeadlockDetection {
		d.errorf(v, "server.deadlockDetection must be off or a duration of at least %s, got %s", MinDeadlockDetection, s.DeadlockDetection)
	}
	s.UnionRoutes = d.boolean(f.get("unionRoutes"), "server.unionRoutes", true)
	switch v := strings.ToLower(d.str(f.get("multiplex"), "server.multiplex")); v {
	case "", "off", "false":
	case "on", "true":
		s.Multiplex = true
	default:
		d.errorf(f.get("multiplex"), "server.multiplex must be off or on, got %q", v)
	}
	s.MultiplexConnections = 1
	if f.has("multiplexConnections") {
		s.MultiplexConnections = int(d.integer(f.get("multiplexConnections"), "server.multiplexConnections", 1))
		if s.MultiplexConnections < 1 || s.MultiplexConnections > 64 {
			d.errorf(f.get("multiplexConnections"), "server.multiplexConnections must be between 1 and 64, got %d", s.MultiplexConnections)
		}
	}
	s.MultiplexMaxWait = d.duration(f.get("multiplexMaxWait"), "server.multiplexMaxWait", DefaultMultiplexMaxWait)
	if s.MultiplexMaxWait <= 0 {
		d.errorf(f.get("multiplexMaxWait"), "server.multiplexMaxWait must be positive")
	}
	s.MoveUpdatedRows = d.boolean(f.get("moveUpdatedRows"), "server.moveUpdatedRows", true)
	switch v := d.str(f.get("bindingJoins"), "server.bindingJoins"); v {
	case "", "declared":
		s.BindingJoins = BindingDeclared
	case "strict":
		s.BindingJoins = BindingStrict
	default:
		d.errorf(f.get("bindingJoins"), "server.bindingJoins must be declared or strict, got %q", v)
	}
	switch v := d.str(f.get("cpuScheduling"), "server.cpuScheduling"); v {
	case "", "batch":
		s.CPUScheduling = SchedulingBatch
	case "normal":
		s.CPUScheduling = SchedulingNormal
	default:
		d.errorf(f.get("cpuScheduling"), "server.cpuScheduling must be batch or normal, got %q", v)
	}
	s.TransactionMode = TransactionLocal
	if m := d.str(f.get("transactionMode"), "server.transactionMode"); m != "" {
		mode, ok := ParseTransactionMode(m)
		if !ok || m != strings.ToLower(m) {
			d.errorf(f.get("transactionMode"), "server.transactionMode %q: want local or xa", m)
		}
		s.TransactionMode = mode
	}
	d.traffic(r, f.get("traffic"))
	d.cluster(r, f.get("cluster"))
	d.limits(s, f)
	s.Version = d.str(f.get("version"), "server.version")
	if s.Version != "" && !validVersion(s.Version) {
		d.errorf(f.get("version"), "server.version %q must start with a version number major.minor.patch, which drivers read (e.g. 8.0.36-shardflake), and hold no control characters", s.Version)
	}
}

// validVersion reports whether v starts with digits.digits.digits and is
// printable (the handshake ends it with a NUL byte).
func validVersion(v string) bool {
	if len(v) > 60 {
		return false
	}
	for _, c := range v {
		if c < ' ' || c == 0x7f {
			return false
		}
	}
	rest := v
	for i := range 3 {
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 0 {
			return false
		}
		rest = rest[n:]
		if i < 2 {
			if rest == "" || rest[0] != '.' {
				return false
			}
			rest = rest[1:]
		}
	}
	return true
}

// address reads a host:port; def when absent.
func (d *decoder) address(f *fieldSet, key, def string) string {
	if !f.has(key) {
		return def
	}
	a := d.str(f.get(key), "server."+key)
	if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
		d.errorf(f.get(key), "server.%s must be host:port, got %q", key, a)
	}
	return a
}

// CheckServe reports what keeps the rules from being served although they
// load: a file without a server: section (a ShardingSphere file) has no
// users to log in with. serve calls it before listening.
func (r *Rules) CheckServe() error {
	if len(r.Server.Users) == 0 {
		return Errors{{File: r.File, Message: "server.users is required to serve: add a server: section with at least one {user, password}"}}
	}
	return nil
}
