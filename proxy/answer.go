package proxy

import (
	"context"
	"crypto/tls"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

// answerLocal answers a planLocal statement from what the proxy knows, or
// returns the plan that answers it instead: a statement rewritten for the
// default data source, or left to the data source its DATA_SOURCE_NAME
// hint names.
func (s *Session) answerLocal(ctx context.Context, st *statement) (*router.Plan, error) {
	if st.maintenance != nil {
		return nil, s.answerMaintenance(ctx, st.maintenance, st.sql, st.out)
	}
	switch n := st.node.(type) {
	case *ast.ShowStmt:
		if n.Tp == ast.ShowVariables {
			// mariadb-admin variables names the server mariadb-admin
			// version names.
			st.out.variables = map[string]string{"version": s.srv.version(), "version_comment": versionComment}
			if !n.GlobalScope {
				st.out.variables["unique_checks"] = onOff(!s.uniqueChecksOff)
			}
		}
		if n.Tp == ast.ShowStatus && !n.GlobalScope {
			// The default data source's session is not the client's:
			// a client checks its own connection's encryption here.
			st.out.variables = s.clientTLSStatus()
		}
		return s.handleShow(ctx, n, st.sql, &st.out)
	case *ast.ExplainStmt:
		if show, ok := n.Stmt.(*ast.ShowStmt); ok {
			// DESCRIBE t and EXPLAIN t are SHOW COLUMNS.
			return s.handleShow(ctx, show, st.sql, &st.out)
		}
		return nil, s.explain(ctx, n, st.sql, st.out) // explain.go
	case *ast.CreateDatabaseStmt:
		// Only of the logical schema (classifyNode), which exists. It
		// commits an open transaction first, as MariaDB's does even
		// when it then fails.
		if err := s.implicitCommit(); err != nil {
			return nil, err
		}
		msg := fmt.Sprintf("Can't create database '%s'; database exists", n.Name.O)
		if n.IfNotExists {
			s.diag.add([]Row{rowOf("Note", uint64(mysql.ER_DB_CREATE_EXISTS), msg)})
			return nil, s.writeOK(wire.OK{Warnings: 1}, st.out.more)
		}
		return nil, mysql.NewError(mysql.ER_DB_CREATE_EXISTS, msg)
	}
	// A SELECT without tables or of information_schema: the router never
	// sees these, so their DATA_SOURCE_NAME hint is honoured (and
	// checked) here.
	if ds, err := router.DataSourceHint(s.srv.rules, st.sql); err != nil || ds != "" {
		if err != nil {
			return nil, err
		}
		return withArgs(s.srv.dataSourcePlan(ds, st.sql, router.KindSelect), st), nil
	}
	if sel, ok := st.node.(*ast.SelectStmt); ok && schemaOf(sel) != infoSchema {
		plan, err := s.tablelessSelect(ctx, sel, st.sql, &st.out)
		if plan != nil {
			plan = withArgs(plan, st)
		}
		return plan, err
	}
	return s.infoSchemaSelect(ctx, st.node, &st.out)
}

// answerSession answers a planSession statement: one about the session's
// own state.
func (s *Session) answerSession(ctx context.Context, st *statement) error {
	more := st.out.more
	switch n := st.node.(type) {
	case *ast.UseStmt:
		if err := s.UseDB(n.DBName); err != nil {
			return err
		}
		s.schemaChanged, s.stateChanged = true, true
	case *ast.SetStmt:
		return s.handleSet(ctx, n, more)
	case *ast.PrepareStmt:
		return s.sqlPrepare(ctx, n, more)
	case *ast.DeallocateStmt:
		return s.sqlDeallocate(n, more)
	case *ast.BeginStmt:
		if err := s.beginTransaction(ctx, n, st.sql); err != nil {
			return err
		}
	case *ast.CommitStmt:
		return s.commit(more)
	case *ast.RollbackStmt:
		if n.SavepointName != "" {
			return s.handleRollbackTo(n.SavepointName, more)
		}
		if err := s.endTransaction(false); err != nil {
			return err
		}
	case *ast.LockTablesStmt:
		return s.handleLockTables(ctx, n, st.sql, more)
	case *ast.UnlockTablesStmt:
		return s.handleUnlockTables(more)
	case *ast.SavepointStmt:
		return s.handleSavepoint(n.Name, more)
	case *ast.ReleaseSavepointStmt:
		return s.handleReleaseSavepoint(n.Name, more)
	case *ast.KillStmt:
		if err := s.srv.killSession(s, n.ConnectionID, n.Query); err != nil {
			return err
		}
		if s.quit {
			return nil
		}
	default:
		return &InternalError{Msg: "session statement " + st.kind.String()}
	}
	return s.writeOK(wire.OK{}, more)
}

// commit answers COMMIT, with the warning of XA branches left to
// recovery.
func (s *Session) commit(more bool) error {
	s.commitInfo = ""
	if err := s.endTransaction(true); err != nil {
		return err
	}
	if s.commitInfo != "" {
		return s.writeOK(wire.OK{Warnings: 1, Info: s.commitInfo}, more)
	}
	return s.writeOK(wire.OK{}, more)
}

// callPlan plans a CALL: on the default data source, where stored
// procedures live, with a prepared CALL's arguments written in, so that
// every result set comes back (a backend prepared CALL would be read for
// its first one only); rows go to the client in its protocol.
func (srv sessionServer) callPlan(st *statement) (*router.Plan, error) {
	text, err := sqlarg.Interpolate(st.sql, st.args, sqlarg.Backslash)
	if err != nil {
		return nil, err
	}
	return srv.dataSourcePlan("", text, router.KindOther), nil
}

// clientTLSStatus is the session's Ssl_cipher and Ssl_version as MariaDB
// shows them: the TLS of the client's connection to the proxy, empty for
// a plain one (whatever the backend connection uses).
func (s *Session) clientTLSStatus() map[string]string {
	status := map[string]string{"ssl_cipher": "", "ssl_version": ""}
	if tc, ok := s.nc.(*tls.Conn); ok {
		cs := tc.ConnectionState()
		status["ssl_cipher"] = tls.CipherSuiteName(cs.CipherSuite)
		status["ssl_version"] = tlsVersionName(cs.Version)
	}
	return status
}

// tlsVersionName names a TLS version as OpenSSL and MariaDB do.
func tlsVersionName(v uint16) string {
	switch v {
	case tls.VersionTLS10:
		return "TLSv1"
	case tls.VersionTLS11:
		return "TLSv1.1"
	case tls.VersionTLS12:
		return "TLSv1.2"
	case tls.VersionTLS13:
		return "TLSv1.3"
	}
	return ""
}
