package config

import "time"

// ReadwriteGroup is one entry of !READWRITE_SPLITTING dataSourceGroups: a
// primary and its replicas, which the rest of the rules (actualDataNodes,
// defaultDataSource, hints) name as one data source, the group's Name.
// The proxy sends writes to Primary and plain reads to a healthy replica.
type ReadwriteGroup struct {
	// Name is the group's name, the data source the router sees.
	Name string
	// Primary is the writeDataSourceName's data source (Name is the
	// data source's own name, e.g. primary_ds_0).
	Primary DataSource
	// Replicas are readDataSourceNames' data sources, in the file's
	// order, with their weights.
	Replicas []Replica
	// TransactionalReads is transactionalReadQueryStrategy.
	TransactionalReads TransactionalReads
	// LoadBalancer is the loadBalancerName's entry (ROUND_ROBIN when the
	// group names none, as ShardingSphere does).
	LoadBalancer LoadBalancerConfig
	// MaxReplicationLag excludes a replica whose Seconds_Behind_Master
	// is above it (shardflake's key; default 0: no lag bound, only a
	// stopped replica is excluded).
	MaxReplicationLag time.Duration
	// WhenNoReplica says where reads go when no replica qualifies
	// (shardflake's key whenNoReplica: PRIMARY, the default, or FAIL).
	WhenNoReplica NoReplicaAction
	// CausalReads is the read-your-writes scope (shardflake's key
	// causalReads: SESSION, the default, USER or OFF).
	CausalReads CausalScope
	// CausalTimeout bounds MASTER_GTID_WAIT on a replica before the read
	// goes to the primary (causalTimeout, default 100ms).
	CausalTimeout time.Duration
	// CausalWindow is how long a user's last write is remembered with
	// causalReads USER (causalWindow, default 5s).
	CausalWindow time.Duration
	// Line is where the group is written in the rules file.
	Line int
}

// Replica is one read data source of a group.
type Replica struct {
	DataSource
	// Weight is the WEIGHT load balancer's weight (1 for the others).
	Weight float64
}

// LoadBalancerConfig is one entry of !READWRITE_SPLITTING loadBalancers.
type LoadBalancerConfig struct {
	Name  string
	Type  string
	Props map[string]string
}

// TransactionalReads is ShardingSphere's transactionalReadQueryStrategy:
// where reads inside a transaction go.
type TransactionalReads int

// Transactional read strategies.
const (
	// TransactionalDynamic load-balances each read of a transaction
	// (ShardingSphere's default).
	TransactionalDynamic TransactionalReads = iota + 1
	// TransactionalFixed sends a transaction's reads to one replica,
	// chosen at its first read.
	TransactionalFixed
	// TransactionalPrimary sends a transaction's reads to the primary.
	TransactionalPrimary
)

// String returns the strategy as the rules file writes it.
func (t TransactionalReads) String() string {
	switch t {
	case TransactionalDynamic:
		return "DYNAMIC"
	case TransactionalFixed:
		return "FIXED"
	case TransactionalPrimary:
		return "PRIMARY"
	}
	return "unknown"
}

// NoReplicaAction is what a read does when no replica of its group
// qualifies (all stopped, lagging or unreachable).
type NoReplicaAction int

// Actions when no replica qualifies.
const (
	// NoReplicaPrimary reads from the primary.
	NoReplicaPrimary NoReplicaAction = iota + 1
	// NoReplicaFail fails the read with an error naming the group.
	NoReplicaFail
)

// String returns the action as the rules file writes it.
func (a NoReplicaAction) String() string {
	switch a {
	case NoReplicaPrimary:
		return "PRIMARY"
	case NoReplicaFail:
		return "FAIL"
	}
	return "unknown"
}

// CausalScope is whose writes a replica read must see.
type CausalScope int

// Read-your-writes scopes.
const (
	// CausalSession: a session's reads see the session's own writes.
	CausalSession CausalScope = iota + 1
	// CausalUser: a session's reads see the writes of every session of
	// the same user during CausalWindow (an application's pool).
	CausalUser
	// CausalOff: replica reads may be stale by the replication lag.
	CausalOff
)

// String returns the scope as the rules file writes it.
func (c CausalScope) String() string {
	switch c {
	case CausalSession:
		return "SESSION"
	case CausalUser:
		return "USER"
	case CausalOff:
		return "OFF"
	}
	return "unknown"
}

// ReadwriteGroup returns the group named name, or nil when name is a
// plain data source (or unknown).
func (r *Rules) ReadwriteGroup(name string) *ReadwriteGroup {
	for i := range r.ReadwriteGroups {
		if r.ReadwriteGroups[i].Name == name {
			return &r.ReadwriteGroups[i]
		}
	}
	return nil
}

func (g *ReadwriteGroup) replicaNames() []string {
	names := make([]string, len(g.Replicas))
	for i, rp := range g.Replicas {
		names[i] = rp.Name
	}
	return names
}
