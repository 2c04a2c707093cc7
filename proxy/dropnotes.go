package proxy

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/router"
)

// A DROP TABLE of several tables runs as one DROP per data source listing
// its physical tables (router.Plan.Drop). MariaDB answers a DROP of tables
// that do not exist with one note 1051 (IF EXISTS) or one error 1051 that
// names each missing table once; a data source names each missing
// physical table, so a sharded table that does not exist came back once
// per physical table, and cut at MariaDB's limit before the list was
// done. Which logical tables had no physical table at all cannot be read
// from those cut messages, so the proxy asks each data source which of
// the physical tables exist just before the DROP, and afterwards tells
// the client one 1051 naming those tables instead of the data sources'.
// A table created or dropped by another session between the two only
// changes what the note says, never what the DROP does.

// unknownTables are the tables of a DROP none of whose data nodes
// existed before it, as MariaDB's 1051 names them, in the client's order.
type unknownTables struct{ names []string }

// lookupDropped asks the data sources of plan, a DROP TABLE of several
// tables, which of its physical tables exist. It returns nil, leaving the
// data sources' own notes and errors as they are, when there is nothing
// to correct (one data source, one data node per table: its message
// names each table once), while the session holds temporary tables
// (information_schema does not list them, and a DROP may drop them), or
// when the lookup fails (the DROP reports the trouble).
func (s *Session) lookupDropped(ctx context.Context, plan *router.Plan) *unknownTables {
	if plan.Drop == nil || len(s.state.tempTables) > 0 {
		return nil
	}
	many := len(plan.Routes) > 1
	for _, d := range *plan.Drop {
		many = many || len(d.Nodes) > 1
	}
	if !many {
		return nil
	}
	// One query per data source, for the physical tables the DROP names
	// there; each row says which data source it came from by the index
	// of its route.
	var sources []string
	tables := map[string][]string{}
	for _, d := range *plan.Drop {
		for _, n := range d.Nodes {
			if _, ok := tables[n.DataSource]; !ok {
				sources = append(sources, n.DataSource)
			}
			tables[n.DataSource] = append(tables[n.DataSource], n.Table)
		}
	}
	lookup := &router.Plan{Kind: router.KindSelect, Type: router.RouteMulti}
	for i, ds := range sources {
		names := make([]string, len(tables[ds]))
		for j, t := range tables[ds] {
			names[j] = utf8Literal(t)
		}
		lookup.Routes = append(lookup.Routes, router.Route{DataSource: ds, SQL: fmt.Sprintf(
			"SELECT %d, TABLE_NAME, @@lower_case_table_names FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (%s)",
			i, strings.Join(names, ", "))})
	}
	if len(lookup.Routes) == 1 {
		lookup.Type = router.RouteSingle
	}
	res, err := runPlan(ctx, lookup, poolSource{s}, ConcatMerger{}, 0, s.srv.obs)
	if err != nil || res.rows == nil {
		return nil
	}
	rows, err := drain(res.rows)
	if err != nil {
		return nil
	}
	// The column compares names without regard to case: a data source's
	// lower_case_table_names says whether its DROP does too.
	type node struct{ ds, table string }
	exists := map[node]bool{}
	folds := map[string]bool{}
	for _, r := range rows {
		if len(r) != 3 {
			return nil
		}
		i, err := strconv.Atoi(string(r[0]))
		if err != nil || i < 0 || i >= len(sources) {
			return nil
		}
		folds[sources[i]] = string(r[2]) != "0"
		exists[node{sources[i], foldName(string(r[1]), folds[sources[i]])}] = true
	}
	u := &unknownTables{}
	for _, d := range *plan.Drop {
		found := false
		for _, n := range d.Nodes {
			found = found || exists[node{n.DataSource, foldName(n.Table, folds[n.DataSource])}]
		}
		if !found {
			u.names = append(u.names, d.Name)
		}
	}
	return u
}

// foldName is a table name as a server that compares them without
// regard to case (fold) compares it.
func foldName(name string, fold bool) string {
	if fold {
		return strings.ToLower(name)
	}
	return name
}

// utf8Literal is s as a utf8mb4 string literal that reads the same
// whatever the session's sql_mode (NO_BACKSLASH_ESCAPES) and that takes
// the collation of the column it is compared with.
func utf8Literal(s string) string {
	return "_utf8mb4 X'" + hex.EncodeToString([]byte(s)) + "'"
}

// badTableMessage is MariaDB's ER_BAD_TABLE_ERROR for tables names:
// "Unknown table '%-.100T'", the list cut at 100 bytes (on a character
// boundary) and ended with "..." when longer.
func badTableMessage(names []string) string {
	const most = 100
	list := strings.Join(names, ",")
	if len(list) > most {
		cut := most - 3
		for cut > 0 && !utf8.RuneStart(list[cut]) {
			cut--
		}
		list = list[:cut] + "..."
	}
	return "Unknown table '" + list + "'"
}

// error is the DROP's error err as MariaDB would give it: when every data
// source that failed did so only because tables were missing (1051), one
// 1051 naming the missing logical tables. Other errors stay.
func (u *unknownTables) error(err error) error {
	if u == nil || err == nil || len(u.names) == 0 {
		return err
	}
	var ddl *DDLError
	if errors.As(err, &ddl) {
		if len(ddl.NotRun) > 0 {
			return err
		}
		for _, f := range ddl.Failed {
			if mysqlError(f.Err).Code != mysql.ER_BAD_TABLE_ERROR {
				return err
			}
		}
	} else if my := (*mysql.MyError)(nil); !errors.As(err, &my) || my.Code != mysql.ER_BAD_TABLE_ERROR {
		return err
	}
	return &mysql.MyError{Code: mysql.ER_BAD_TABLE_ERROR, State: "42S02", Message: badTableMessage(u.names)}
}

// notes puts, in d, one note 1051 naming the missing tables where the
// data sources' 1051 notes were (none when no table was missing), and
// returns the statement's warning count.
func (u *unknownTables) notes(d *diagnostics) uint16 {
	d.mu.Lock()
	kept := d.warnings[:0]
	placed := false
	for _, w := range d.warnings {
		if len(w) == 3 && string(w[1]) == strconv.Itoa(mysql.ER_BAD_TABLE_ERROR) {
			if !placed && len(u.names) > 0 {
				kept = append(kept, rowOf(string(w[0]), uint64(mysql.ER_BAD_TABLE_ERROR), badTableMessage(u.names)))
			}
			placed = true
			continue
		}
		kept = append(kept, w)
	}
	d.warnings = kept
	d.mu.Unlock()
	return d.statementWarnings()
}
