package proxy

import (
	"context"
	"regexp"
	"strings"

	"github.com/shardflake/shardflake/internal/sqllex"
	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/router"
)

// Stored functions and triggers, which the SQL parser does not read, and
// procedures whose bodies it cannot read (SIGNAL, DO; the others it reads
// and query.go sends them to the default data source). They are recognised by their first words and pass
// through unchanged, BEGIN ... END bodies with their semicolons included:
// a function, a procedure, or a trigger on an unsharded table, to the default data
// source where unsharded tables live; a trigger on a broadcast table to
// every data source, as the table's writes go. A trigger on a sharded
// table is refused (1235): it would need one trigger per physical table.
// They run with the backend account's rights (their DEFINER), so they
// need otherSchemas, as CALL does.

// routineKind is what routineOf recognised.
type routineKind int

const (
	routineFunction  routineKind = iota + 1
	routineProcedure             // one the parser cannot read (SIGNAL, DO in its body)
	routineCreateTrigger
	routineDropTrigger
)

var (
	routineHead  = regexp.MustCompile(`(?is)^\s*(?:CREATE\s+(?:OR\s+REPLACE\s+)?(?:DEFINER\s*=\s*(?:CURRENT_USER(?:\s*\(\s*\))?|\S+)\s+)?(?:AGGREGATE\s+)?(FUNCTION|TRIGGER|PROCEDURE)|DROP\s+(FUNCTION|TRIGGER|PROCEDURE))\s`)
	triggerTable = regexp.MustCompile("(?is)\\sON\\s+(?:`([^`]+)`|([\\w$]+))(?:\\s*\\.\\s*(?:`([^`]+)`|([\\w$]+)))?\\s+FOR\\s+EACH\\s+ROW\\b")
	dropTrigger  = regexp.MustCompile("(?is)^\\s*DROP\\s+TRIGGER\\s+(?:IF\\s+EXISTS\\s+)?(?:(?:`[^`]+`|[\\w$]+)\\s*\\.\\s*)?(?:`([^`]+)`|([\\w$]+))")
)

// routineOf recognises CREATE/DROP FUNCTION, PROCEDURE and TRIGGER
// statements; create says the statement is a CREATE, whose body may hold
// semicolons of its own.
func routineOf(sql string) (kind routineKind, create, ok bool) {
	kind, ok = routineKindOf(sql)
	create = ok && !strings.EqualFold(strings.Fields(sqllex.ExecutableText(sql, sqllex.Backslash))[0], "DROP")
	return kind, create, ok
}

func routineKindOf(sql string) (routineKind, bool) {
	text := sqllex.ExecutableText(sql, sqllex.Backslash)
	m := routineHead.FindStringSubmatch(text + " ")
	if m == nil {
		return 0, false
	}
	switch {
	case strings.EqualFold(m[1], "FUNCTION") || strings.EqualFold(m[2], "FUNCTION"):
		return routineFunction, true
	case strings.EqualFold(m[1], "PROCEDURE") || strings.EqualFold(m[2], "PROCEDURE"):
		return routineProcedure, true
	case strings.EqualFold(m[1], "TRIGGER"):
		return routineCreateTrigger, true
	}
	return routineDropTrigger, true
}

// routinePlan plans a stored function or trigger statement where it
// belongs.
func (s *Session) routinePlan(ctx context.Context, kind routineKind, sql string) (*router.Plan, error) {
	p := s.privileges()
	if p.ReadOnly || !p.OtherSchemas {
		if kind == routineProcedure {
			return nil, dbDenied(s.user, s.db) // as for the procedures the parser reads (authz.go)
		}
		if kind == routineFunction {
			return nil, privilegeNeeded("CREATE ROUTINE")
		}
		return nil, privilegeNeeded("TRIGGER")
	}
	rules := s.srv.rules
	// The data sources know their own databases, not the logical one.
	sql = withoutSchema(sql, rules.DatabaseName, s.lexMode())
	text := sqllex.ExecutableText(sql, sqllex.Backslash)
	everywhere := false
	switch kind {
	case routineCreateTrigger:
		m := triggerTable.FindStringSubmatch(text)
		if m == nil {
			return nil, &NotSupportedError{What: "a CREATE TRIGGER whose table the proxy cannot find"}
		}
		schema, table := m[1]+m[2], m[3]+m[4]
		if table == "" {
			schema, table = "", schema
		}
		if schema != "" && schema != rules.DatabaseName {
			return nil, &UnknownDatabaseError{Name: schema}
		}
		switch {
		case rules.Table(table) != nil:
			return nil, &NotSupportedError{What: "CREATE TRIGGER on sharded table " + table + " (it would need one trigger per physical table); put the logic in the application or on an unsharded table"}
		case rules.IsBroadcast(strings.ToLower(table)):
			everywhere = true
		}
	case routineDropTrigger:
		// A trigger of a broadcast table is on every data source.
		m := dropTrigger.FindStringSubmatch(text)
		if m == nil {
			break
		}
		lit, _ := sqlarg.AppendLiteral(nil, m[1]+m[2], sqlarg.Backslash)
		rows, err := s.queryRows(ctx, rules.DefaultDataSource, "SELECT EVENT_OBJECT_TABLE FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME = "+string(lit))
		if err != nil {
			return nil, err
		}
		everywhere = len(rows) == 1 && rules.IsBroadcast(strings.ToLower(string(rows[0][0])))
	}
	if !everywhere {
		return s.srv.dataSourcePlan("", sql, router.KindDDL), nil
	}
	plan := &router.Plan{Kind: router.KindDDL, Type: router.RouteAll}
	for _, ds := range rules.DataSources {
		plan.Routes = append(plan.Routes, router.Route{DataSource: ds.Name, SQL: sql})
	}
	return plan, nil
}

// withoutSchema is sql with every name qualified by schema unqualified
// (`sharding_db`.`t_plain` and sharding_db.t_plain become `t_plain` and
// t_plain), in executable comments too; strings and other comments stay
// as they are. pt-online-schema-change qualifies every table of its
// triggers so.
func withoutSchema(sql, schema string, mode sqllex.Mode) string {
	var b strings.Builder
	last := 0
	sc := sqllex.NewScanner(sql, mode)
	for {
		t, more := sc.Next()
		if !more {
			break
		}
		switch t.Kind {
		case sqllex.Executable:
			body := t.Body(sql)
			start := t.End - len(body)
			if !t.Unterminated {
				start -= 2
			}
			if inner := withoutSchema(body, schema, mode); inner != body {
				b.WriteString(sql[last:start])
				b.WriteString(inner)
				last = start + len(body)
			}
		case sqllex.Word, sqllex.QuotedName:
			name := t.Text(sql)
			if t.Kind == sqllex.QuotedName {
				name = sqllex.Unquote(sql, t, mode)
			}
			if name != schema || t.End >= len(sql) || sql[t.End] != '.' {
				continue
			}
			b.WriteString(sql[last:t.Start])
			sc.Next() // the dot
			last = t.End + 1
		}
	}
	if last == 0 {
		return sql
	}
	b.WriteString(sql[last:])
	return b.String()
}
