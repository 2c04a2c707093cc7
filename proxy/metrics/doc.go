// Package metrics is the observe stage of the statement pipeline: what
// the proxy reports about its work (the Observer interface and its
// events) and the Prometheus Observer that counts it (Metrics) with the
// slow-statement log.
//
//	observer.go  Observer, StatementEvent, RouteEvent: the seam
//	metrics.go   Metrics: counters, histograms, data-node hits, Attach
//	slowlog.go   one record per slow statement, SQL as its Fingerprint
//	reload.go    rules reloads (shardflake_rules_info, reloads counted)
//
// Events are data: the proxy fills in what its errors mean (a route that
// got no connection, a cancelled statement), so this package knows no
// error type of the proxy's. The collectors that read a running server at
// scrape time (pools, key generators, replicas, traffic limits, XA) live
// beside what they read in package proxy and are added with Attach.
//
// Imports (of this module): config, router. The rules give the labels
// (data sources, tables and their data nodes), router the statement kinds
// and route types; besides, go-mysql's error numbers, client_golang and
// TiDB's digester; never package proxy or its other sub-packages.
//
// Metrics is safe for concurrent use: every Observer method is called on
// the statements' own goroutines.
package metrics
