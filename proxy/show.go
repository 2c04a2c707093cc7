package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/proxy/internal/sqlvalue"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

// handleShow answers SHOW statements, or returns the plan that does. What
// depends on sharding is answered with logical names (SHOW DATABASES, SHOW
// TABLES, SHOW CREATE TABLE, SHOW COLUMNS, SHOW INDEX); the rest (SHOW
// VARIABLES, SHOW STATUS, SHOW COLLATION, ...) is the default data
// source's answer.
//
// result is the statement's output, which a SHOW answered by a SELECT of
// information_schema describes (routineStatus).
func (s *Session) handleShow(ctx context.Context, st *ast.ShowStmt, sql string, result *output) (*router.Plan, error) {
	out := *result
	if plan, ok, err := s.infoSchemaShow(st); ok {
		return plan, err
	}
	switch st.Tp {
	case ast.ShowDatabases:
		var rows []Row
		for _, db := range []string{infoSchema, s.srv.rules.DatabaseName} {
			if ok, err := matchPattern(st.Pattern, db); err != nil {
				return nil, err
			} else if ok {
				rows = append(rows, rowOf(db))
			}
		}
		return nil, s.writeRowsWhere(ctx, showDatabasesColumns(st), rows, st.Where, out)
	case ast.ShowCreateDatabase:
		if st.DBName != s.srv.rules.DatabaseName {
			return nil, &UnknownDatabaseError{Name: st.DBName}
		}
		cols := createDatabaseColumns()
		create := "CREATE DATABASE "
		if st.IfNotExists {
			// mysqldump --databases asks so, for a dump that restores
			// over an existing schema.
			create += "/*!32312 IF NOT EXISTS*/ "
		}
		row := rowOf(st.DBName, create+"`"+st.DBName+"` /*!40100 DEFAULT CHARACTER SET utf8mb4 */")
		return nil, s.writeRows(newMemStream(cols, []Row{row}), out)
	case ast.ShowTables:
		return nil, s.showTables(ctx, st, out)
	case ast.ShowCreateTable, ast.ShowColumns, ast.ShowIndex:
		return nil, s.showTableMeta(ctx, st, out)
	case ast.ShowWarnings, ast.ShowErrors:
		return nil, s.showDiagnostics(st, out)
	case ast.ShowProcessList:
		// As in MariaDB without PROCESS: one's own connections only.
		user := s.user
		if s.privileges().OtherSchemas {
			user = ""
		}
		return nil, s.writeRows(s.srv.processList(user, st.Full), out)
	case ast.ShowGrants:
		if !s.privileges().OtherSchemas {
			// The backend account's grants are not the user's.
			return nil, s.writeRows(s.access().ownGrants(), out)
		}
	case ast.ShowTableStatus:
		return nil, s.showTableStatus(ctx, st, out)
	case ast.ShowProcedureStatus, ast.ShowFunctionStatus:
		return s.routineStatus(ctx, st, result)
	case ast.ShowTriggers:
		return s.showTriggers(st)
	case ast.ShowEvents:
		return nil, s.showEvents(ctx, st, out)
	}
	return s.srv.dataSourcePlan("", sql, router.KindOther), nil
}

// showTables lists the logical tables: sharded, broadcast, and the
// default data source's own tables that are not data nodes.
func (s *Session) showTables(ctx context.Context, st *ast.ShowStmt, out output) error {
	db, err := s.schema(st.DBName)
	if err != nil {
		return err
	}
	tables, err := s.logicalTables(ctx)
	if err != nil {
		return err
	}
	cols := showTablesColumns(st, db)
	var rows []Row
	for _, t := range tables {
		ok, err := matchPattern(st.Pattern, t.name)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if st.Full {
			rows = append(rows, rowOf(t.name, t.kind))
		} else {
			rows = append(rows, rowOf(t.name))
		}
	}
	return s.writeRowsWhere(ctx, cols, rows, st.Where, out)
}

// showDatabasesColumns are the columns of SHOW DATABASES st.
func showDatabasesColumns(st *ast.ShowStmt) []*mysql.Field {
	return []*mysql.Field{infoSchemaColumn(withPattern("Database", st), "SCHEMATA", "SCHEMA_NAME", nameChars)}
}

// createDatabaseColumns are the columns of SHOW CREATE DATABASE.
func createDatabaseColumns() []*mysql.Field {
	return []*mysql.Field{itemString("Database", nameChars, mysql.NOT_NULL_FLAG), itemString("Create Database", 1024, mysql.NOT_NULL_FLAG)}
}

// showTablesColumns are the columns of SHOW [FULL] TABLES st of database
// db. MariaDB's table names are NAME_CHAR_LEN long and 9 more for the
// #mysql50# prefix.
func showTablesColumns(st *ast.ShowStmt, db string) []*mysql.Field {
	cols := []*mysql.Field{infoSchemaColumn(withPattern("Tables_in_"+db, st), "TABLE_NAMES", "TABLE_NAME", nameChars+9)}
	if st.Full {
		cols = append(cols, infoSchemaColumn("Table_type", "TABLE_NAMES", "TABLE_TYPE", nameChars))
	}
	return cols
}

// withPattern is the name MariaDB gives the column of SHOW TABLES or SHOW
// DATABASES: name, followed by " (pattern)" when st has a LIKE pattern.
func withPattern(name string, st *ast.ShowStmt) string {
	if st.Pattern != nil {
		if p, ok := st.Pattern.Pattern.(ast.ValueExpr); ok {
			name += " (" + p.GetString() + ")"
		}
	}
	return name
}

// showCollations are the collations of a SHOW's columns on MariaDB,
// whose SHOW statements read information_schema: utf8mb3_general_ci for
// a text column. The derived rows a SHOW's WHERE reads take them
// (derivedSQL), so that it compares names as MariaDB does, not in the
// client's collation.
func showCollations(cols []*mysql.Field) []uint16 {
	ids := make([]uint16, len(cols))
	for i, f := range cols {
		if sqlvalue.IsText(f) {
			ids[i] = sqlvalue.Utf8mb3GeneralCI
		}
	}
	return ids
}

// writeRowsWhere writes the rows of a SHOW the proxy answers itself, those
// that its WHERE clause (nil: none) keeps: the default data source
// evaluates the condition over them, handed as a derived table whose
// columns carry the SHOW's names, as MariaDB evaluates it over the SHOW's
// columns. The client gets the proxy's column definitions.
func (s *Session) writeRowsWhere(ctx context.Context, cols []*mysql.Field, rows []Row, where ast.ExprNode, out output) error {
	if where == nil {
		return s.writeRows(newMemStream(cols, rows), out)
	}
	derived, err := derivedSQL(cols, showCollations(cols), rows)
	if err != nil {
		return err
	}
	cond, err := restoreCondition(where)
	if err != nil {
		return err
	}
	kept, err := s.queryRows(ctx, s.srv.rules.DefaultDataSource, "SELECT * FROM ("+derived+") AS `show` WHERE "+cond)
	if err != nil {
		return err
	}
	return s.writeRows(newMemStream(cols, kept), out)
}

type logicalTable struct {
	name string
	kind string // BASE TABLE or VIEW
}

// logicalTables returns the schema's tables by name.
func (s *Session) logicalTables(ctx context.Context) ([]logicalTable, error) {
	rules := s.srv.rules
	seen := map[string]bool{}
	var out []logicalTable
	add := func(name, kind string) {
		if !seen[strings.ToLower(name)] {
			seen[strings.ToLower(name)] = true
			out = append(out, logicalTable{name: name, kind: kind})
		}
	}
	// A table of the rules is listed once it exists: a sharded table when
	// its first data node does (where SHOW CREATE TABLE and
	// information_schema read it), a broadcast table on the default data
	// source. ORMs create the tables SHOW TABLES does not list.
	existing := map[string]map[string]bool{} // data source -> physical tables
	tablesOn := func(ds string) ([]Row, error) {
		rows, err := s.queryRows(ctx, ds, "SHOW FULL TABLES")
		if err != nil {
			return nil, err
		}
		existing[ds] = map[string]bool{}
		for _, r := range rows {
			existing[ds][string(r[0])] = true
		}
		return rows, nil
	}
	rows, err := tablesOn(rules.DefaultDataSource)
	if err != nil {
		return nil, err
	}
	for name, t := range rules.Tables {
		if len(t.DataNodes) == 0 {
			continue
		}
		home := t.DataNodes[0]
		if existing[home.DataSource] == nil {
			if _, err := tablesOn(home.DataSource); err != nil {
				// A data source that does not answer hides none of
				// its tables: listed as the rules say, as before.
				s.srv.log.Warn("SHOW TABLES: listing the rules' tables of an unreachable data source", "dataSource", home.DataSource, "err", errLine(err))
				existing[home.DataSource] = map[string]bool{}
				for _, other := range rules.Tables {
					for _, dn := range other.DataNodes {
						if dn.DataSource == home.DataSource {
							existing[home.DataSource][dn.Table] = true
						}
					}
				}
			}
		}
		if existing[home.DataSource][home.Table] {
			add(name, "BASE TABLE")
		}
	}
	for _, name := range rules.BroadcastTables {
		if existing[rules.DefaultDataSource][name] {
			add(name, "BASE TABLE")
		}
	}
	for _, r := range rows {
		name := string(r[0])
		if _, isNode := s.srv.physicalTable[name]; isNode || name == xaDecisions {
			continue // a data node, or the XA decisions (xa.go)
		}
		add(name, string(r[1]))
	}
	slices.SortFunc(out, func(a, b logicalTable) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// schema checks a schema a statement names ("" for the one in use).
func (s *Session) schema(name string) (string, error) {
	if name == "" {
		if s.db == "" {
			return "", ErrNoDatabase
		}
		return s.db, nil
	}
	if name != s.srv.rules.DatabaseName {
		return "", &UnknownDatabaseError{Name: name}
	}
	return name, nil
}

// tableHome is where the proxy reads a logical table's definition: the
// first data node of a sharded table, else the table itself on the
// default data source (broadcast tables are there too).
func (srv sessionServer) tableHome(name string) (ds, physical string) {
	rules := srv.rules
	if t := rules.Table(name); t != nil && len(t.DataNodes) > 0 {
		return t.DataNodes[0].DataSource, t.DataNodes[0].Table
	}
	return rules.DefaultDataSource, name
}

// isPhysicalName reports whether name is a physical table of a sharded
// table and not itself a logical table.
func (srv sessionServer) isPhysicalName(name string) bool {
	rules := srv.rules
	_, isNode := srv.physicalTable[name]
	if !isNode {
		_, isNode = srv.physicalTable[strings.ToLower(name)]
	}
	return isNode && rules.Table(name) == nil && !rules.IsBroadcast(strings.ToLower(name))
}

// showTableMeta answers SHOW CREATE TABLE, SHOW COLUMNS (DESCRIBE) and
// SHOW INDEX from the table's first data node, with the physical name
// replaced by the logical one; a sharded table's index Cardinality is
// summed over its data nodes (indexCardinality), and SHOW INDEX's WHERE
// then reads the sums.
// showTableMetaSQL returns the table a SHOW COLUMNS, SHOW INDEX or SHOW
// CREATE TABLE st names, its physical table, the data source that holds
// it and the statement asking it there.
func (s *Session) showTableMetaSQL(st *ast.ShowStmt) (logical, physical, ds, sql string, err error) {
	if st.Table == nil {
		return "", "", "", "", &NotSupportedError{What: "this SHOW statement"}
	}
	schemaName := st.Table.Schema.O
	if schemaName == "" {
		schemaName = st.DBName
	}
	if _, err := s.schema(schemaName); err != nil {
		return "", "", "", "", err
	}
	logical = st.Table.Name.O
	if s.srv.isPhysicalName(logical) {
		// A sharded table's physical table is not a logical table (the
		// router answers the same for every other statement). A
		// router.Error, not a backend's MyError: its name is meant.
		return "", "", "", "", &router.Error{Code: router.CodeNoSuchTable, State: "42S02",
			Message: fmt.Sprintf("Table '%s.%s' doesn't exist", s.srv.rules.DatabaseName, logical)}
	}
	ds, physical = s.srv.tableHome(logical)
	sql, err = showSQL(st, physical)
	return logical, physical, ds, sql, err
}

func (s *Session) showTableMeta(ctx context.Context, st *ast.ShowStmt, out output) error {
	logical, physical, ds, sql, err := s.showTableMetaSQL(st)
	if err != nil {
		return err
	}
	var cardinality map[indexColumn]uint64
	var where ast.ExprNode // evaluated here, on the summed figures
	if rule := s.srv.rules.Table(logical); st.Tp == ast.ShowIndex && rule != nil && len(rule.DataNodes) > 1 {
		if cardinality, err = s.indexCardinality(ctx, rule.DataNodes); err != nil {
			return err
		}
		if st.Where != nil {
			where = st.Where
			sql = "SHOW INDEX FROM " + string(appendIdent(nil, physical))
		}
	}
	plan := &router.Plan{Kind: router.KindOther, Type: router.RouteSingle, Routes: []router.Route{{DataSource: ds, SQL: sql}}}
	res, err := runPlan(ctx, plan, poolSource{s}, s.srv.merger, 0, s.srv.obs)
	if err != nil {
		var my *mysql.MyError
		if errors.As(err, &my) && my.Code == mysql.ER_NO_SUCH_TABLE {
			return mysql.NewDefaultError(mysql.ER_NO_SUCH_TABLE, s.srv.rules.DatabaseName, logical)
		}
		return err
	}
	if res.rows == nil {
		return s.writeOK(res.ok, out.more)
	}
	rename := func(r Row) Row { return r }
	if physical != logical || s.srv.rules.Table(logical) != nil {
		switch st.Tp {
		case ast.ShowCreateTable:
			rename = func(r Row) Row {
				r = r.Clone()
				r[0] = []byte(logical)
				if len(r) > 1 && r[1] != nil {
					r[1] = s.srv.logicalCreateTable(r[1], physical, logical)
				}
				return r
			}
		case ast.ShowIndex:
			card := slices.IndexFunc(res.rows.Columns(), func(f *mysql.Field) bool { return string(f.Name) == "Cardinality" })
			rename = func(r Row) Row {
				r = r.Clone()
				r[0] = []byte(logical)
				if len(r) > 3 && r[2] != nil {
					r[2] = []byte(s.srv.logicalConstraint(physical, string(r[2])))
					if sum, ok := cardinality[indexColumn{string(r[2]), string(r[3])}]; ok && card >= 0 && card < len(r) {
						r[card] = strconv.AppendUint(nil, sum, 10)
					}
				}
				return r
			}
		}
	}
	rows := &mapStream{RowStream: res.rows, fn: rename}
	if where == nil {
		return s.writeRows(rows, out)
	}
	columns := rows.Columns()
	all, err := drain(rows)
	if err != nil {
		return err
	}
	return s.writeRowsWhere(ctx, columns, all, where, out)
}

// showSQL writes SHOW CREATE TABLE / COLUMNS / INDEX for a physical
// table in the plainest spelling every MySQL-compatible server reads.
func showSQL(st *ast.ShowStmt, physical string) (string, error) {
	table := string(appendIdent(nil, physical))
	if st.Tp == ast.ShowCreateTable {
		return "SHOW CREATE TABLE " + table, nil
	}
	sql := "SHOW COLUMNS FROM " + table
	switch {
	case st.Tp == ast.ShowIndex:
		// Its WHERE, as SHOW COLUMNS's, is evaluated by the data node.
		sql = "SHOW INDEX FROM " + table
	case st.Full:
		sql = "SHOW FULL COLUMNS FROM " + table
	}
	var cond ast.Node
	switch {
	case st.Pattern != nil:
		cond = st.Pattern.Pattern
		sql += " LIKE "
	case st.Where != nil:
		cond = st.Where
		sql += " WHERE "
	case st.Column != nil:
		// DESCRIBE t col
		return sql + " LIKE " + string(appendQuotedName(st.Column.Name.O)), nil
	}
	if cond != nil {
		var b strings.Builder
		if err := cond.Restore(format.NewRestoreCtx(restoreFlags, &b)); err != nil {
			return "", &InternalError{Msg: "restore SHOW condition: " + err.Error()}
		}
		sql += b.String()
	}
	return sql, nil
}

func appendQuotedName(name string) []byte {
	lit, _ := sqlarg.AppendLiteral(nil, name, sqlarg.Backslash)
	return lit
}

// queryRows runs sql on data source ds and returns all its rows (small
// metadata results only).
func (s *Session) queryRows(ctx context.Context, ds, sql string) ([]Row, error) {
	plan := &router.Plan{Kind: router.KindOther, Type: router.RouteSingle, Routes: []router.Route{{DataSource: ds, SQL: sql}}}
	res, err := runPlan(ctx, plan, poolSource{s}, s.srv.merger, 0, s.srv.obs)
	if err != nil {
		return nil, err
	}
	if res.rows == nil {
		return nil, nil
	}
	return drain(res.rows)
}

// drain reads a stream to its end and closes it; rows are copies.
func drain(rows RowStream) ([]Row, error) {
	defer rows.Close()
	var out []Row
	for {
		r, err := rows.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r.Clone())
	}
}

// mapStream changes each row of a stream.
type mapStream struct {
	RowStream
	fn func(Row) Row
}

func (m *mapStream) Next() (Row, error) {
	r, err := m.RowStream.Next()
	if err != nil {
		return nil, err
	}
	return m.fn(r), nil
}

// matchPattern applies SHOW ... LIKE 'pattern' to a name (true when there
// is no pattern).
func matchPattern(p *ast.PatternLikeOrIlikeExpr, name string) (bool, error) {
	if p == nil {
		return true, nil
	}
	v, ok := p.Pattern.(ast.ValueExpr)
	if !ok {
		return false, &NotSupportedError{What: "a LIKE pattern that is not a string literal"}
	}
	escape := p.Escape
	if escape == 0 {
		escape = '\\'
	}
	m := likeMatch(v.GetString(), name, escape)
	return m != p.Not, nil
}

// likeMatch reports whether s matches a SQL LIKE pattern (% and _),
// case-insensitively as table-name comparisons are.
func likeMatch(pattern, s string, escape byte) bool {
	pattern, s = strings.ToLower(pattern), strings.ToLower(s)
	var match func(p, t int) bool
	match = func(p, t int) bool {
		for p < len(pattern) {
			c := pattern[p]
			switch {
			case c == escape && p+1 < len(pattern):
				if t >= len(s) || s[t] != pattern[p+1] {
					return false
				}
				p, t = p+2, t+1
			case c == '%':
				for k := t; k <= len(s); k++ {
					if match(p+1, k) {
						return true
					}
				}
				return false
			case c == '_':
				if t >= len(s) {
					return false
				}
				p, t = p+1, t+1
			default:
				if t >= len(s) || s[t] != c {
					return false
				}
				p, t = p+1, t+1
			}
		}
		return t == len(s)
	}
	return match(0, 0)
}

// shownState is what SHOW PROCESSLIST shows of a session.
type shownState struct {
	// user is the session's user as other sessions see it (a
	// COM_CHANGE_USER changes it).
	user  string
	db    string
	since time.Time // when its command started, or its last one ended
	// command is the command it runs (0 when idle), info the text of
	// its statement: a string of its own, since the packet's buffer
	// takes the packets that come during the command (a LOAD DATA
	// LOCAL's file).
	command byte
	info    string
}

// mariadbMaxAllowedPacket is MariaDB's default max_allowed_packet.
const mariadbMaxAllowedPacket = 16 << 20

// processListInfo is how much of a statement SHOW PROCESSLIST shows
// without FULL, as MariaDB's.
const processListInfo = 100

// processList is SHOW [FULL] PROCESSLIST over the proxy's client
// connections, those of user only unless user is "": as MariaDB shows
// its threads, a running command's name, its seconds and a statement's
// text (the first 100 characters without FULL).
func (srv *Server) processList(user string, full bool) RowStream {
	// MariaDB's columns: MySQL's eight and Progress (of ALTER TABLE,
	// LOAD DATA; the proxy's sessions report none), each described as
	// MariaDB describes it; FULL's Info is as long as a statement may be
	// (12 bytes per byte of MariaDB's default max_allowed_packet, as
	// MariaDB sends it).
	info := itemString("Info", processListInfo, 0)
	if full {
		info = &mysql.Field{Name: []byte("Info"), Charset: charsetUTF8MB4, ColumnLength: 12 * mariadbMaxAllowedPacket,
			Type: mysql.MYSQL_TYPE_LONG_BLOB, Decimal: notFixedDecimals}
	}
	cols := []*mysql.Field{itemInt("Id", mysql.MYSQL_TYPE_LONGLONG, 11, mysql.NOT_NULL_FLAG), itemString("User", 128, mysql.NOT_NULL_FLAG),
		itemString("Host", 64, mysql.NOT_NULL_FLAG), itemString("db", nameChars, 0), itemString("Command", 16, mysql.NOT_NULL_FLAG),
		itemInt("Time", mysql.MYSQL_TYPE_LONG, 7, mysql.NOT_NULL_FLAG), itemString("State", 30, 0), info,
		{Name: []byte("Progress"), Charset: charsetBinary, ColumnLength: 7, Type: mysql.MYSQL_TYPE_DOUBLE,
			Flag: mysql.NOT_NULL_FLAG | mysql.BINARY_FLAG, Decimal: 3}}
	sessions := srv.sessionList()
	slices.SortFunc(sessions, func(a, b *Session) int { return int(a.id) - int(b.id) })
	now := time.Now()
	var rows []Row
	for _, s := range sessions {
		s.mu.Lock()
		if user != "" && s.shown.user != user {
			s.mu.Unlock()
			continue
		}
		cmd, state := "Sleep", ""
		var db, info any
		if s.shown.db != "" {
			db = s.shown.db
		}
		if s.busy && s.shown.command != 0 { // 0: answered (showIdle)
			cmd = "Query"
			switch s.shown.command {
			case mysql.COM_STMT_EXECUTE:
				cmd = "Execute"
			case mysql.COM_STMT_PREPARE:
				cmd = "Prepare"
			}
			switch s.shown.command {
			case mysql.COM_QUERY, mysql.COM_STMT_EXECUTE, mysql.COM_STMT_PREPARE:
				text := s.shown.info
				if !full {
					text = firstRunes(text, processListInfo)
				}
				info = text
			}
		}
		secs := int64(now.Sub(s.shown.since) / time.Second)
		if s.shown.since.IsZero() {
			secs = 0
		}
		shownUser := s.shown.user
		s.mu.Unlock()
		rows = append(rows, rowOf(uint64(s.id), shownUser, s.nc.RemoteAddr().String(), db, cmd, secs, state, info, "0.000"))
	}
	return newMemStream(cols, rows)
}

// firstRunes is s cut to its first n characters.
func firstRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// handleFieldList answers COM_FIELD_LIST (the column list of a table, used
// by the mariadb client's completion).
func (s *Session) handleFieldList(data []byte) error {
	table, wildcard, _ := bytes.Cut(data, []byte{0})
	fields, err := s.fieldList(string(table), string(wildcard))
	if err != nil {
		return err
	}
	for _, f := range fields {
		out := wire.AppendColumn(s.wc.Scratch(), f, s.extendedMetadata)
		if f.DefaultValue != nil {
			out = wire.AppendLenEncString(out, f.DefaultValue)
		}
		if err := s.writePacket(out); err != nil {
			return err
		}
	}
	return s.writeEOF(false)
}

// fieldList reads a logical table's columns from its first data node.
func (s *Session) fieldList(logical, wildcard string) ([]*mysql.Field, error) {
	ds, physical := s.srv.tableHome(logical)
	ctx, end := s.statementContext()
	defer end()
	bcs, err := poolSource{s}.acquire(ctx, ds, 1)
	if err != nil {
		return nil, err
	}
	bc := bcs[0]
	defer poolSource{s}.release(bc)
	if err := bc.send(mysql.COM_FIELD_LIST, physical+"\x00"+wildcard); err != nil {
		return nil, err
	}
	var fields []*mysql.Field
	for {
		p, err := bc.wc.ReadPacket()
		if err != nil {
			return nil, bc.lost(err)
		}
		if wire.IsErr(p) {
			return nil, wire.ParseErr(p)
		}
		if wire.IsEOF(p) {
			return fields, nil
		}
		f, err := wire.ParseColumn(p, bc.extendedMetadata)
		if err != nil {
			return nil, bc.lost(err)
		}
		fields = append(fields, s.logicalColumn(f))
	}
}
