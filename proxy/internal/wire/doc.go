// Package wire reads and writes MySQL protocol packets for the proxy.
//
// go-mysql performs the handshakes (server side for clients, client side for
// backends); after that the proxy talks to both ends through a Conn from this
// package, so a single route's result can be forwarded packet by packet
// without decoding, and every response is written through one buffered
// writer and flushed once. The encoders and decoders here know packet layouts
// only: no SQL, no routing, no sessions.
//
// A Conn is used by one goroutine at a time, except Watch, which reads on a
// goroutine of its own while the owner is busy elsewhere (see Conn.Watch).
package wire
