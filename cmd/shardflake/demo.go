//go:build demo

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/memory"
	gmsserver "github.com/dolthub/go-mysql-server/server"
	gmssql "github.com/dolthub/go-mysql-server/sql"
	"github.com/go-mysql-org/go-mysql/client"
	"github.com/sirupsen/logrus"

	"github.com/shardflake/shardflake/config"
)

// demoBuilt says this binary has the demo: it is built with -tags demo
// (make demo), because the embedded backends (go-mysql-server) cost every
// process that links them ~28 MB of resident memory and ~0.8 s at start-up
// (go-icu-regex compiles its WebAssembly module in an init function),
// proxy or not. See demo_off.go.
const demoBuilt = true

// demoTables are created through the proxy when the rules name them, so
// the demo has something to query: the DDL goes to every data node.
var demoTables = []struct {
	name string
	ddl  string
}{
	{"t_order", "CREATE TABLE t_order (order_id BIGINT NOT NULL, user_id INT NOT NULL, status VARCHAR(32) NOT NULL, PRIMARY KEY (order_id))"},
	{"t_order_item", "CREATE TABLE t_order_item (item_id BIGINT NOT NULL, order_id BIGINT NOT NULL, user_id INT NOT NULL, product VARCHAR(64) NOT NULL, quantity INT NOT NULL, PRIMARY KEY (item_id))"},
	{"t_dict", "CREATE TABLE t_dict (code VARCHAR(32) NOT NULL, label VARCHAR(64) NOT NULL, PRIMARY KEY (code))"},
}

// runDemo serves a rules file (rules.example.yaml) over in-memory
// MySQL-compatible backends, one per data source, so the proxy can be
// tried on a machine without MySQL.
func runDemo(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configFile := fs.String("config", "rules.example.yaml", "rules file to serve")
	rf := addRunFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: shardflake demo [--config rules.example.yaml] [--listen ADDR] [flags]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Runs the proxy on a rules file over embedded in-memory backends")
		fmt.Fprintln(stderr, "(dolthub/go-mysql-server), one per data source on a free loopback port, with")
		fmt.Fprintln(stderr, "the data sources' databases created and the rules' host:port replaced by")
		fmt.Fprintln(stderr, "them. Creates the demo tables t_order, t_order_item and t_dict (those the")
		fmt.Fprintln(stderr, "rules name) with a few rows, then prints how to connect. Data is lost on")
		fmt.Fprintln(stderr, "exit. Ctrl-C stops it.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return flagExit(err)
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	rules, log, code := rf.setup("demo", *configFile, "Run it from the repository root (make demo), or pass --config FILE.", stderr)
	if rules == nil {
		return code
	}
	// An embedded backend runs one transaction at a time (serialBackend):
	// a write over several tables of one data source must be one backend
	// transaction there, not one per table, each waiting for the others.
	rules.Server.MaxConnectionsPerQuery = 1
	backends, err := startDemoBackends(rules, *rf.log.level == "debug")
	if err != nil {
		fmt.Fprintln(stderr, "shardflake demo:", err)
		return 1
	}
	defer func() {
		for _, b := range backends {
			b.Close()
		}
	}()
	ready := func(addr net.Addr) {
		go func() {
			if err := seedDemo(rules, addr.String()); err != nil {
				log.Error("creating the demo tables failed", "err", err)
				return
			}
			printDemoBanner(stdout, rules, *configFile, addr)
		}()
	}
	// The embedded backends are not safe for a statement that reads a
	// table while another connection writes it (go-mysql-server's memory
	// tables: the reader's commit puts back the table as it read it), so
	// the proxy's start-up check reads them before seedDemo writes.
	return serve(rules, serveOptions{log: log, drain: 5 * time.Second, ready: ready, metricsOptional: true, checkKeysBeforeReady: true})
}

// startDemoBackends starts one in-memory server per data source and points
// the rules' data sources at them.
func startDemoBackends(rules *config.Rules, verbose bool) ([]*gmsserver.Server, error) {
	// go-mysql-server logs through logrus's process-wide logger: a line for
	// every connection the proxy opens and a warning about
	// secure_file_priv, which buried the demo's banner. Its errors still
	// show; with --log-level debug everything does.
	if !verbose {
		logrus.SetLevel(logrus.ErrorLevel)
	}
	var servers []*gmsserver.Server
	for i := range rules.DataSources {
		ds := &rules.DataSources[i]
		db := memory.NewDatabase(ds.Database)
		db.BaseDatabase.EnablePrimaryKeyIndexes()
		// go-mysql-server's default collation is utf8mb4_0900_bin, but its
		// column definitions carry the character set's number (255) where
		// the collation's goes, which says utf8mb4_0900_ai_ci: a merge
		// trusting that found rows sorted 'Paid' before 'new' and refused
		// with 1235. With MySQL 8's default the columns are what they say.
		if err := db.BaseDatabase.SetCollation(gmssql.NewEmptyContext(), gmssql.Collation_utf8mb4_0900_ai_ci); err != nil {
			return nil, fmt.Errorf("data source %s: embedded backend: %w", ds.Name, err)
		}
		provider := memory.NewDBProvider(db)
		engine := sqle.NewDefault(provider)
		cfg := gmsserver.Config{Protocol: "tcp", Address: "127.0.0.1:0", Version: "8.0.33-go-mysql-server"}
		s, err := gmsserver.NewServerWithHandler(cfg, engine, gmssql.NewContext, memory.NewSessionBuilder(provider), nil, newSerialBackend)
		if err != nil {
			for _, prev := range servers {
				prev.Close()
			}
			return nil, fmt.Errorf("data source %s: embedded backend: %w", ds.Name, err)
		}
		go s.Start()
		servers = append(servers, s)
		addr := s.Listener.Addr().(*net.TCPAddr)
		ds.Host, ds.Port = "127.0.0.1", addr.Port
		ds.User, ds.Password = "root", ""
	}
	return servers, nil
}

// seedDemo creates the demo tables through the proxy and adds a few rows,
// with keys the proxy generates.
func seedDemo(rules *config.Rules, addr string) error {
	u := rules.Server.Users[0]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	c, err := client.ConnectWithDialer(ctx, "tcp", addr, u.Name, u.Password, rules.DatabaseName, dialer.DialContext)
	if err != nil {
		return fmt.Errorf("connect to the proxy: %w", err)
	}
	defer c.Close()
	has := func(name string) bool {
		if rules.Table(name) != nil || rules.IsBroadcast(name) {
			return true
		}
		return false
	}
	for _, t := range demoTables {
		if !has(t.name) {
			continue
		}
		if _, err := c.Execute(t.ddl); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
	}
	if has("t_dict") {
		if _, err := c.Execute("INSERT INTO t_dict (code, label) VALUES ('new', 'New order'), ('paid', 'Paid'), ('shipped', 'Shipped')"); err != nil {
			return fmt.Errorf("t_dict rows: %w", err)
		}
	}
	if !has("t_order") {
		return nil
	}
	statuses := []string{"new", "paid", "shipped", "new"}
	for user := 1; user <= 4; user++ {
		r, err := c.Execute("INSERT INTO t_order (user_id, status) VALUES (" + strconv.Itoa(user) + ", '" + statuses[user-1] + "')")
		if err != nil {
			return fmt.Errorf("t_order rows: %w", err)
		}
		if !has("t_order_item") {
			continue
		}
		orderID := r.InsertId
		for _, product := range []string{"keyboard", "mouse"} {
			q := fmt.Sprintf("INSERT INTO t_order_item (order_id, user_id, product, quantity) VALUES (%d, %d, '%s', %d)", orderID, user, product, user)
			if _, err := c.Execute(q); err != nil {
				return fmt.Errorf("t_order_item rows: %w", err)
			}
		}
	}
	return nil
}

func printDemoBanner(w io.Writer, rules *config.Rules, config string, addr net.Addr) {
	host, port, _ := net.SplitHostPort(addr.String())
	u := rules.Server.Users[0]
	var b strings.Builder
	fmt.Fprintf(&b, "shardflake demo: %s over %d in-memory backends\n", config, len(rules.DataSources))
	for _, ds := range rules.DataSources {
		fmt.Fprintf(&b, "  %-6s 127.0.0.1:%d  database %s\n", ds.Name, ds.Port, ds.Database)
	}
	fmt.Fprintf(&b, "\nConnect with:\n  mariadb -h%s -P%s -u%s -p%s %s\n", host, port, u.Name, u.Password, rules.DatabaseName)
	b.WriteString("\nTry:\n")
	b.WriteString("  SHOW TABLES;\n")
	b.WriteString("  SELECT * FROM t_order;\n")
	b.WriteString("  INSERT INTO t_order (user_id, status) VALUES (42, 'new');\n")
	b.WriteString("  SELECT LAST_INSERT_ID();\n")
	b.WriteString("  SELECT * FROM t_order WHERE user_id = 42;\n")
	b.WriteString("\nCtrl-C stops the demo (the data is in memory only).\n")
	fmt.Fprint(w, b.String())
}
