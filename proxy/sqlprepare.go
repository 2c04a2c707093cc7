package proxy

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/internal/sqllex"
	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// SQL-level prepared statements (PREPARE s FROM '...', EXECUTE s USING @a,
// DEALLOCATE PREPARE s), which the mariadb client and stored code use.
// The session keeps each statement's text; EXECUTE writes the user
// variables' values (evaluated as the session sees them) into its
// placeholders and runs the result as a text query, so it is routed by
// its values like any other statement.

// sqlPrepared is one PREPARE'd statement.
type sqlPrepared struct {
	sql    string
	params int
	// names are the names MariaDB gives the result columns of select
	// fields that hold a ? (paramNames), by output.names's positions.
	names map[int]string
}

// maxSQLPrepared bounds a session's SQL-level prepared statements, as
// max_prepared_stmt_count bounds a server's.
const maxSQLPrepared = 16382

// sqlPrepare answers PREPARE: the statement must parse (as on MySQL, a
// syntax error is reported here) and be one statement.
func (s *Session) sqlPrepare(ctx context.Context, st *ast.PrepareStmt, more bool) error {
	text := st.SQLText
	if st.SQLVar != nil {
		lit, err := s.userVarValue(ctx, st.SQLVar)
		if err != nil {
			return err
		}
		if lit == "NULL" {
			return &ParseError{Err: fmt.Errorf("the prepared statement's text (@%s) is NULL", st.SQLVar.Name)}
		}
		text, err = unquoteLiteral(lit)
		if err != nil {
			return err
		}
	}
	answer := wire.OK{Info: "Statement prepared"}
	var names map[int]string
	if _, _, into, isInto := s.parseSelectInto(text); isInto {
		answer.Warnings = s.warnIntoLast(into)
	} else {
		stmts, err := s.parse(text)
		if err != nil {
			return &ParseError{Err: err}
		}
		if len(stmts) != 1 {
			return &mysql.MyError{Code: 1295, State: "HY000", Message: "This command is not supported in the prepared statement protocol yet"}
		}
		names = paramNames(stmts[0])
	}
	name := strings.ToLower(st.Name)
	if s.prepared == nil {
		s.prepared = map[string]sqlPrepared{}
	}
	if _, ok := s.prepared[name]; !ok && len(s.prepared) >= maxSQLPrepared {
		return &mysql.MyError{Code: 1461, State: "42000", Message: fmt.Sprintf("Can't create more than max_prepared_stmt_count statements (current value: %d)", maxSQLPrepared)}
	}
	s.prepared[name] = sqlPrepared{sql: text, params: sqlarg.Count(text), names: names}
	s.stateChanged = true
	return s.writeOK(answer, more)
}

// paramNames returns, for a SELECT, the names of its select fields that
// hold a ? and no alias, by result column: from 0 before the first
// wildcard, from -1 (the last column) back after the last one (fields
// between two wildcards are left out: the proxy does not count the
// columns a wildcard stands for here). MariaDB names such a column by the
// prepared text, ?s and all (? + 1), where EXECUTE runs the text with the
// values written in (5 + 1); the session renames them back.
func paramNames(stmt ast.StmtNode) map[int]string {
	// A set operation's columns are named by its first SELECT.
	sel := firstSelect(stmt)
	if sel == nil || sel.Fields == nil {
		return nil
	}
	fields := sel.Fields.Fields
	first, last := len(fields), -1
	for i, f := range fields {
		if f.WildCard != nil {
			first, last = min(first, i), i
		}
	}
	var names map[int]string
	for i, f := range fields {
		var at int
		switch {
		case i < first:
			at = i
		case i > last:
			at = i - len(fields)
		default:
			continue
		}
		if f.AsName.L != "" || f.Expr == nil {
			continue
		}
		params := &paramCounter{}
		f.Expr.Accept(params)
		if params.n == 0 {
			continue
		}
		if names == nil {
			names = map[int]string{}
		}
		names[at] = fieldName(f)
	}
	return names
}

// sqlDeallocate answers DEALLOCATE PREPARE and DROP PREPARE.
func (s *Session) sqlDeallocate(st *ast.DeallocateStmt, more bool) error {
	name := strings.ToLower(st.Name)
	if _, ok := s.prepared[name]; !ok {
		return unknownPrepared(st.Name, "DEALLOCATE PREPARE")
	}
	delete(s.prepared, name)
	s.stateChanged = true
	return s.writeOK(wire.OK{}, more)
}

func unknownPrepared(name, to string) error {
	return &mysql.MyError{Code: mysql.ER_UNKNOWN_STMT_HANDLER, State: "HY000", Message: fmt.Sprintf("Unknown prepared statement handler (%s) given to %s", name, to)}
}

// unquoteLiteral reads back a string literal userVarValue wrote
// ('...' with backslash escapes); a number is its own text.
func unquoteLiteral(lit string) (string, error) {
	if strings.HasPrefix(lit, "X'") || strings.HasPrefix(lit, "x'") {
		return "", &ParseError{Err: fmt.Errorf("the prepared statement's text is binary")}
	}
	if lit == "" || lit[0] != '\'' {
		return lit, nil
	}
	t := sqllex.At(lit, 0, sqllex.Backslash)
	if t.Unterminated || t.End != len(lit) {
		return lit, nil
	}
	return sqllex.Unquote(lit, t, sqllex.Backslash), nil
}
