package proxy

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/shardflake/shardflake/algorithm"
	"github.com/shardflake/shardflake/config"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/router"
)

// NoShardingRuleError: an admin statement named a table that has no
// sharding rule in the rules file.
type NoShardingRuleError struct {
	Database, Table string
}

func (e *NoShardingRuleError) Error() string {
	return fmt.Sprintf("Table '%s.%s' has no sharding rule (SHOW SHARDING TABLE RULES lists the sharded tables)", e.Database, e.Table)
}

// runAdmin answers a recognised admin statement with a result set.
func (s *Session) runAdmin(ctx context.Context, st adminStmt, out output) error {
	if st.db != "" && st.db != s.srv.rules.DatabaseName {
		return &UnknownDatabaseError{Name: st.db}
	}
	if st.kind == adminComputeNodes {
		return s.runFleetAdmin(st)
	}
	if st.kind >= adminReload {
		return s.runReloadAdmin(st)
	}
	if st.kind >= adminTrafficRules {
		return s.runTrafficAdmin(st)
	}
	var (
		cols []*mysql.Field
		rows []Row
		err  error
	)
	switch st.kind {
	case adminPreview:
		cols, rows, err = s.preview(st.body)
	case adminTableRules, adminTableRule:
		cols, rows, err = s.srv.tableRules(st.table)
	case adminTableNodes:
		cols, rows, err = s.srv.tableNodes(st.table)
	case adminAlgorithms:
		cols, rows = s.srv.algorithms()
	case adminKeyGenerators:
		cols, rows = s.srv.keyGenerators()
	case adminBroadcastRules:
		cols, rows = s.srv.broadcastRules()
	case adminStorageUnits:
		cols, rows = s.srv.storageUnits()
	case adminBindingOrphans:
		cols, rows, err = s.bindingOrphans(ctx)
	case adminAdoptKeys:
		// It writes the generator's stored maximum (every proxy's
		// next block starts above it): an operator's statement, as
		// RELOAD RULES is.
		if !s.privileges().RulesAdmin {
			return privilegeNeeded("RULES ADMIN (server.users rulesAdmin: true)")
		}
		cols, rows, err = s.srv.adoptKeys(st.table)
	case adminReadwriteRules:
		cols, rows = s.srv.readwriteRules()
	case adminReadwriteStatus:
		cols, rows = s.srv.readwriteStatus()
	case adminXATransactions:
		cols, rows, err = s.srv.xaTransactions(ctx)
	default:
		err = &InternalError{Msg: "admin statement " + st.kind.String()}
	}
	if err != nil {
		return err
	}
	return s.writeRows(newMemStream(cols, rows), out)
}

func stringColumns(names ...string) []*mysql.Field {
	cols := make([]*mysql.Field, len(names))
	for i, n := range names {
		cols[i] = stringColumn(n)
	}
	return cols
}

// preview plans one statement as it would run, without running it: one
// row per route with its data source and SQL (ShardingSphere's PREVIEW).
// An INSERT without its key gets keys from the generator, as it would,
// and shows them in the SQL.
func (s *Session) preview(body string) ([]*mysql.Field, []Row, error) {
	stmts, err := s.parse(body)
	if err != nil {
		return nil, nil, &ParseError{Err: err}
	}
	if len(stmts) != 1 {
		return nil, nil, &ParseError{Err: fmt.Errorf("PREVIEW takes one statement, got %d", len(stmts))}
	}
	stmt := stmts[0]
	sql := strings.TrimSpace(stmt.Text())
	if sql == "" {
		sql = strings.TrimSuffix(body, ";")
	}
	plan, err := s.previewPlan(stmt, sql)
	if err != nil {
		return nil, nil, err
	}
	rows := make([]Row, len(plan.Routes))
	for i, r := range plan.Routes {
		rows[i] = rowOf(r.DataSource, r.SQL)
	}
	cols, rows := s.withTrafficRules(stringColumns("data_source_name", "actual_sql"), rows, plan, sql)
	return cols, rows, nil
}

// previewPlan mirrors the door's choice of who answers a statement
// (classify.go, routedPlan): the default data source for statements
// without tables, the router for the rest; statements the proxy answers
// itself have no routes to show.
func (s *Session) previewPlan(stmt ast.StmtNode, sql string) (*router.Plan, error) {
	onDefault := &router.Plan{Kind: router.KindOther, Type: router.RouteSingle, Routes: []router.Route{{DataSource: s.srv.rules.DefaultDataSource, SQL: sql}}}
	if sel, ok := stmt.(*ast.SelectStmt); ok {
		if sel.From == nil && !hasTable(sel) {
			return onDefault, nil
		}
		if schemaOf(sel) == infoSchema {
			return nil, errPreviewProxy
		}
	}
	toDefault := defaultable(stmt)
	pp, err := s.srv.planner.Prepare(stmt, sql, s.db, s.prepareOptions())
	if err != nil {
		return nil, err
	}
	if pc, ok := pp.(interface{ ParamCount() int }); ok && pc.ParamCount() > 0 {
		return nil, &NotSupportedError{What: "PREVIEW of a statement with ? placeholders (write the values in)"}
	}
	if pp.Kind() == router.KindOther {
		if !toDefault {
			return nil, errPreviewProxy
		}
		return onDefault, nil
	}
	return pp.Bind(nil)
}

var errPreviewProxy = &NotSupportedError{What: "PREVIEW of statements the proxy answers without routing them (SET, USE, transactions, SHOW TABLES, information_schema)"}

// tableRules is SHOW SHARDING TABLE RULES (table == "") and SHOW SHARDING
// TABLE RULE table, with ShardingSphere's columns.
func (srv sessionServer) tableRules(table string) ([]*mysql.Field, []Row, error) {
	tables, err := srv.shardedTables(table)
	if err != nil {
		return nil, nil, err
	}
	cols := stringColumns("table", "actual_data_nodes", "actual_data_sources",
		"database_strategy_type", "database_sharding_column", "database_sharding_algorithm_type", "database_sharding_algorithm_props",
		"table_strategy_type", "table_sharding_column", "table_sharding_algorithm_type", "table_sharding_algorithm_props",
		"key_generate_column", "key_generator_type", "key_generator_props")
	var rows []Row
	for _, t := range tables {
		row := []any{t.Name, nodeList(t.DataNodes), strings.Join(t.DataSources(), ",")}
		row = append(row, strategyCells(t.DatabaseStrategy)...)
		row = append(row, strategyCells(t.TableStrategy)...)
		if t.KeyGenerator == "" {
			row = append(row, nil, nil, nil)
		} else {
			kg := srv.rules.KeyGenerators[t.KeyGenerator]
			row = append(row, t.KeyColumn, kg.Type, propList(kg.Props))
		}
		rows = append(rows, rowOf(row...))
	}
	return cols, rows, nil
}

// strategyCells are a strategy's type, columns, algorithm type and props;
// a table without the strategy has type none and NULLs.
func strategyCells(st *algorithm.Strategy) []any {
	if st == nil {
		return []any{"none", nil, nil, nil}
	}
	cells := []any{st.Kind.String(), strings.Join(st.Columns, ","), nil, nil}
	if st.Algorithm != nil {
		cells[2], cells[3] = st.Algorithm.Type(), propList(st.Algorithm.Props())
	}
	return cells
}

// tableNodes is SHOW SHARDING TABLE NODES [table]: each sharded table's
// data nodes.
func (srv sessionServer) tableNodes(table string) ([]*mysql.Field, []Row, error) {
	tables, err := srv.shardedTables(table)
	if err != nil {
		return nil, nil, err
	}
	rows := make([]Row, len(tables))
	for i, t := range tables {
		rows[i] = rowOf(t.Name, nodeList(t.DataNodes))
	}
	return stringColumns("name", "nodes"), rows, nil
}

// shardedTables returns the rule of table, or every rule by name when
// table is "".
func (srv sessionServer) shardedTables(table string) ([]*config.TableRule, error) {
	rules := srv.rules
	if table != "" {
		t := rules.Table(table)
		if t == nil {
			return nil, &NoShardingRuleError{Database: rules.DatabaseName, Table: table}
		}
		return []*config.TableRule{t}, nil
	}
	out := make([]*config.TableRule, 0, len(rules.Tables))
	for _, t := range rules.Tables {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// algorithms is SHOW SHARDING ALGORITHMS: name, type, props.
func (srv sessionServer) algorithms() ([]*mysql.Field, []Row) {
	names := slices.Sorted(maps.Keys(srv.rules.Algorithms))
	rows := make([]Row, len(names))
	for i, name := range names {
		a := srv.rules.Algorithms[name]
		rows[i] = rowOf(name, a.Type(), propList(a.Props()))
	}
	return stringColumns("name", "type", "props"), rows
}

// broadcastRules is SHOW BROADCAST TABLE RULES.
func (srv sessionServer) broadcastRules() ([]*mysql.Field, []Row) {
	tables := append([]string(nil), srv.rules.BroadcastTables...)
	sort.Strings(tables)
	rows := make([]Row, len(tables))
	for i, t := range tables {
		rows[i] = rowOf(t)
	}
	return stringColumns("broadcast_table"), rows
}

// keyGenerators is SHOW SHARDING KEY GENERATORS: ShardingSphere's name,
// type and props, then the generator's live state. A generator without
// state reports NULLs.
func (srv sessionServer) keyGenerators() ([]*mysql.Field, []Row) {
	cols := stringColumns("name", "type", "props")
	cols = append(cols, intColumn("datacenter_id"), intColumn("worker_id"), stringColumn("worker_id_source"), stringColumn("lease_state"),
		stringColumn("high_water_mark"), intColumn("lead_ms"), intColumn("max_lead_ms"),
		uintColumn("generated"), uintColumn("clock_back_steps"), intColumn("waited_ms"), intColumn("last_id"), stringColumn("state"))
	names := slices.Sorted(maps.Keys(srv.rules.KeyGenerators))
	rows := make([]Row, len(names))
	for i, name := range names {
		kg := srv.rules.KeyGenerators[name]
		row := []any{name, kg.Type, propList(kg.Props)}
		g, ok := srv.keys[name].(statser)
		if !ok {
			rows[i] = rowOf(append(row, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, keygenStateText(srv.keys[name]))...)
			continue
		}
		st := g.Stats()
		var hw any
		if !st.HighWater.IsZero() {
			hw = st.HighWater.UTC().Format("2006-01-02T15:04:05.000Z")
		}
		var last any
		if st.LastID != 0 {
			last = st.LastID
		}
		row = append(row, st.DatacenterID, st.WorkerID, st.Source.String(), st.LeaseState.String(),
			hw, st.Lead.Milliseconds(), st.MaxLead.Milliseconds(),
			st.Generated, st.ClockBackSteps, st.Waited.Milliseconds(), last, nil)
		rows[i] = rowOf(row...)
	}
	return cols, rows
}

// storageUnits is SHOW STORAGE UNITS: ShardingSphere's columns with the
// pool settings in effect, then health (a fresh login, as /readyz does)
// and the pool's connections.
func (srv sessionServer) storageUnits() ([]*mysql.Field, []Row) {
	cols := stringColumns("name", "type", "host")
	cols = append(cols, intColumn("port"), stringColumn("db"),
		intColumn("connection_timeout_milliseconds"), intColumn("idle_timeout_milliseconds"), intColumn("max_lifetime_milliseconds"),
		intColumn("max_pool_size"), intColumn("min_pool_size"), stringColumn("read_only"), stringColumn("other_attributes"),
		stringColumn("health"), stringColumn("health_detail"),
		intColumn("open_connections"), intColumn("in_use_connections"), intColumn("idle_connections"), intColumn("waiting_connections"),
		stringColumn("tls_mode"), stringColumn("tls"))
	health := srv.probeDataSources(context.Background())
	stats := map[string]PoolStats{}
	for _, st := range srv.PoolStats() {
		if _, ok := stats[st.DataSource]; !ok {
			stats[st.DataSource] = st
		}
	}
	rows := make([]Row, len(srv.rules.DataSources))
	for i, ds := range srv.rules.DataSources {
		p := srv.pools[ds.Name]
		h := health[i]
		state, detail := "up", any(nil)
		if !h.Up {
			state, detail = "down", h.Error
		}
		rows[i] = storageUnitRow(srv.rw.unitName(ds.Name), p, stats[ds.Name], "false", state, detail)
	}
	return cols, append(rows, srv.rw.replicaUnits()...)
}

// storageUnitRow is one row of SHOW STORAGE UNITS: a data source's, or a
// replica's (readOnly "true").
func storageUnitRow(name string, p *pool, st PoolStats, readOnly, state string, detail any) Row {
	ds := p.ds
	return rowOf(name, "MySQL", ds.Host, ds.Port, ds.Database,
		ms(p.connectTimeout), ms(p.idleTimeout), ms(p.maxLifetime), p.max, p.minIdle, readOnly, attributes(ds.Params),
		state, detail, st.Open, st.InUse, st.Idle, st.Waiting, p.tlsMode(), p.lastTLS())
}

func ms(d time.Duration) int64 { return d.Milliseconds() }

// attributes formats a data source's URL parameters as key=value pairs,
// NULL when there are none.
func attributes(params map[string]string) any {
	if len(params) == 0 {
		return nil
	}
	return propList(params)
}

// propList formats props as sorted key=value pairs joined by commas, as
// ShardingSphere prints them; values of keys that look like secrets are
// masked.
func propList(props map[string]string) any {
	if len(props) == 0 {
		return nil
	}
	keys := slices.Sorted(maps.Keys(props))
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		v := props[k]
		if l := strings.ToLower(k); strings.Contains(l, "password") || strings.Contains(l, "secret") {
			v = "******"
		}
		b.WriteString(k + "=" + maskURLPasswords(v))
	}
	return b.String()
}

// nodeList formats data nodes as ds.table joined by ", ".
func nodeList(nodes []config.DataNode) string {
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = n.String()
	}
	return strings.Join(parts, ", ")
}
