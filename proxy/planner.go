package proxy

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	tidbmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/shardflake/shardflake/router"
)

// Planner turns a parsed statement into a prepared plan; the router is the
// implementation (RouterPlanner). Prepare must be safe for concurrent use
// and its result immutable: the proxy caches it by SQL text and shares it
// between sessions (the cache keys it by the session's sql_mode, which
// opts come from). Prepare may consume the statement tree.
type Planner interface {
	Prepare(stmt ast.StmtNode, sql, db string, opts router.PrepareOptions) (PreparedPlan, error)
}

// PreparedPlan is a statement the router analysed once; Bind fills in the
// values of its ? placeholders (none for a text query) and returns the
// plan to run. Kind is router.KindOther for statements the router leaves
// to the proxy.
type PreparedPlan interface {
	Kind() router.StatementKind
	Bind(args []any) (*router.Plan, error)
}

// RouterPlanner makes a router the session's Planner.
func RouterPlanner(r *router.Router) Planner { return routerPlanner{r: r} }

type routerPlanner struct{ r *router.Router }

func (p routerPlanner) Prepare(stmt ast.StmtNode, sql, db string, opts router.PrepareOptions) (PreparedPlan, error) {
	pp, err := p.r.PrepareWith(stmt, sql, db, opts)
	if err != nil {
		return nil, err
	}
	return pp, nil
}

// prepareOptions are the router's options under the session's sql_mode:
// NO_AUTO_VALUE_ON_ZERO keeps a 0 given for a generated key column.
func (s *Session) prepareOptions() router.PrepareOptions {
	var opts router.PrepareOptions
	if s.sqlMode&tidbmysql.ModeNoAutoValueOnZero != 0 {
		opts.ZeroKey = router.ZeroKeyStored
	}
	return opts
}
