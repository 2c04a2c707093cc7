package proxy

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/idgen"
	"github.com/shardflake/shardflake/proxy/keygen"
)

// The key generator admin statement:
//
//	ADOPT SHARDING KEY GENERATOR FOR [TABLE] <table>
//
// reads MAX(key) over every physical table of every table that shares
// <table>'s key generator and moves a SEGMENT or TICKET generator above
// it (the segment row's max_id, each ticket server's AUTO_INCREMENT), so
// a table filled by AUTO_INCREMENT can move to the proxy's generator
// without a collision. It answers one row: the generator, its type, the
// tables and the largest key found.
// adoptTimeout bounds reading MAX(key) and raising the generator.
const adoptTimeout = 30 * time.Second

// matchKeygenAdmin recognises ADOPT SHARDING KEY GENERATOR.
func matchKeygenAdmin(lx adminLexer, first string) (st adminStmt, ok bool, err error) {
	if !strings.EqualFold(first, "ADOPT") {
		return st, false, nil
	}
	st.kind = adminAdoptKeys
	if !lx.keywords("SHARDING", "KEY", "GENERATOR", "FOR") {
		return st, true, lx.syntaxError("the statement is ADOPT SHARDING KEY GENERATOR FOR <table>")
	}
	lx.keywords("TABLE")
	name, named := lx.ident()
	if !named {
		return st, true, lx.syntaxError("ADOPT SHARDING KEY GENERATOR FOR needs a table name")
	}
	st.table = name
	return st, true, lx.end()
}

// adoptKeys runs ADOPT SHARDING KEY GENERATOR FOR table.
func (srv sessionServer) adoptKeys(table string) ([]*mysql.Field, []Row, error) {
	rules := srv.rules
	t := rules.Tables[strings.ToLower(table)]
	if t == nil || t.KeyGenerator == "" {
		return nil, nil, fmt.Errorf("ADOPT SHARDING KEY GENERATOR: table %s has no keyGenerateStrategy", table)
	}
	name := t.KeyGenerator
	g := srv.keys[name]
	a, ok := g.(idgen.Adopter)
	if !ok {
		return nil, nil, fmt.Errorf("ADOPT SHARDING KEY GENERATOR: key generator %s is %s, which counts from no stored maximum (only SEGMENT and TICKET generators adopt a table's keys)",
			name, rules.KeyGenerators[name].Type)
	}
	tables := keygen.Tables(rules, name)
	ctx, cancel := context.WithTimeout(context.Background(), adoptTimeout)
	defer cancel()
	floor, err := keygen.TableMax(ctx, rules, tables)
	if err != nil {
		return nil, nil, fmt.Errorf("ADOPT SHARDING KEY GENERATOR: reading the largest key: %w", err)
	}
	if err := a.Adopt(floor); err != nil {
		return nil, nil, fmt.Errorf("ADOPT SHARDING KEY GENERATOR: key generator %s: %w", name, err)
	}
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t.Name
	}
	cols := stringColumns("key_generator", "type", "tables")
	cols = append(cols, intColumn("max_key"))
	return cols, []Row{rowOf(name, rules.KeyGenerators[name].Type, strings.Join(names, ","), floor)}, nil
}
