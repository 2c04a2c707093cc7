package proxy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/shardflake/shardflake/router"
)

// USE information_schema, as DBeaver, mysqldump --no-data
// information_schema and some ORMs do. The schema in use is then
// information_schema, as in MariaDB (DATABASE() names it), and a table
// named without a schema is one of its tables:
//   - a SELECT, UNION or DO reads them with its names qualified, so it is
//     answered as the same statement naming information_schema is (the
//     logical schema's rows of TABLES, COLUMNS, ...; infoschema.go);
//   - SHOW TABLES, SHOW TABLE STATUS, SHOW COLUMNS, SHOW CREATE TABLE and
//     SHOW INDEX about information_schema (in use or named) are the
//     default data source's answer, which is every MariaDB's;
//   - a statement that would write or create there is refused with
//     MariaDB's 1044, and CALL of a procedure named without a schema with
//     its 1305: the data sources' own databases are never reached
//     through the schema in use.

// isInfoSchema reports whether name is information_schema, whose name
// MariaDB reads in any case.
func isInfoSchema(name string) bool { return strings.EqualFold(name, infoSchema) }

// classifyInInfoSchema prepares st, parsed while information_schema is
// the schema in use: its tables named without a schema are
// information_schema's, written so in its tree and its text, or it is
// refused.
func (s *Session) classifyInInfoSchema(st *statement) error {
	if s.db != infoSchema || st.node == nil {
		return nil
	}
	switch n := st.node.(type) {
	case *ast.ShowStmt, *ast.ExplainStmt, *ast.UseStmt:
		return nil // handleShow; USE names its schema
	case *ast.CallStmt:
		if n.Procedure != nil && n.Procedure.Schema.L == "" {
			return &mysql.MyError{Code: mysql.ER_SP_DOES_NOT_EXIST, State: "42000",
				Message: "PROCEDURE " + infoSchema + "." + n.Procedure.FnName.O + " does not exist"}
		}
		return nil
	case *ast.ProcedureInfo:
		if n.ProcedureName != nil && n.ProcedureName.Schema.L == "" {
			return dbDenied(s.user, infoSchema)
		}
	case *ast.DropProcedureStmt:
		if n.ProcedureName != nil && n.ProcedureName.Schema.L == "" {
			return dbDenied(s.user, infoSchema)
		}
	}
	q := &infoQualifier{ctes: map[string]bool{}}
	st.node.Accept(q)
	if len(q.bare) == 0 {
		return nil
	}
	switch st.node.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt, *ast.DoStmt:
	default:
		return dbDenied(s.user, infoSchema)
	}
	for _, tn := range q.bare {
		tn.Schema = ast.NewCIStr(infoSchema)
	}
	var b strings.Builder
	if err := st.node.Restore(format.NewRestoreCtx(restoreFlags, &b)); err != nil {
		return &InternalError{Msg: "restore a statement in information_schema: " + err.Error()}
	}
	st.sql = b.String()
	return nil
}

// infoQualifier finds the table names of a statement that name no schema
// and no common table expression.
type infoQualifier struct {
	ctes map[string]bool
	bare []*ast.TableName
}

func (q *infoQualifier) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.WithClause:
		for _, c := range x.CTEs {
			q.ctes[c.Name.L] = true
		}
	case *ast.TableName:
		if x.Schema.L == "" && !q.ctes[x.Name.L] {
			q.bare = append(q.bare, x)
		}
	}
	return n, false
}

func (q *infoQualifier) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// infoSchemaShow plans a SHOW about information_schema's tables (SHOW
// TABLES, TABLE STATUS, COLUMNS, CREATE TABLE, INDEX), naming it or while
// it is the schema in use: the default data source answers it, naming the
// schema. ok is false for any other SHOW.
func (s *Session) infoSchemaShow(st *ast.ShowStmt) (plan *router.Plan, ok bool, err error) {
	switch st.Tp {
	case ast.ShowTables, ast.ShowTableStatus:
		if !isInfoSchema(st.DBName) && (st.DBName != "" || s.db != infoSchema) {
			return nil, false, nil
		}
		st.DBName = infoSchema
	case ast.ShowColumns, ast.ShowCreateTable, ast.ShowIndex:
		if st.Table == nil {
			return nil, false, nil
		}
		schema := st.Table.Schema.O
		if schema == "" {
			schema = st.DBName
		}
		if !isInfoSchema(schema) && (schema != "" || s.db != infoSchema) {
			return nil, false, nil
		}
		st.DBName, st.Table.Schema = "", ast.NewCIStr(infoSchema)
	default:
		return nil, false, nil
	}
	var b strings.Builder
	if err := st.Restore(format.NewRestoreCtx(restoreFlags, &b)); err != nil {
		return nil, true, &InternalError{Msg: "restore a SHOW of information_schema: " + err.Error()}
	}
	return s.srv.dataSourcePlan("", b.String(), router.KindOther), true, nil
}

// unknownInfoTable is err, a refusal of the statement, unless it refused
// an information_schema table that does not exist: MariaDB answers 1109
// for that, whatever the user's privileges (information_schema is
// everyone's), so the default data source is asked whether it has the
// table. Its own failure leaves the refusal as it was.
func (s *Session) unknownInfoTable(ctx context.Context, err error) error {
	var pe *PrivilegeError
	if !errors.As(err, &pe) || pe.infoTable == "" {
		return err
	}
	res, qerr := s.queryResult(ctx, s.srv.rules.DefaultDataSource,
		"SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME = "+sqlString(pe.infoTable))
	if qerr != nil || len(res.rows) > 0 {
		return err
	}
	return mysql.NewError(mysql.ER_UNKNOWN_TABLE, fmt.Sprintf("Unknown table '%s' in information_schema", pe.infoTable))
}
