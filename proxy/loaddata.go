package proxy

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

// LOAD DATA LOCAL INFILE into an unsharded table: the statement runs
// unchanged on the default data source, and the proxy relays the file
// between the client and the data source packet by packet (bounded
// memory whatever the file's size): the data source's request for the
// file to the client, the client's file packets to the data source, and
// the data source's answer (affected rows and warnings, or its error)
// back. A client that goes away mid-file closes the data source's
// connection, so the statement is rolled back there rather than
// committed with part of the file. Sharded and broadcast tables:
// loaddata_sharded.go.

// errLocalInfileOff is MariaDB's answer when the client did not offer
// CLIENT_LOCAL_FILES.
var errLocalInfileOff = mysql.NewError(mysql.ER_NOT_ALLOWED_COMMAND, "The used command is not allowed with this MariaDB version")

// loadLocalPlan plans LOAD DATA LOCAL INFILE st (text sql): unchanged on
// the default data source, into one of its own tables.
func (s *Session) loadLocalPlan(st *ast.LoadDataStmt, sql string) (*router.Plan, error) {
	rules := s.srv.rules
	name := st.Table.Name.O
	if schema := st.Table.Schema.O; schema != "" && schema != rules.DatabaseName {
		return nil, &UnknownDatabaseError{Name: schema}
	}
	if s.srv.isPhysicalName(name) {
		return nil, mysql.NewDefaultError(mysql.ER_NO_SUCH_TABLE, rules.DatabaseName, name)
	}
	if s.clientFlags&mysql.CLIENT_LOCAL_FILES == 0 || s.wc == nil {
		return nil, errLocalInfileOff
	}
	if rule := rules.Table(name); rule != nil || rules.IsBroadcast(strings.ToLower(name)) {
		// Rows routed (loaddata_sharded.go): every data source of the
		// table may get some.
		plan := &router.Plan{Kind: router.KindInsert, Type: router.RouteBroadcast, Tables: []string{strings.ToLower(name)}}
		dss := rules.DataSourceNames()
		if rule != nil {
			plan.Type, dss = router.RouteAll, rule.DataSources()
		}
		for _, ds := range dss {
			plan.Routes = append(plan.Routes, router.Route{DataSource: ds, SQL: sql})
		}
		return plan, nil
	}
	if st.Table.Schema.O != "" {
		// The data source knows its own database, not the logical one.
		unqualified, err := loadSQLUnqualified(st)
		if err != nil {
			return nil, err
		}
		sql = unqualified
	}
	plan := s.srv.dataSourcePlan("", sql, router.KindInsert)
	plan.Tables = []string{strings.ToLower(name)}
	return plan, nil
}

// loadSQLUnqualified is LOAD DATA st restored with its table's schema
// dropped; st is left as it is.
func loadSQLUnqualified(st *ast.LoadDataStmt) (string, error) {
	c, tn := *st, *st.Table
	tn.Schema = ast.CIStr{}
	c.Table = &tn
	var b strings.Builder
	if err := c.Restore(format.NewRestoreCtx(restoreFlags, &b)); err != nil {
		return "", err
	}
	return b.String(), nil
}

// runLoadLocal is the execute stage of LOAD DATA LOCAL INFILE st
// (loadLocalPlan): it relays the client's file to the plan's one route,
// or routes its rows.
func (s *Session) runLoadLocal(ctx context.Context, st *ast.LoadDataStmt, plan *router.Plan, out output) error {
	if plan.Type != router.RouteSingle {
		return s.loadRouted(ctx, st, out.more) // loaddata_sharded.go
	}
	bc, sent, done, err := s.relay(ctx, plan.Routes[0])
	if err != nil {
		return err
	}
	defer done()
	p, err := bc.wc.ReadPacket()
	s.srv.obs.Route(RouteEvent{DataSource: plan.Routes[0].DataSource, Duration: time.Since(sent), Err: err})
	if err != nil {
		return cancelled(ctx, bc.lost(err))
	}
	more := out.more
	name, asked := wire.LocalInfileName(p)
	switch {
	case wire.IsErr(p):
		return wire.ParseErr(p)
	case wire.IsOK(p):
		ok, err := wire.ParseOK(p, false)
		if err != nil {
			return bc.lost(err)
		}
		bc.status = ok.Status
		return s.writeOK(ok, more)
	case !asked:
		return bc.lost(fmt.Errorf("%w: LOAD DATA LOCAL answered with 0x%x", wire.ErrMalformed, p))
	}
	if string(name) != st.Path {
		// Only the file the client named is asked of the client.
		if err := bc.wc.WritePacket(nil); err != nil {
			return bc.lost(err)
		}
		if err := bc.wc.Flush(); err != nil {
			return bc.lost(err)
		}
		bc.readHead()
		return &InternalError{Msg: fmt.Sprintf("data source %s asked for file %q, not the statement's", plan.Routes[0].DataSource, name)}
	}
	doneReading := s.watch.readClient()
	defer doneReading()
	if err := s.wc.WritePacket(p); err != nil {
		bc.broken = true
		return err
	}
	if err := s.wc.Flush(); err != nil {
		bc.broken = true
		return err
	}
	var sendErr error // the data source is lost: read the file to its end
	for {
		fp, err := s.wc.ReadPacket()
		if err != nil {
			// The client is gone mid-file: never let the data source
			// commit part of it.
			bc.broken = true
			s.quit = true
			return err
		}
		if len(fp) == 0 {
			break
		}
		if sendErr == nil {
			if err := bc.wc.WritePacket(fp); err != nil {
				sendErr = cancelled(ctx, bc.lost(err))
			}
		}
	}
	if sendErr != nil {
		// The client has sent its whole file, so its next packet is its
		// next command again.
		return sendErr
	}
	if err := bc.wc.WritePacket(nil); err != nil {
		return cancelled(ctx, bc.lost(err))
	}
	if err := bc.wc.Flush(); err != nil {
		return cancelled(ctx, bc.lost(err))
	}
	h, err := bc.readHead()
	if err != nil {
		return cancelled(ctx, err)
	}
	return s.writeOK(h.ok, more)
}
