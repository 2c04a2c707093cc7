// Command relay is the benchmark's floor for any proxy: it accepts TCP
// connections and copies bytes to and from one MySQL server without
// looking at them. bench/sysbench.sh measures sysbench through it next to
// direct MariaDB and shardflake, so the table shows how much of the
// proxy's overhead is the extra network hop itself (two more socket writes
// and reads per statement, and the wake-ups between processes) and how
// much is the proxy's own work.
//
// Usage: relay -listen 127.0.0.1:PORT -to 127.0.0.1:PORT
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to accept clients on")
	to := flag.String("to", "", "address of the MySQL server")
	flag.Parse()
	if *to == "" {
		fmt.Fprintln(os.Stderr, "relay: -to is required")
		os.Exit(2)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	for {
		c, err := l.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, "relay:", err)
			os.Exit(1)
		}
		go relay(c, *to)
	}
}

// relay copies between the client and a new server connection until
// either side closes.
func relay(client net.Conn, to string) {
	defer client.Close()
	server, err := net.Dial("tcp", to)
	if err != nil {
		slog.Warn("relay: cannot reach the server", "err", err)
		return
	}
	defer server.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		copyAndClose(server, client)
	}()
	copyAndClose(client, server)
	<-done
}

// copyAndClose copies src to dst, then closes dst so the other direction
// ends too.
func copyAndClose(dst, src net.Conn) {
	if _, err := io.Copy(dst, src); err != nil && !errors.Is(err, net.ErrClosed) {
		slog.Debug("relay: copy ended", "err", err)
	}
	dst.Close()
}
