package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
)

// memoryOf reads VmRSS and VmHWM (peak) of process pid, in bytes.
func memoryOf(t *testing.T, pid int) (rss, peak int64) {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		n, _ := strconv.ParseInt(fields[0], 10, 64)
		switch k {
		case "VmRSS":
			rss = n << 10
		case "VmHWM":
			peak = n << 10
		}
	}
	return rss, peak
}

// TestMemoryUnderAnnouncedPackets runs the built proxy and holds 1,000
// connections that announce a 16 MB handshake packet (a 7-byte header
// made 100 connections take 1.6 GB before), 1,000 more that announce
// one just under the handshake cap and send half of it, then 200 logged-
// in sessions that each announce a 16 MB command and send 2 MB of it,
// more than server.packetMemoryBytes holds for all. The proxy's resident
// memory, and its peak, must stay under 150 MB.
func TestMemoryUnderAnnouncedPackets(t *testing.T) {
	addr, metrics := freeAddr(t), freeAddr(t)
	rules := fmt.Sprintf(`databaseName: sharding_db
server:
  listen: %s
  metricsListen: %s
  users: [{ user: app, password: secret }]
  packetMemoryBytes: 16MiB
dataSources:
  ds_0: { url: "mysql://127.0.0.1:1/ds_0", username: root, password: "" }
rules: []
`, addr, metrics)
	file := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(file, []byte(rules), 0o600); err != nil {
		t.Fatal(err)
	}
	p := start(t, ".", "serve", "--config", file)
	waitListening(t, p, addr)
	pid := p.cmd.Process.Pid
	base, _ := memoryOf(t, pid)
	t.Logf("proxy RSS at start: %.1f MB", float64(base)/1e6)

	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	greeted := func() net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		var hdr [4]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			t.Fatalf("greeting: %v", err)
		}
		if _, err := io.CopyN(io.Discard, c, int64(hdr[0])|int64(hdr[1])<<8|int64(hdr[2])<<16); err != nil {
			t.Fatalf("greeting: %v", err)
		}
		return c
	}
	report := func(what string) {
		t.Helper()
		rss, peak := memoryOf(t, pid)
		t.Logf("%s: RSS %.1f MB, peak %.1f MB", what, float64(rss)/1e6, float64(peak)/1e6)
		if rss > 150e6 || peak > 150e6 {
			t.Errorf("%s: RSS %.1f MB, peak %.1f MB; want both under 150 MB", what, float64(rss)/1e6, float64(peak)/1e6)
		}
	}

	for range 1000 {
		c := greeted()
		c.Write([]byte{0xff, 0xff, 0xff, 1, 0x85, 0xa6, 0xff})
	}
	report("1,000 handshakes announcing 16 MB")
	// Just under the cap of a handshake packet, half of it sent.
	for range 1000 {
		c := greeted()
		c.Write(append([]byte{0x00, 0x3f, 0x00, 1}, make([]byte, 8<<10)...))
	}
	report("1,000 handshakes announcing 16 KB, 8 KB sent")

	chunk := make([]byte, 2<<20)
	var sessions []net.Conn
	for i := range 200 {
		gc, err := client.Connect(addr, "app", "secret", "sharding_db")
		if err != nil {
			t.Fatalf("login %d: %v", i, err)
		}
		defer gc.Close()
		nc := gc.Conn.Conn
		sessions = append(sessions, nc)
		// A COM_QUERY announced as 16 MB - 1 and more: 2 MB of it.
		nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
		nc.Write(append([]byte{0xff, 0xff, 0xff, 0, 0x03}, chunk...))
	}
	report("200 sessions each sending 2 MB of a 16 MB command")
	// Those the budget had no room for got 1037 (Out of memory); the
	// others wait for the rest of their command.
	answers := make(chan string, len(sessions))
	for _, nc := range sessions {
		go func() {
			nc.SetReadDeadline(time.Now().Add(3 * time.Second))
			var hdr [4]byte
			if _, err := io.ReadFull(nc, hdr[:]); err != nil {
				answers <- "none"
				return
			}
			p := make([]byte, int(hdr[0])|int(hdr[1])<<8|int(hdr[2])<<16)
			io.ReadFull(nc, p)
			if len(p) > 3 && p[0] == 0xff {
				answers <- strconv.Itoa(int(p[1]) | int(p[2])<<8)
				return
			}
			answers <- fmt.Sprintf("%q", p)
		}()
	}
	got := map[string]int{}
	for range sessions {
		got[<-answers]++
	}
	t.Logf("answers: %v", got)
	if got["1037"] < 150 || got["1037"]+got["none"] != len(sessions) {
		t.Errorf("answers %v: want 1037 for all but the few the 16 MiB budget holds", got)
	}
}
