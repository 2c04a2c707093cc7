package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/idgen"
	"github.com/shardflake/shardflake/router"
)

// runExplain prints the plan of one SQL statement: its routes with the
// rewritten SQL and the merge of their results, without any database.
// Exit status: 0 planned, 1 the statement or the rules file is rejected,
// 2 bad usage.
func runExplain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configFile := fs.String("config", "", "rules file (required)")
	db := fs.String("db", "", "session schema the statement runs in (default: the rules' databaseName)")
	argsJSON := fs.String("args", "", "values of the statement's ? placeholders, as a JSON array, e.g. '[1, \"x\", null]'")
	asJSON := fs.Bool("json", false, "print the plan as JSON (the router.Plan the proxy executes)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, `Usage: shardflake explain --config FILE [--db NAME] [--args JSON] [--json] "SQL"`)
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Plans one SQL statement as the proxy would and prints its routes (data")
		fmt.Fprintln(stderr, "source, data nodes, rewritten SQL, arguments) and the merge of their results.")
		fmt.Fprintln(stderr, "No database is contacted. An INSERT that needs keys gets them from the table's")
		fmt.Fprintln(stderr, "key generator configured with its static props only (no state file, no etcd;")
		fmt.Fprintln(stderr, "an etcd-leased generator is explained with worker 0), so the keys and where")
		fmt.Fprintln(stderr, "their rows land are examples.")
		fmt.Fprintln(stderr, "Exit status: 0 planned, 1 statement or rules rejected, 2 bad usage.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	// Flags may come before or after the statement.
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return flagExit(err)
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if *configFile == "" || len(positional) != 1 || strings.TrimSpace(positional[0]) == "" {
		fs.Usage()
		return 2
	}
	sql := positional[0]
	bindArgs, err := parseArgs(*argsJSON)
	if err != nil {
		fmt.Fprintf(stderr, "shardflake explain: --args: %v\n", err)
		return 2
	}
	rules, err := config.Load(*configFile)
	if err != nil {
		fmt.Fprintf(stderr, "%s: invalid rules\n%v\n", *configFile, err)
		return 1
	}
	keys, closeKeys, err := explainKeys(rules)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", *configFile, err)
		return 1
	}
	defer closeKeys()
	r, err := router.New(rules, keys)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", *configFile, err)
		return 1
	}
	if *db == "" {
		*db = rules.DatabaseName
	}
	stmt, err := router.ParseOne(sql)
	if err != nil {
		return explainError(stderr, err)
	}
	p, err := r.Prepare(stmt, sql, *db)
	if err != nil {
		return explainError(stderr, err)
	}
	if p.Kind() == router.KindOther {
		fmt.Fprintln(stdout, "statement: other (answered by the proxy itself, not routed to data nodes)")
		return 0
	}
	if len(bindArgs) != p.ParamCount() {
		fmt.Fprintf(stderr, "shardflake explain: the statement has %d ? placeholders; --args gives %d values\n", p.ParamCount(), len(bindArgs))
		return 2
	}
	plan, err := p.Bind(bindArgs)
	if err != nil {
		return explainError(stderr, err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(plan); err != nil {
			fmt.Fprintf(stderr, "shardflake explain: %v\n", err)
			return 1
		}
		return 0
	}
	printPlan(stdout, plan, keys)
	return 0
}

// parseArgs reads --args: integers become int64, other numbers float64.
func parseArgs(s string) ([]any, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var in []any
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("want a JSON array: %w", err)
	}
	for i, v := range in {
		switch x := v.(type) {
		case json.Number:
			if n, err := x.Int64(); err == nil {
				in[i] = n
			} else if f, err := x.Float64(); err == nil {
				in[i] = f
			} else {
				return nil, fmt.Errorf("value %d: %v", i+1, err)
			}
		case string, bool, nil:
		default:
			return nil, fmt.Errorf("value %d: %v is not a number, string, boolean or null", i+1, v)
		}
	}
	return in, nil
}

// explainKeys builds the key generators of the rules from their static
// props: no state file, no etcd, no ticket or segment data source (those
// get an in-memory counter from 1, as a fresh table would).
func explainKeys(rules *config.Rules) (map[string]idgen.KeyGenerator, func(), error) {
	keys := map[string]idgen.KeyGenerator{}
	var gens []*idgen.Snowflake
	closeAll := func() {
		for _, g := range gens {
			g.Close()
		}
	}
	for name, kg := range rules.KeyGenerators {
		g, err := offlineKeys(kg)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("key generator %s: %w", name, err)
		}
		if sf, ok := g.(*idgen.Snowflake); ok {
			gens = append(gens, sf)
		}
		keys[name] = g
	}
	return keys, closeAll, nil
}

// offlineKeys builds a generator that needs nothing outside the process.
func offlineKeys(kg config.KeyGeneratorConfig, opts ...idgen.Option) (idgen.KeyGenerator, error) {
	switch kg.Type {
	case idgen.TypeUUID:
		return idgen.NewUUIDv4(kg.Props)
	case idgen.TypeUUIDv7:
		return idgen.NewUUIDv7(kg.Props)
	case idgen.TypeSegment, idgen.TypeTicket:
		return &counterKeys{next: 1}, nil
	}
	cfg, err := idgen.ParseProps(kg.Props)
	if err != nil {
		return nil, err
	}
	cfg.StateFile = ""
	if cfg.Source == idgen.WorkerIDEtcd {
		cfg.Source, cfg.WorkerID = idgen.WorkerIDStatic, 0
	}
	return idgen.New(context.Background(), cfg, opts...)
}

// counterKeys stands in for a SEGMENT or TICKET generator offline: keys
// 1, 2, 3, ... as a fresh segment row or a single ticket server gives.
type counterKeys struct{ next int64 }

func (c *counterKeys) MaxBatch() int { return 1 << 20 }

func (c *counterKeys) NextN(n int) (int64, error) {
	first := c.next
	c.next += int64(n)
	return first, nil
}

func explainError(w io.Writer, err error) int {
	var re *router.Error
	if errors.As(err, &re) {
		fmt.Fprintf(w, "error %d (%s): %s\n", re.Code, re.State, re.Message)
	} else {
		fmt.Fprintf(w, "error: %v\n", err)
	}
	return 1
}

// printPlan writes a plan for people.
func printPlan(w io.Writer, plan *router.Plan, keys map[string]idgen.KeyGenerator) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "statement: %s, %s route", plan.Kind, plan.Type)
	if len(plan.Routes) != 1 {
		fmt.Fprintf(&b, ", %d routes", len(plan.Routes))
	}
	b.WriteString("\n")
	if len(plan.Tables) > 0 {
		fmt.Fprintf(&b, "tables: %s\n", strings.Join(plan.Tables, ", "))
	}
	if plan.Access != 0 {
		where := "the primary"
		if plan.Access == router.AccessRead {
			where = "a replica"
		}
		fmt.Fprintf(&b, "access: %s (read/write groups: %s)\n", plan.Access, where)
	}
	if k := plan.Keys; k != nil {
		fmt.Fprintf(&b, "generated keys: %s = %d", k.Column, k.First)
		if k.Count > 1 {
			fmt.Fprintf(&b, " .. (%d keys)", k.Count)
		}
		b.WriteString(" (example keys from the static key generator)\n")
	}
	if rn := plan.Rename; rn != nil {
		fmt.Fprintf(&b, "rename in results: %s -> %s\n", rn.Physical, rn.Logical)
	}
	for i, rt := range plan.Routes {
		nodes := make([]string, len(rt.Nodes))
		for j, n := range rt.Nodes {
			nodes[j] = n.String()
		}
		fmt.Fprintf(&b, "route %d: %s", i+1, rt.DataSource)
		if len(nodes) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(nodes, ", "))
		}
		fmt.Fprintf(&b, "\n  %s\n", rt.SQL)
		if len(rt.Args) > 0 {
			a, _ := json.Marshal(rt.Args)
			fmt.Fprintf(&b, "  args: %s\n", a)
		}
	}
	if m := plan.Merge; m != nil {
		printMerge(&b, m)
	}
	w.Write(b.Bytes())
}

func printMerge(b *bytes.Buffer, m *router.Merge) {
	b.WriteString("merge:\n")
	if m.Hidden > 0 {
		fmt.Fprintf(b, "  hidden columns: the last %d of every route, stripped\n", m.Hidden)
	}
	if m.Describe {
		b.WriteString("  route 1 only describes the computed columns (LIMIT 0); the others return them as NULL\n")
	}
	if len(m.Sort) > 0 {
		fmt.Fprintf(b, "  k-way merge of the routes, sorted by %s\n", keyList(m.Sort))
	} else {
		b.WriteString("  routes' rows one route after the other\n")
	}
	if g := m.Group; g != nil {
		switch {
		case len(g.Keys) == 0:
			b.WriteString("  aggregate all rows into one row\n")
		case g.Streamed:
			fmt.Fprintf(b, "  group by %s, streaming (groups arrive together)\n", refList(g.Keys))
		default:
			fmt.Fprintf(b, "  group by %s, in memory\n", refList(g.Keys))
		}
		if g.Rollup {
			b.WriteString("  WITH ROLLUP: a super-aggregate row after each prefix of the group keys\n")
		}
		for _, a := range g.Aggregates {
			fmt.Fprintf(b, "    col[%s] = %s", a.Column, a.Func)
			switch {
			case a.Distinct:
				fmt.Fprintf(b, "(DISTINCT values of %s)", refList(a.Args))
			case a.Func == router.AggAvg:
				fmt.Fprintf(b, " = SUM(col[%s]) / SUM(col[%s])", a.Sum, a.Count)
			case a.VarPop != 0:
				fmt.Fprintf(b, " combining the routes' COUNT col[%s], SUM col[%s] and VAR_POP col[%s]", a.Count, a.Sum, a.VarPop)
			default:
				fmt.Fprintf(b, " of the routes' col[%s]", a.Column)
			}
			b.WriteString("\n")
		}
	}
	for _, c := range m.Compute {
		fmt.Fprintf(b, "  col[%s] = %s\n", c.Column, c.Expr)
	}
	if m.Having != nil {
		fmt.Fprintf(b, "  having %s\n", m.Having)
	}
	if m.Distinct {
		b.WriteString("  distinct rows\n")
	}
	if len(m.OrderBy) > 0 {
		fmt.Fprintf(b, "  sort in memory by %s\n", keyList(m.OrderBy))
	}
	if l := m.Limit; l != nil {
		fmt.Fprintf(b, "  limit: skip %d, return %d\n", l.Offset, l.Count)
	}
}

func keyList(keys []router.OrderKey) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = "col[" + k.Column.String() + "]"
		if k.Desc {
			parts[i] += " DESC"
		}
	}
	return strings.Join(parts, ", ")
}

func refList(refs []router.ColumnRef) string {
	parts := make([]string, len(refs))
	for i, r := range refs {
		parts[i] = "col[" + r.String() + "]"
	}
	return strings.Join(parts, ", ")
}
