package proxy

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/internal/mariadbtest"
	"github.com/shardflake/shardflake/proxy/keygen"
	"github.com/shardflake/shardflake/router"
)

// testEnv is a proxy in front of MariaDB servers, serving on a loopback
// port for one test.
type testEnv struct {
	srv      *Server
	addr     string
	backends []*mariadbtest.Server
	rules    *config.Rules
	direct   map[int]*sql.DB
	t        *testing.T // the test the environment belongs to
}

// envOptions tune a test proxy.
type envOptions struct {
	server   string                // extra lines for the server: section
	rules    string                // replaces the rules: section
	backends []*mariadbtest.Server // default: the shared servers
	planner  func(*config.Rules) Planner
	hook     func(sql string)
	observer Observer
	logger   *slog.Logger // default: warnings to stderr (debug with SHARDFLAKE_TEST_LOG)
	// databases, when set, is the prefix of fresh databases (prefix_N,
	// dropped and created) the data sources use instead of the shared
	// ds_N, for tests that list every table a data source holds.
	databases string
	// rulesFile, when set, is the rules (loaded from a file) in place of
	// the ones server and rules make.
	rulesFile *config.Rules
	// pooled keeps multiplexing off under SHARDFLAKE_TEST_MULTIPLEX, for
	// a test of how statements run on pooled connections.
	pooled bool
}

// rulesYAML is the test rules file: two data sources, t_order sharded by
// user_id over them and by order_id over two tables each, t_dict
// broadcast.
func rulesYAML(backends []*mariadbtest.Server, server, rules string) string {
	return rulesYAMLOn(backends, server, rules, "ds")
}

// rulesYAMLOn is rulesYAML with data source ds_N on database prefix_N.
func rulesYAMLOn(backends []*mariadbtest.Server, server, rules, prefix string) string {
	var ds strings.Builder
	for i, b := range backends {
		fmt.Fprintf(&ds, "  ds_%d: { url: \"jdbc:mysql://%s/%s_%d\", username: root, password: \"\", maxPoolSize: 20 }\n", i, b.Addr(), prefix, i)
	}
	if rules == "" {
		rules = defaultTestRules
	}
	users := "  users:\n    - { user: app, password: app-secret, hints: true }\n    - { user: other, password: other-secret }\n"
	if ownUsers.MatchString(server) {
		users = "" // the test's own, in server
	}
	return fmt.Sprintf(`databaseName: sharding_db
server:
  listen: 127.0.0.1:0
  metricsListen: 127.0.0.1:1
%s%s
dataSources:
%s
rules:
%s`, users, indent(server), ds.String(), rules)
}

// ownUsers finds a users: key of the server: section in a test's extra
// lines (not a traffic rule's match: {users: [...]}).
var ownUsers = regexp.MustCompile(`(?m)^\s*users:`)

const defaultTestRules = `  - !SHARDING
    tables:
      t_order:
        actualDataNodes: ds_${0..1}.t_order_${0..1}
        databaseStrategy:
          standard: { shardingColumn: user_id, shardingAlgorithmName: db_inline }
        tableStrategy:
          standard: { shardingColumn: order_id, shardingAlgorithmName: order_inline }
        keyGenerateStrategy: { column: order_id, keyGeneratorName: snowflake }
    shardingAlgorithms:
      db_inline:    { type: INLINE, props: { algorithm-expression: "ds_${user_id % 2}" } }
      order_inline: { type: INLINE, props: { algorithm-expression: "t_order_${order_id % 2}" } }
    keyGenerators:
      snowflake: { type: SNOWFLAKE, props: { worker-id: 1 } }
  - !BROADCAST
    tables: [t_dict]
`

func indent(s string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l != "" {
			out = append(out, "  "+strings.TrimSpace(l))
		}
	}
	return strings.Join(out, "\n")
}

func startEnv(t *testing.T, opts envOptions) *testEnv {
	t.Helper()
	backends := opts.backends
	if backends == nil {
		backends = sharedServers(t)
	}
	prefix := "ds"
	if opts.databases != "" {
		prefix = opts.databases
		for i, b := range backends {
			db := fmt.Sprintf("%s_%d", prefix, i)
			b.Exec(t, "", "DROP DATABASE IF EXISTS "+db, "CREATE DATABASE "+db)
		}
	}
	rules, err := config.Parse([]byte(rulesYAMLOn(backends, opts.server, opts.rules, prefix)), "test-rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if opts.rulesFile != nil {
		rules = opts.rulesFile
	}
	if multiplexFromEnv() && !opts.pooled {
		// The whole suite runs with multiplexing on (CI runs it so too).
		rules.Server.Multiplex = true
	}
	var planner Planner
	if opts.planner != nil {
		planner = opts.planner(rules)
	}
	keys, closeKeys, err := keygen.Open(context.Background(), rules)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeKeys() })
	level := slog.LevelWarn
	if os.Getenv("SHARDFLAKE_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	logger := opts.logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	}
	srv, err := New(Config{Rules: rules, Keys: keys, Planner: planner, Observer: opts.observer, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	srv.beforeStatement = opts.hook
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; err != ErrServerClosed {
			t.Errorf("Serve: %v", err)
		}
	})
	return &testEnv{srv: srv, addr: l.Addr().String(), backends: backends, rules: rules, direct: map[int]*sql.DB{}, t: t}
}

// dsn returns a go-sql-driver DSN for the proxy.
func (e *testEnv) dsn(user, password string, params ...string) string {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = user, password
	cfg.Net, cfg.Addr, cfg.DBName = "tcp", e.addr, "sharding_db"
	cfg.Timeout = 5 * time.Second
	s := cfg.FormatDSN()
	for _, p := range params {
		if strings.Contains(s, "?") {
			s += "&" + p
		} else {
			s += "?" + p
		}
	}
	return s
}

// open connects to the proxy as app.
func (e *testEnv) open(t *testing.T, params ...string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", e.dsn("app", "app-secret", params...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// conn returns one dedicated connection to the proxy.
func (e *testEnv) conn(t *testing.T, params ...string) *sql.Conn {
	t.Helper()
	c, err := e.open(t, params...).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// backend returns a pool for database ds_i on backend i, directly.
func (e *testEnv) backend(t *testing.T, i int) *sql.DB {
	t.Helper()
	if db, ok := e.direct[i]; ok {
		return db
	}
	// Opened for the environment's test: subtests share it.
	name := fmt.Sprintf("ds_%d", i)
	if e.rules != nil {
		for _, ds := range e.rules.DataSources {
			if ds.Name == name {
				name = ds.Database // ds_N, or the fresh databases' name
			}
		}
	}
	db := e.backends[i].Open(e.t, name)
	e.direct[i] = db
	return db
}

// errCode returns the MySQL error number of err, 0 if it has none.
func errCode(err error) uint16 {
	var me *mysql.MySQLError
	if ok := asMySQL(err, &me); ok {
		return me.Number
	}
	return 0
}

func asMySQL(err error, me **mysql.MySQLError) bool {
	for err != nil {
		if m, ok := err.(*mysql.MySQLError); ok {
			*me = m
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// directPlanner sends every statement unchanged to one data source; it
// stands in for the router in tests of the server itself.
type directPlanner struct{ ds string }

func (p directPlanner) Prepare(stmt ast.StmtNode, sql, db string, _ router.PrepareOptions) (PreparedPlan, error) {
	kind := router.KindOther
	switch stmt.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		kind = router.KindSelect
	case *ast.InsertStmt:
		kind = router.KindInsert
	case *ast.UpdateStmt:
		kind = router.KindUpdate
	case *ast.DeleteStmt:
		kind = router.KindDelete
	case ast.DDLNode:
		kind = router.KindDDL
	}
	return directPlan{ds: p.ds, sql: sql, kind: kind}, nil
}

type directPlan struct {
	ds, sql string
	kind    router.StatementKind
}

func (d directPlan) Kind() router.StatementKind { return d.kind }

func (d directPlan) Bind(args []any) (*router.Plan, error) {
	return &router.Plan{Kind: d.kind, Type: router.RouteSingle, Routes: []router.Route{{DataSource: d.ds, SQL: d.sql, Args: args}}}, nil
}

// toDefault is a planner that sends everything to the default data source.
func toDefault(r *config.Rules) Planner { return directPlanner{ds: r.DefaultDataSource} }

// requireCommand returns the path of command after checking that it runs
// check (its arguments) with success, skipping (or failing under CI=true)
// when it does not; what names what the test needs and where
// scripts/install-deps.sh gets it.
func requireCommand(t *testing.T, command, what string, check ...string) string {
	t.Helper()
	path, err := exec.LookPath(command)
	if err == nil {
		var out []byte
		if out, err = exec.Command(path, check...).CombinedOutput(); err != nil {
			err = fmt.Errorf("%v: %s", err, out)
		}
	}
	if err != nil {
		mariadbtest.Require(t, fmt.Errorf("%s: %v", what, err))
	}
	return path
}

// refDatabase creates database name afresh on server s, for the
// reference side of an application test (the same program directly on
// MariaDB), and drops it when the test ends.
func refDatabase(t *testing.T, s *mariadbtest.Server, name string) {
	t.Helper()
	s.Exec(t, "", "DROP DATABASE IF EXISTS "+name, "CREATE DATABASE "+name)
	t.Cleanup(func() { s.Exec(t, "", "DROP DATABASE IF EXISTS "+name) })
}
