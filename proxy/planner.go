package proxy

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/idgen"
	"github.com/shardflake/shardflake/router"
)

// Planner turns a parsed statement into a prepared plan; the router is the
// implementation (RouterPlanner). Prepare must be safe for concurrent use
// and its result immutable: the proxy caches it by SQL text and shares it
// between sessions. Prepare may consume the statement tree.
type Planner interface {
	Prepare(stmt ast.StmtNode, sql, db string) (PreparedPlan, error)
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

func (p routerPlanner) Prepare(stmt ast.StmtNode, sql, db string) (PreparedPlan, error) {
	pp, err := p.r.Prepare(stmt, sql, db)
	if err != nil {
		return nil, err
	}
	return pp, nil
}

// KeyGenerators builds the rules file's key generators (SNOWFLAKE, with
// idgen's props), keyed by name as router.New wants them. close stops
// them (etcd leases, high-water marks) and must be called on shutdown.
func KeyGenerators(ctx context.Context, rules *router.Rules) (gens map[string]idgen.KeyGenerator, close func() error, err error) {
	gens = map[string]idgen.KeyGenerator{}
	var made []*idgen.Snowflake
	close = func() error {
		var errs []error
		for _, g := range made {
			errs = append(errs, g.Close())
		}
		return errors.Join(errs...)
	}
	for name, kg := range rules.KeyGenerators {
		if !strings.EqualFold(kg.Type, "SNOWFLAKE") {
			close()
			return nil, nil, fmt.Errorf("key generator %s: type %s is not supported (SNOWFLAKE is)", name, kg.Type)
		}
		cfg, err := idgen.ParseProps(kg.Props)
		if err != nil {
			close()
			return nil, nil, fmt.Errorf("key generator %s: %w", name, err)
		}
		g, err := idgen.New(ctx, cfg)
		if err != nil {
			close()
			return nil, nil, fmt.Errorf("key generator %s: %w", name, err)
		}
		made = append(made, g)
		gens[name] = g
	}
	return gens, close, nil
}
