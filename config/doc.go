// Package config owns the rules file: its format (ShardingSphere's
// config-sharding.yaml shape plus shardflake's server: section), its
// strict decoding (unknown keys are errors with line numbers), its
// validation (every row reaches exactly one data node, checked by sampling)
// and the check command's simulation. The result is Rules, an immutable
// snapshot: the logical tables and their data nodes, broadcast tables and
// binding groups, data sources, key generator settings, readwrite groups
// with their load balancers, and the proxy process's own settings (Server:
// listen addresses, TLS, users and privileges, limits, transaction mode,
// traffic rules).
//
// Where it sits: the proxy loads a file with Load or Parse and hands Rules
// to router.New, which plans against it; cmd reads the server settings.
// config may import algorithm (it builds each shardingAlgorithms entry with
// algorithm.New and each strategy with Strategy.WithTargets) and idgen (to
// check a key generator's props with the generator's own check), nothing
// else of ours: never the router or the proxy. A setting the proxy needs
// is added here, in the file of its section (server*.go, config_traffic.go,
// config_readwrite.go, ...), with its decoding and its validation.
//
// Load balancers (loadbalancer*.go) live here rather than in algorithm:
// they pick among a readwrite group's replicas, not data nodes, and have
// their own one-line registry (loadBalancerTypes).
//
// Everything Load returns is immutable and safe for concurrent use; a
// reload builds a new Rules.
package config
