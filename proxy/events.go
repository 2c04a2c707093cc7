package proxy

import (
	"context"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Events, which MariaDB's event scheduler runs, are made on the data
// sources by their operator: the parser reads no CREATE EVENT, so none is
// made through the proxy. The logical schema's events are the default
// data source's, in its database, where the logical schema's unsharded
// tables and stored routines live (routines.go): SHOW EVENTS lists them
// under the logical schema's name and SHOW CREATE EVENT shows one, or
// answers MariaDB's 1539 Unknown event. Another schema has none (MariaDB
// answers so for a schema that does not exist, and the data sources' own
// databases are not the client's to see); information_schema has none.

// unknownEvent is MariaDB's answer for an event that does not exist.
func unknownEvent(name string) error {
	return &mysql.MyError{Code: mysql.ER_EVENT_DOES_NOT_EXIST, State: "HY000", Message: "Unknown event '" + name + "'"}
}

// classifyShowCreateEvent classifies SHOW CREATE EVENT [schema.]name,
// which the parser does not read: the default data source's statement for
// an event of the logical schema, else 1539.
func (s *Session) classifyShowCreateEvent(st *statement, schema, name string) error {
	if schema == "" {
		if s.db == "" {
			return ErrNoDatabase
		}
		schema = s.db
	}
	if schema != s.srv.rules.DatabaseName {
		return unknownEvent(name)
	}
	st.sql, st.kind, st.whole = "SHOW CREATE EVENT "+string(appendIdent(nil, name)), planDataSource, false
	return nil
}

// showEvents answers SHOW EVENTS [FROM schema] [LIKE | WHERE]: the
// default data source's events, its database named as the logical schema.
func (s *Session) showEvents(ctx context.Context, st *ast.ShowStmt, out output) error {
	schema, err := s.schema(st.DBName)
	if err != nil && st.DBName == "" {
		return err // 1046: MariaDB wants a schema too
	}
	rules := s.srv.rules
	res, qerr := s.queryResult(ctx, rules.DefaultDataSource, "SHOW EVENTS")
	if qerr != nil {
		return qerr
	}
	var rows []Row
	if err == nil && schema == rules.DatabaseName {
		db := rules.DataSource(rules.DefaultDataSource).Database
		for _, r := range res.rows {
			if len(r) < 2 || string(r[0]) != db {
				continue
			}
			ok, err := matchPattern(st.Pattern, string(r[1]))
			if err != nil {
				return err
			}
			if ok {
				r[0] = []byte(schema)
				rows = append(rows, r)
			}
		}
	}
	return s.writeRowsWhere(ctx, res.columns, rows, st.Where, out)
}
