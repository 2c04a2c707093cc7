// Package proxy is the MySQL server side of shardflake.
//
// A Server accepts client connections (server.go: accept loop, connection
// limit, handshake deadline, KILL, shutdown); go-mysql's server package runs
// the handshake and authentication (auth.go), then a Session per connection
// reads commands itself (session.go) and writes responses through
// internal/wire, the only code that knows packet layouts besides go-mysql.
//
// One statement's path:
//
//	Session.handleQuery / stmtExecute        query.go, stmt.go
//	Session.runStatement, the one door       door.go: classify, plan, admit,
//	                                         execute, observe
//	  classify: who answers (planKind)       classify.go; a text query of a
//	                                         known shape: literals become ?
//	                                         (internal/sqlarg.Normalize), the
//	                                         shape's cached plan is bound;
//	                                         admin statements (admin*.go)
//	  local and session answers              answer.go, vars.go (SET), txn.go,
//	                                         show.go, local.go, infoschema.go
//	  everything else: Planner.Prepare+Bind  planner.go (the router), plancache.go
//	  admit                                  traffic.go (proxy/traffic)
//	  runPlanAndWrite                        executor.go: routes in parallel
//	                                         lanes on pooled backend connections
//	                                         (pool.go, backend.go); a client's
//	                                         COM_STMT_EXECUTE runs as backend
//	                                         prepared statements (backendstmt.go);
//	                                         a write over several routes all or
//	                                         nothing (stmtatomic.go), its LIMIT
//	                                         spent route after route (rowlimit.go),
//	                                         an INSERT ... SELECT read first
//	                                         (insertselect.go);
//	                                         connections
//	                                         that hold session state pinned (pin.go);
//	                                         a SELECT's routes on one data source
//	                                         joined with UNION ALL (union.go);
//	                                         a plain read of a read/write group
//	                                         on a replica (readwrite*.go)
//	  one route: its RowStream               streamed, packets forwarded as is
//	                                         (text or binary rows)
//	  several:   Merger.Merge(streams)       package merge (ResultMerger by
//	                                         default; values compared by
//	                                         internal/sqlvalue); the rows
//	                                         travel as package rows' Streams
//	  writeOK / writeRows / writeErr         results.go, okinfo.go; errors.go is
//	                                         the one error-to-MySQL boundary,
//	                                         errmap.go names logical tables in
//	                                         backend messages
//	  observe                                Observer: metrics*.go, slowlog.go
//
// COM_STMT_PREPARE announces the result columns (stmtmeta.go); names of
// transaction variables follow the data sources (compat.go).
//
// Extension points: a Merger (Config.Merger; package merge) combines the
// RowStreams of a multi-route SELECT; an Observer (Config.Observer; package
// metrics, whose Metrics is the Prometheus one) is told about client
// connections, statements, routes, errors and panics, and Server.PoolStats
// gives pool gauges, for metrics.
//
// Sub-packages, each with a doc.go: rows (the Row and RowStream that
// travel between the executor, the merge and the client), merge, metrics,
// keygen (the rules' key generators), traffic (limits); internal/ holds
// wire (packet layouts), sqlarg, sqlvalue and loadfile. They import
// neither this package nor each other (rows and internal/ aside);
// imports_test.go at the top checks it.
//
// A Session is used by its own goroutine (a statement's routes run on
// goroutines of their own, joined before the statement ends); the Server,
// its pools and the plan cache are safe for concurrent use.
package proxy
