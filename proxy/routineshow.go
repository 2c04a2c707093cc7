package proxy

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/shardflake/shardflake/internal/sqllex"
	"github.com/shardflake/shardflake/router"
)

// The SHOW statements about the logical schema's stored routines and
// triggers, which live on the default data source (routines.go), answered
// as one MariaDB holding them answers: mysqldump --routines asks SHOW
// PROCEDURE/FUNCTION/PACKAGE [BODY] STATUS WHERE Db = 'sharding_db', SHOW
// CREATE FUNCTION and SHOW CREATE TRIGGER. SHOW ... STATUS reads information_schema.ROUTINES,
// which describes the logical schema (infoschema.go), so it lists the
// logical schema's routines under its name, never the data sources'
// other databases'.

var (
	// routineStatusHead recognises SHOW PACKAGE [BODY] STATUS, which the
	// parser does not read (and the PROCEDURE and FUNCTION forms, which
	// it does).
	routineStatusHead = regexp.MustCompile(`(?is)^SHOW\s+(PROCEDURE|FUNCTION|PACKAGE\s+BODY|PACKAGE)\s+STATUS(?:\s+(LIKE|WHERE)\s+(.+?))?[\s;]*$`)
	// showCreateRoutine recognises SHOW CREATE TRIGGER, SHOW CREATE
	// FUNCTION and SHOW CREATE EVENT [schema.]name, which the parser does
	// not read.
	showCreateRoutine = regexp.MustCompile("(?is)^SHOW\\s+CREATE\\s+(TRIGGER|FUNCTION|EVENT)\\s+(?:(?:`([^`]+)`|([\\w$]+))\\s*\\.\\s*)?(?:`([^`]+)`|([\\w$]+))[\\s;]*$")
)

// classifyRoutineShow classifies the SHOW statements about routines,
// triggers and events that the parser refused; it reports false for any other text.
func (s *Session) classifyRoutineShow(st *statement) (bool, error) {
	i, _ := sqllex.SkipSpace(st.sql, 0, sqllex.Backslash)
	text := st.sql[i:]
	if m := routineStatusHead.FindStringSubmatch(text); m != nil {
		var like, where string
		if strings.EqualFold(m[2], "LIKE") {
			like = m[3]
		} else {
			where = m[3]
		}
		sql := routineStatusSQL(strings.ToUpper(strings.Join(strings.Fields(m[1]), " ")), like, where)
		stmts, err := s.parse(sql)
		if err == nil && len(stmts) != 1 {
			err = errors.New("not one statement")
		}
		if err != nil {
			return true, &ParseError{Err: err}
		}
		st.sql, st.node, st.whole = sql, stmts[0], false
		return true, s.classifyNode(st)
	}
	if m := showCreateRoutine.FindStringSubmatch(text); m != nil {
		schema, name := m[2]+m[3], m[4]+m[5]
		if strings.EqualFold(m[1], "EVENT") {
			return true, s.classifyShowCreateEvent(st, schema, name) // events.go
		}
		if schema != "" {
			if _, err := s.schema(schema); err != nil {
				return true, err
			}
		}
		// The default data source's, in its database (a trigger of a
		// broadcast table: the copy there).
		st.sql, st.kind, st.whole = "SHOW CREATE "+strings.ToUpper(m[1])+" "+string(appendIdent(nil, name)), planDataSource, false
		return true, nil
	}
	return false, nil
}

// routineStatus answers SHOW PROCEDURE STATUS and SHOW FUNCTION STATUS.
func (s *Session) routineStatus(ctx context.Context, st *ast.ShowStmt, out *output) (*router.Plan, error) {
	kind := "PROCEDURE"
	if st.Tp == ast.ShowFunctionStatus {
		kind = "FUNCTION"
	}
	var like, where string
	var err error
	if st.Pattern != nil {
		like, err = restoreCondition(st.Pattern.Pattern)
	} else if st.Where != nil {
		where, err = restoreCondition(st.Where)
	}
	if err != nil {
		return nil, err
	}
	sql := routineStatusSQL(kind, like, where)
	stmts, err := s.parse(sql)
	if err != nil || len(stmts) != 1 {
		return nil, &InternalError{Msg: "parse SHOW " + kind + " STATUS as a SELECT: " + errLine(err)}
	}
	return s.infoSchemaSelect(ctx, stmts[0], out)
}

// routineStatusSQL is SHOW <kind> STATUS [LIKE like | WHERE where] as the
// SELECT of information_schema.ROUTINES that MariaDB answers it with: its
// columns, names matched by LIKE, the WHERE over the SHOW's column names.
func routineStatusSQL(kind, like, where string) string {
	var b strings.Builder
	b.WriteString("SELECT ROUTINE_SCHEMA AS `Db`, ROUTINE_NAME AS `Name`, ROUTINE_TYPE AS `Type`, DEFINER AS `Definer`, " +
		"LAST_ALTERED AS `Modified`, CREATED AS `Created`, SECURITY_TYPE AS `Security_type`, ROUTINE_COMMENT AS `Comment`, " +
		"CHARACTER_SET_CLIENT AS `character_set_client`, COLLATION_CONNECTION AS `collation_connection`, " +
		"DATABASE_COLLATION AS `Database Collation` FROM information_schema.ROUTINES WHERE ROUTINE_TYPE = '" + kind + "'")
	if like != "" {
		b.WriteString(" AND ROUTINE_NAME LIKE " + like)
	}
	if where != "" {
		// HAVING: the condition names the SHOW's columns, the aliases.
		b.WriteString(" HAVING " + where)
	}
	b.WriteString(" ORDER BY `Db`, `Name`")
	return b.String()
}

// showTriggers plans SHOW TRIGGERS [FROM schema]: the default data
// source's triggers, of its database.
func (s *Session) showTriggers(st *ast.ShowStmt) (*router.Plan, error) {
	if st.DBName != "" {
		if _, err := s.schema(st.DBName); err != nil {
			return nil, err
		}
	}
	own := *st
	own.DBName = ""
	var b strings.Builder
	if err := own.Restore(format.NewRestoreCtx(restoreFlags, &b)); err != nil {
		return nil, &InternalError{Msg: "restore SHOW TRIGGERS: " + err.Error()}
	}
	return s.srv.dataSourcePlan("", b.String(), router.KindOther), nil
}

// restoreCondition writes a SHOW's LIKE pattern or WHERE condition back
// as SQL.
func restoreCondition(n ast.Node) (string, error) {
	var b strings.Builder
	if err := n.Restore(format.NewRestoreCtx(restoreFlags, &b)); err != nil {
		return "", &InternalError{Msg: "restore SHOW condition: " + err.Error()}
	}
	return b.String(), nil
}
