// Package keygen builds the key generators a rules file names (its
// keyGenerators: SNOWFLAKE, UUID, UUIDv7, SEGMENT, TICKET) over what they
// stand on: a segment table or ticket servers reached with go-sql-driver
// (a Snowflake's etcd lease is idgen's own), and the floor a generator
// must start above (MAX of the key column over the tables it serves).
//
//	keygen.go   Open (one builder per type), Tables, TableMax,
//	            ClassMax (a ticket server's guard), OpenDataSource
//	segment.go  the SEGMENT generator's table (idgen.SegmentStore)
//	ticket.go   TICKET's ticket servers (idgen.TicketServer)
//
// The generators themselves live in idgen; this package only wires them
// to the rules, so the router gets them as a map by name (router.New) and
// the proxy's admin statements (SHOW/ALTER of key generators, the key
// floor) and XA recovery reuse Tables, TableMax and OpenDataSource. It is
// the plan stage's helper: it runs before the proxy listens and when the
// rules are reloaded.
//
// Imports (of this module): config, idgen. Besides, go-sql-driver; never
// package proxy or its other sub-packages.
//
// Open is called once per rules snapshot; the generators it returns are
// safe for concurrent use.
package keygen
