// Package rows is the one shape a result's rows travel in between the
// executor, the merge and the code that writes them to the client: a Stream
// of Rows in the text protocol's form, pulled one at a time.
//
// It is the leaf of the proxy's packages: everything that produces or
// consumes rows (proxy/merge, the executor in package proxy, local answers
// such as SHOW) imports it.
//
// Imports (of this module): none. Besides, go-mysql's Field type.
//
// A Stream is used by one goroutine at a time; a Row is valid until the
// next call on the stream that returned it (Clone keeps one longer).
package rows
