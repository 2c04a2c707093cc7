// Package traffic is the proxy's admit stage: rate and concurrency limits
// on statements, per user, logical table, statement kind, fingerprint
// digest and data source (server.traffic in the rules file).
//
// A Set holds the rules of one rules snapshot. The session describes a
// planned statement (Statement: user, kind, tables, routes, SQL) and asks
// the Set to admit it before anything is sent to a data source; a
// statement costs one permit per route it sends. Each rule has one
// Limiter, an algorithm in a file of its own: token bucket, leaky bucket,
// sliding window, fixed window and concurrency. Time comes from a Clock, so tests drive it by hand.
//
// A Set and its rules are safe for concurrent use by every session; a
// rule may be altered or disabled at run time (ALTER, DISABLE TRAFFIC
// RULE), which swaps its limiter without touching statements in flight.
package traffic
