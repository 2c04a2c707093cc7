package proxy

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/internal/sqllex"
	"github.com/shardflake/shardflake/router"
)

// Table maintenance statements: ANALYZE, CHECK, CHECKSUM, OPTIMIZE and
// REPAIR TABLE (mariadb-check sends them). The parser reads none of them
// as MariaDB writes them (CHECK, CHECKSUM and REPAIR not at all, ANALYZE
// and OPTIMIZE as TiDB's own), so they are recognised by their words,
// and the proxy answers them: each named logical table's statement runs
// on every data node of the table (a sharded table's physical tables, a
// broadcast table's copies, a table without rules on the default data
// source), and the answer is one MariaDB holding the logical table
// gives: rows of Table, Op, Msg_type, Msg_text with Table the logical
// `schema.table`, each distinct row of its data nodes once, the tables in
// the statement's order. CHECKSUM TABLE's Checksum is the sum, modulo
// 2^32, of its data nodes': MariaDB's table checksum is the sum of its
// rows' checksums (handler::calculate_checksum adds each row's CRC into a
// 32-bit ha_checksum), so the sum over data nodes is the checksum of one
// table holding every row. A broadcast table's copies each hold every
// row: its checksum is the default data source's copy's.

// maintenanceStmt is a recognised table maintenance statement.
type maintenanceStmt struct {
	op       string // ANALYZE, CHECK, CHECKSUM, OPTIMIZE or REPAIR
	modifier string // NO_WRITE_TO_BINLOG or LOCAL, or ""
	tables   []maintenanceTable
	options  string // what follows the table list, as written (QUICK, EXTENDED, ...)
}

// maintenanceTable is one table a maintenance statement names.
type maintenanceTable struct{ schema, name string }

// opChecksum is CHECKSUM TABLE's operation, whose result is a checksum,
// not messages.
const opChecksum = "CHECKSUM"

// writes reports whether the statement needs INSERT on its tables as
// well as SELECT (MariaDB's check_table_access for ANALYZE, OPTIMIZE and
// REPAIR).
func (m *maintenanceStmt) writes() bool {
	return m.op != "CHECK" && m.op != opChecksum
}

// sql is the statement for one table: name, written as SQL.
func (m *maintenanceStmt) sql(name string) string {
	var b strings.Builder
	b.WriteString(m.op)
	if m.modifier != "" {
		b.WriteString(" " + m.modifier)
	}
	b.WriteString(" TABLE " + name)
	if m.options != "" {
		b.WriteString(" " + m.options)
	}
	return b.String()
}

// matchMaintenance recognises a table maintenance statement:
//
//	{ANALYZE | OPTIMIZE | REPAIR} [NO_WRITE_TO_BINLOG | LOCAL] TABLE[S] tables [options]
//	{CHECK | CHECKSUM} TABLE[S] tables [options]
//
// with tables a comma-separated list of [schema.]name and options words,
// names and parentheses (QUICK, FOR UPGRADE, PERSISTENT FOR COLUMNS (a)
// INDEXES ()). Executable comments count as code (mariadb-check's
// /*!40101 NO_WRITE_TO_BINLOG */ forms). It reports false for any other
// text.
func matchMaintenance(sql string, mode sqllex.Mode) (maintenanceStmt, bool) {
	text := sqllex.ExecutableText(sql, mode)
	toks := sqllex.CodeTokens(text, mode)
	for len(toks) > 0 && toks[len(toks)-1].Text(text) == ";" {
		toks = toks[:len(toks)-1]
	}
	word := func(i int) string {
		if i < len(toks) && toks[i].Kind == sqllex.Word {
			return strings.ToUpper(toks[i].Text(text))
		}
		return ""
	}
	var m maintenanceStmt
	switch m.op = word(0); m.op {
	case "ANALYZE", "OPTIMIZE", "REPAIR", "CHECK", opChecksum:
	default:
		return maintenanceStmt{}, false
	}
	i := 1
	if w := word(i); m.writes() && (w == "NO_WRITE_TO_BINLOG" || w == "LOCAL") {
		m.modifier = w
		i++
	}
	if w := word(i); w != "TABLE" && w != "TABLES" {
		return maintenanceStmt{}, false
	}
	i++
	name := func() (string, bool) {
		if i >= len(toks) {
			return "", false
		}
		t := toks[i]
		i++
		switch t.Kind {
		case sqllex.Word:
			return t.Text(text), true
		case sqllex.QuotedName:
			return sqllex.Unquote(text, t, mode), true
		}
		return "", false
	}
	punct := func(c string) bool {
		if i < len(toks) && toks[i].Kind == sqllex.Punct && toks[i].Text(text) == c {
			i++
			return true
		}
		return false
	}
	for {
		var t maintenanceTable
		var ok bool
		if t.name, ok = name(); !ok {
			return maintenanceStmt{}, false
		}
		if punct(".") {
			t.schema = t.name
			if t.name, ok = name(); !ok {
				return maintenanceStmt{}, false
			}
		}
		m.tables = append(m.tables, t)
		if !punct(",") {
			break
		}
	}
	if i < len(toks) {
		for _, t := range toks[i:] {
			switch t.Kind {
			case sqllex.Word, sqllex.QuotedName:
			case sqllex.Punct:
				if c := t.Text(text); c != "(" && c != ")" && c != "," {
					return maintenanceStmt{}, false
				}
			default:
				return maintenanceStmt{}, false
			}
		}
		m.options = text[toks[i].Start:toks[len(toks)-1].End]
	}
	return m, true
}

// classifyMaintenance classifies a table maintenance statement, which the
// proxy answers (answerMaintenance); it reports false for any other text.
func (s *Session) classifyMaintenance(st *statement) bool {
	m, ok := matchMaintenance(st.sql, s.lexMode())
	if !ok {
		return false
	}
	st.kind, st.maintenance, st.node = planLocal, &m, nil
	return true
}

// maintenanceTarget is where one named table's statement runs.
type maintenanceTarget struct {
	// table is the Table column of its rows: schema.name as the client
	// wrote the name.
	table string
	nodes []maintenanceNode
	// system: a table of a system schema (mysql, ...), the default data
	// source's, whose rows pass unchanged.
	system bool
	// copies: a broadcast table, whose data nodes each hold every row.
	copies bool
}

// maintenanceNode is one data node of a target: its data source and the
// table as a statement there names it (quoted).
type maintenanceNode struct{ ds, table string }

// maintenanceTarget resolves one table of a maintenance statement, as
// the router resolves a table name: its own schema or the one in use,
// which must be the logical schema or a system one; a sharded table's
// physical tables are not logical tables.
func (s *Session) maintenanceTarget(t maintenanceTable) (maintenanceTarget, error) {
	rules := s.srv.rules
	schema := t.schema
	if schema == "" {
		if s.db == "" {
			return maintenanceTarget{}, ErrNoDatabase
		}
		schema = s.db
	}
	if router.IsSystemSchema(schema) {
		name := string(appendIdent(nil, schema)) + "." + string(appendIdent(nil, t.name))
		return maintenanceTarget{nodes: []maintenanceNode{{ds: rules.DefaultDataSource, table: name}}, system: true}, nil
	}
	if !strings.EqualFold(schema, rules.DatabaseName) {
		return maintenanceTarget{}, &UnknownDatabaseError{Name: schema}
	}
	if s.srv.isPhysicalName(t.name) {
		return maintenanceTarget{}, &router.Error{Code: router.CodeNoSuchTable, State: "42S02",
			Message: fmt.Sprintf("Table '%s.%s' doesn't exist", rules.DatabaseName, t.name)}
	}
	out := maintenanceTarget{table: rules.DatabaseName + "." + t.name}
	quoted := string(appendIdent(nil, t.name))
	switch tr := rules.Table(t.name); {
	case tr != nil && len(tr.DataNodes) > 0:
		for _, n := range tr.DataNodes {
			out.nodes = append(out.nodes, maintenanceNode{ds: n.DataSource, table: string(appendIdent(nil, n.Table))})
		}
	case rules.IsBroadcast(t.name):
		out.copies = true
		for _, ds := range rules.DataSourceNames() {
			out.nodes = append(out.nodes, maintenanceNode{ds: ds, table: quoted})
		}
	default:
		out.nodes = []maintenanceNode{{ds: rules.DefaultDataSource, table: quoted}}
	}
	return out, nil
}

// answerMaintenance answers a table maintenance statement: each table's
// statement on each of its data nodes (runMaintenance), the rows merged
// per logical table in the statement's order.
func (s *Session) answerMaintenance(ctx context.Context, m *maintenanceStmt, sql string, out output) (err error) {
	if err := s.access().authorizeMaintenance(m, sql); err != nil {
		return err
	}
	targets := make([]maintenanceTarget, len(m.tables))
	for i, t := range m.tables {
		var err error
		if targets[i], err = s.maintenanceTarget(t); err != nil {
			return err
		}
	}
	var conns connSource = poolSource{s}
	switch {
	case m.op != opChecksum:
		// MariaDB commits an open transaction before a table
		// maintenance statement; CHECKSUM TABLE is not one of them.
		if err := s.implicitCommit(); err != nil {
			return err
		}
	case s.inTransaction():
		// CHECKSUM TABLE reads inside the transaction, as a SELECT does:
		// its own writes, its snapshot.
		if !s.txn.active {
			s.startTxn(beginPlain) // autocommit=0: it opens the transaction
		}
		conns = txnSource{s: s}
		defer func() { s.afterTxnStatement(err) }()
	}
	s.diag.reset()
	ctx = withDiagnostics(ctx, &s.diag)
	results, err := s.runMaintenance(ctx, m, targets, conns)
	if err != nil {
		return err
	}
	var columns []*mysql.Field
	var rows []Row
	for ti, t := range targets {
		var got []Row
		var copyRows map[string][]Row // data source -> a broadcast copy's rows
		for ni, n := range t.nodes {
			res := results[ti][ni]
			if columns == nil {
				columns = res.columns
			}
			got = append(got, res.rows...)
			if t.copies {
				if copyRows == nil {
					copyRows = map[string][]Row{}
				}
				copyRows[n.ds] = res.rows
			}
		}
		switch {
		case t.system:
			rows = append(rows, got...)
		case m.op == opChecksum && t.copies:
			rows = append(rows, s.copiesChecksumRow(t.table, copyRows))
		case m.op == opChecksum:
			rows = append(rows, checksumRow(t.table, got))
		default:
			rows = append(rows, s.maintenanceRows(t.table, got)...)
		}
	}
	if s.diag.statementWarnings() > 0 {
		// Each data node's statement warned of the same problem with the
		// one logical table (it does not exist): once, as MariaDB.
		s.diag.distinct(s.srv.logicalNames)
	}
	return s.writeRows(newMemStream(columns, rows), out)
}

// runMaintenance runs m's statement on every data node of targets and
// returns each node's result, by target and node. The data sources work
// at once, each on its own nodes one after another in the statement's
// order: a statement over a sharded table takes about as long as its
// busiest data source's share, not the sum of all (an OPTIMIZE of a big
// table rebuilds every physical table), and no server rebuilds two
// tables at once for it, as none does for one MariaDB's OPTIMIZE TABLE
// t1, t2. A data source stops at its first error; the error returned is
// the first in the statement's order. Inside a transaction (CHECKSUM
// TABLE only) the nodes run one after another on the transaction's
// connections, as its other statements do.
func (s *Session) runMaintenance(ctx context.Context, m *maintenanceStmt, targets []maintenanceTarget, conns connSource) ([][]buffered, error) {
	type job struct{ target, node int }
	results := make([][]buffered, len(targets))
	errs := make([][]error, len(targets))
	var order []string
	byDS := map[string][]job{}
	for ti, t := range targets {
		results[ti] = make([]buffered, len(t.nodes))
		errs[ti] = make([]error, len(t.nodes))
		for ni, n := range t.nodes {
			if _, ok := byDS[n.ds]; !ok {
				order = append(order, n.ds)
			}
			byDS[n.ds] = append(byDS[n.ds], job{ti, ni})
		}
	}
	run := func(ds string) bool {
		for _, j := range byDS[ds] {
			res, err := s.queryResultOn(ctx, conns, ds, m.sql(targets[j.target].nodes[j.node].table))
			results[j.target][j.node], errs[j.target][j.node] = res, err
			if err != nil {
				return false
			}
		}
		return true
	}
	if _, inTxn := conns.(txnSource); inTxn || len(order) == 1 {
		for _, ds := range order {
			if !run(ds) {
				break
			}
		}
	} else {
		var wg sync.WaitGroup
		for _, ds := range order {
			wg.Go(func() { run(ds) })
		}
		wg.Wait()
	}
	for _, te := range errs {
		for _, err := range te {
			if err != nil {
				return nil, err
			}
		}
	}
	return results, nil
}

// maintenanceRows are the rows of one logical table, from its data
// nodes' rows (Table, Op, Msg_type, Msg_text): each distinct (Op,
// Msg_type, Msg_text) once, in the order first seen, under the logical
// table's name and with physical names in messages replaced by logical
// ones.
func (s *Session) maintenanceRows(table string, got []Row) []Row {
	out := make([]Row, len(got))
	for i, r := range got {
		r = r.Clone()
		r[0] = []byte(table)
		if last := len(r) - 1; last > 0 && r[last] != nil {
			r[last] = []byte(s.srv.logicalNames(string(r[last])))
		}
		out[i] = r
	}
	return distinctRows(out)
}

// checksumRow is CHECKSUM TABLE's row of one logical table from its data
// nodes' rows (Table, Checksum): the sum of their checksums modulo 2^32,
// NULL when any is NULL (QUICK on a table without a live checksum, a
// table that does not exist).
func checksumRow(table string, got []Row) Row {
	var sum uint64
	for _, r := range got {
		if len(r) < 2 || r[1] == nil {
			return rowOf(table, nil)
		}
		v, err := strconv.ParseUint(string(r[1]), 10, 64)
		if err != nil {
			return rowOf(table, nil)
		}
		sum = (sum + v) & 0xffffffff
	}
	if len(got) == 0 {
		return rowOf(table, nil)
	}
	return rowOf(table, strconv.FormatUint(sum, 10))
}

// copiesChecksumRow is CHECKSUM TABLE's row of a broadcast table: its
// default data source's copy's checksum, which a read of the table sees;
// copies that disagree are logged, as a write that changed them unlike.
func (s *Session) copiesChecksumRow(table string, copyRows map[string][]Row) Row {
	def := s.srv.rules.DefaultDataSource
	row := checksumRow(table, copyRows[def])
	for ds, got := range copyRows {
		if other := checksumRow(table, got); string(other[1]) != string(row[1]) {
			s.log.Warn("the copies of a broadcast table disagree: CHECKSUM TABLE differs between data sources; the client was told the default data source's",
				"table", table, "datasource", ds, "checksum", string(other[1]), "default", def, "default_checksum", string(row[1]))
		}
	}
	return row
}
