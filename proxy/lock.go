package proxy

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/internal/sqllex"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

// LOCK TABLES and UNLOCK TABLES.
//
// LOCK TABLES of logical tables locks their physical tables on every data
// node: a sharded table's data nodes, a broadcast table's copy on every
// data source, an unsharded table on the default data source. Each data
// source gets one LOCK TABLES listing all its physical tables, on a
// backend connection pinned to the session (pin.go) until UNLOCK TABLES,
// so every later statement of the session on that data source runs where
// the locks are, and MariaDB's rules apply there as on one server (a
// table not locked gets 1100, a write to a READ-locked one 1099).
//
// The router names a physical table by the logical name
// (`t_order_1` AS `t_order`), and MariaDB wants a table used under an
// alias locked under that alias, which it refuses for two physical tables
// of one logical table on the same data source (1066). So the physical
// tables are locked under their own names, and while the session holds
// locks, its routes on those data sources name the physical tables
// without the alias (lockedPlan).
//
// As in MariaDB, LOCK TABLES commits an open transaction and releases the
// locks the session held before; it takes all its locks or none (a failure
// on one data source unlocks the others). UNLOCK TABLES, BEGIN and
// START TRANSACTION release them; UNLOCK TABLES commits a transaction
// open while tables were locked.

// handleLockTables runs LOCK TABLES.
func (s *Session) handleLockTables(ctx context.Context, st *ast.LockTablesStmt, sql string, more bool) error {
	if err := s.implicitCommit(); err != nil {
		return err
	}
	_, aliases, _ := lockAliases(sql)
	byDS, err := s.lockList(st, aliases)
	if err != nil {
		return err
	}
	// The locks held before are released, as by MariaDB's LOCK TABLES.
	if err := s.unlockTables(); err != nil {
		return err
	}
	order := slices.Sorted(maps.Keys(byDS))
	start := time.Now()
	var limit time.Duration
	for attempt := 1; ; attempt++ {
		busy, err := s.lockEach(ctx, order, byDS)
		if !busy {
			if err != nil {
				return err
			}
			return s.writeOK(wire.OK{}, more)
		}
		// Another session's transaction holds a table of a later data
		// source, and may be waiting for one this statement had locked
		// on an earlier one: everything was released, and the statement
		// tries again, for as long as the session's lock_wait_timeout.
		if attempt == 1 {
			v, err := s.userVarValue(ctx, &ast.VariableExpr{Name: "lock_wait_timeout", IsSystem: true})
			if err != nil {
				return err
			}
			secs, _ := strconv.ParseFloat(v, 64)
			limit = time.Duration(secs * float64(time.Second))
		}
		if time.Since(start) >= limit {
			return mysql.NewDefaultError(mysql.ER_LOCK_WAIT_TIMEOUT)
		}
		pause := time.Duration(rand.Int64N(int64(min(attempt, 10)) * int64(20*time.Millisecond)))
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(pause):
		}
	}
}

// lockOthersWait is how long, in seconds, LOCK TABLES waits for the tables
// of a data source while it holds the locks it took on the data sources
// before it (in name order). The first waits as long as the session's
// lock_wait_timeout, as on MariaDB: it holds nothing yet. A later one may
// be held by another session's transaction that waits for a table this
// statement locked on an earlier data source (it wrote on the later one
// first): a deadlock neither server sees, which would last the
// transaction's and the statement's lock_wait_timeout (a day by default;
// mariadb-dump's LOCK TABLES ... READ against a proxy taking writes).
const lockOthersWait = 1

// lockEach takes the locks of byDS on each data source in order, all or
// none (a failure unlocks what it locked); busy reports a failure to lock
// a data source after the first within lockOthersWait, which the caller
// retries.
func (s *Session) lockEach(ctx context.Context, order []string, byDS map[string][]string) (busy bool, err error) {
	for i, ds := range order {
		bc, err := s.lockConn(ctx, ds)
		if err == nil {
			stmt := "LOCK TABLES " + strings.Join(byDS[ds], ", ")
			if i > 0 {
				stmt += " WAIT " + strconv.Itoa(lockOthersWait)
			}
			// It may wait for other sessions' locks: KILL QUERY and the
			// statement timeout stop it.
			stop := bc.watch(ctx)
			_, err = bc.exec(stmt)
			stop()
			err = cancelled(ctx, err)
		}
		if err != nil {
			// All or nothing: what this statement locked is released.
			if uerr := s.unlockTables(); uerr != nil {
				s.log.Warn("UNLOCK TABLES after a failed LOCK TABLES", "err", errLine(uerr))
			}
			var my *mysql.MyError
			return i > 0 && errors.As(err, &my) && my.Code == mysql.ER_LOCK_WAIT_TIMEOUT, err
		}
		if s.state.tableLocks == nil {
			s.state.tableLocks = map[string]bool{}
		}
		s.state.tableLocks[ds] = true
	}
	return false, nil
}

// handleUnlockTables runs UNLOCK TABLES: a transaction open while tables
// were locked is committed first, as in MariaDB.
func (s *Session) handleUnlockTables(more bool) error {
	if len(s.state.tableLocks) > 0 {
		if err := s.implicitCommit(); err != nil {
			return err
		}
	}
	if err := s.unlockTables(); err != nil {
		return err
	}
	return s.writeOK(wire.OK{}, more)
}

// unlockTables releases the session's table locks on every data source
// that holds some. A connection that fails to unlock is dropped (its
// locks go with it).
func (s *Session) unlockTables() error {
	var errs []error
	for _, ds := range slices.Sorted(maps.Keys(s.state.tableLocks)) {
		if bc := s.pinnedConn(ds); bc != nil {
			if _, err := bc.exec("UNLOCK TABLES"); err != nil {
				bc.broken = true
				errs = append(errs, err)
			}
		}
	}
	s.state.tableLocks = nil
	if s.state.empty() {
		s.unpinAll()
	}
	return errors.Join(errs...)
}

// lockConn returns the session's pinned connection to ds, pinning one
// from the pool when it has none.
func (s *Session) lockConn(ctx context.Context, ds string) (*backendConn, error) {
	if bc := s.pinnedConn(ds); bc != nil {
		return bc, nil
	}
	pinNext := s.state.pinNext
	s.state.pinNext = true
	defer func() { s.state.pinNext = pinNext }()
	bcs, err := poolSource{s}.acquire(ctx, ds, 1)
	if err != nil {
		return nil, err
	}
	return bcs[0], nil
}

// lockList resolves the statement's logical tables to the physical tables
// each data source must lock, with their lock types. A table locked under
// an alias (aliases[i], lockAliases) is locked under it on every data
// source, where the router's routes name it so (`t_order_1` AS `a`);
// MariaDB refuses one alias for two tables, so a table with several data
// nodes on one data source cannot be.
func (s *Session) lockList(st *ast.LockTablesStmt, aliases []string) (map[string][]string, error) {
	rules := s.srv.rules
	byDS := map[string][]string{}
	alias := ""
	add := func(ds, table string, lock ast.TableLockType) {
		entry := quoteName(table)
		if alias != "" {
			entry += " AS " + quoteName(alias)
		}
		entry += " " + lockTypeSQL(lock)
		if !slices.Contains(byDS[ds], entry) {
			byDS[ds] = append(byDS[ds], entry)
		}
	}
	seen := map[string]bool{}
	for i, tl := range st.TableLocks {
		name := tl.Table.Name.O
		alias = ""
		if i < len(aliases) {
			alias = aliases[i]
		}
		key := strings.ToLower(name)
		if alias != "" {
			key = strings.ToLower(alias)
		}
		if seen[key] {
			return nil, mysql.NewDefaultError(mysql.ER_NONUNIQ_TABLE, cmp.Or(alias, name))
		}
		seen[key] = true
		if tr := rules.Table(name); alias != "" && tr != nil {
			perDS := map[string]int{}
			for _, n := range tr.DataNodes {
				if perDS[n.DataSource]++; perDS[n.DataSource] > 1 {
					return nil, &NotSupportedError{What: "LOCK TABLES " + name + " AS " + alias + ": the table has several data nodes on data source " + n.DataSource + ", which cannot share one alias (lock it without one)"}
				}
			}
		}
		if schema := tl.Table.Schema.O; schema != "" && !strings.EqualFold(schema, rules.DatabaseName) {
			return nil, &NotSupportedError{What: "LOCK TABLES of a table outside the logical schema " + rules.DatabaseName}
		}
		if s.db == "" && tl.Table.Schema.O == "" {
			return nil, ErrNoDatabase
		}
		switch {
		case tl.Type == ast.TableLockNone:
			return nil, &NotSupportedError{What: "LOCK TABLES without a lock type"}
		case rules.Table(name) != nil:
			for _, n := range rules.Table(name).DataNodes {
				add(n.DataSource, n.Table, tl.Type)
			}
		case rules.IsBroadcast(name):
			for _, ds := range rules.DataSources {
				add(ds.Name, name, tl.Type)
			}
		default:
			add(rules.DefaultDataSource, name, tl.Type)
		}
	}
	return byDS, nil
}

// lockTypeSQL is a lock type as MariaDB reads it (TiDB's own, READ ONLY
// and WRITE LOCAL, as written: MariaDB refuses them).
func lockTypeSQL(t ast.TableLockType) string {
	return t.String()
}

func quoteName(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// holdsTableLocks reports whether bc is the session's pinned connection
// that holds its LOCK TABLES locks on bc's data source.
func (s *Session) holdsTableLocks(bc *backendConn) bool {
	return bc.pinned && s.state.tableLocks[bc.pool.name] && s.state.pinned[bc.pool.name] == bc
}

// beginSQL is how the guard starts a statement's backend transaction on
// bc: START TRANSACTION would release LOCK TABLES locks, so a connection
// that holds them has autocommit turned off instead (endLocked turns it
// back on).
func (g *stmtGuard) beginSQL(bc *backendConn, sql string) string {
	if !g.inTxn && g.s.holdsTableLocks(bc) {
		return "SET autocommit = 0"
	}
	return sql
}

// endLocked turns autocommit back on where beginSQL turned it off, once
// the statement committed or rolled back.
func (g *stmtGuard) endLocked() {
	if g.inTxn {
		return
	}
	for _, bc := range g.conns {
		if !bc.broken && g.s.holdsTableLocks(bc) {
			if _, err := bc.exec("SET autocommit = 1"); err != nil {
				bc.broken = true
			}
		}
	}
}

// lockedPlan is plan as it runs while the session holds table locks: on
// the data sources that hold them, each route names its physical tables
// by their own names, `t_order_1` instead of `t_order_1` AS `t_order`,
// and columns qualified by the logical name are qualified by the
// physical one. The plan is shared (cached), so a changed one is a copy.
// A route to a data source where the session locked nothing gets 1100.
func (s *Session) lockedPlan(plan *router.Plan) (*router.Plan, error) {
	if len(s.state.tableLocks) == 0 {
		return plan, nil
	}
	out := plan
	for i, r := range plan.Routes {
		if !s.state.tableLocks[r.DataSource] {
			if len(r.Nodes) > 0 {
				// No table of that data source is locked, so neither is
				// this one: MariaDB's answer, whichever data node.
				name := s.srv.physicalTable[r.Nodes[0].Table]
				if name == "" {
					name = r.Nodes[0].Table
				}
				return nil, mysql.NewDefaultError(mysql.ER_TABLE_NOT_LOCKED, name)
			}
			continue
		}
		sql := r.SQL
		for _, n := range r.Nodes {
			logical := s.srv.physicalTable[n.Table]
			if logical == "" || strings.EqualFold(logical, n.Table) {
				continue
			}
			physical := quoteName(n.Table)
			sql = strings.ReplaceAll(sql, physical+" AS "+quoteName(logical), physical)
			sql = strings.ReplaceAll(sql, quoteName(logical)+".", physical+".")
		}
		if sql == r.SQL {
			continue
		}
		if out == plan {
			cp := *plan
			cp.Routes = slices.Clone(plan.Routes)
			out = &cp
		}
		out.Routes[i].SQL = sql
	}
	return out, nil
}

// afterLockedStatement ends the client connection after a statement in
// which a connection holding the session's table locks broke: the locks
// are gone with it, and a client that went on would believe it still
// held them (writes it thinks exclusive, a dump it thinks consistent).
// This is what one MariaDB whose connection drops looks like; the
// statement's own error says what was lost.
func (s *Session) afterLockedStatement(err error) {
	if err == nil || len(s.state.tableLocks) == 0 {
		return
	}
	for ds := range s.state.tableLocks {
		if bc := s.state.pinned[ds]; bc == nil || bc.broken {
			s.log.Info("a connection holding LOCK TABLES locks was lost; closing the client connection", "datasource", ds, "err", errLine(err))
			s.quit = true
			return
		}
	}
}

// lockAliases reads the aliases of a LOCK TABLES statement's tables
// (LOCK TABLES t AS a READ, t2 b WRITE), which the TiDB parser does not
// know: plain is the statement without them, for the parser, and
// aliases[i] is the alias of its i-th table ("" for none); ok is false
// when no table has one.
func lockAliases(sql string) (plain string, aliases []string, ok bool) {
	sc := sqllex.NewScanner(sql, sqllex.Backslash)
	next := func() (sqllex.Token, bool) {
		for {
			t, more := sc.Next()
			if !more || (t.Kind != sqllex.Space && !t.Kind.Comment()) {
				return t, more
			}
		}
	}
	isWord := func(t sqllex.Token, w string) bool {
		return t.Kind == sqllex.Word && strings.EqualFold(t.Text(sql), w)
	}
	name := func(t sqllex.Token) bool { return t.Kind == sqllex.Word || t.Kind == sqllex.QuotedName }
	if t, _ := next(); !isWord(t, "LOCK") {
		return "", nil, false
	}
	if t, _ := next(); !isWord(t, "TABLES") && !isWord(t, "TABLE") {
		return "", nil, false
	}
	var b strings.Builder
	last := 0
	for {
		t, more := next()
		if !more || !name(t) {
			break
		}
		if t, _ = next(); t.Kind == sqllex.Punct && t.Text(sql) == "." {
			if t, _ = next(); !name(t) {
				break
			}
			t, _ = next()
		}
		alias := ""
		if start := t.Start; isWord(t, "AS") || name(t) && !isWord(t, "READ") && !isWord(t, "WRITE") && !isWord(t, "LOW_PRIORITY") {
			if isWord(t, "AS") {
				if t, _ = next(); !name(t) {
					break
				}
			}
			alias = t.Text(sql)
			if t.Kind == sqllex.QuotedName {
				alias = sqllex.Unquote(sql, t, sqllex.Backslash)
			}
			b.WriteString(sql[last:start])
			last = t.End
			ok = true
			t, _ = next()
		}
		aliases = append(aliases, alias)
		for t.Kind != 0 && !(t.Kind == sqllex.Punct && t.Text(sql) == ",") {
			if t, more = next(); !more {
				break
			}
		}
		if t.Kind == 0 || t.Text(sql) != "," {
			break
		}
	}
	if !ok {
		return "", nil, false
	}
	b.WriteString(sql[last:])
	return b.String(), aliases, true
}
