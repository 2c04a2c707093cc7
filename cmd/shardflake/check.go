package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/shardflake/shardflake/algorithm"
	"github.com/shardflake/shardflake/config"

	"github.com/shardflake/shardflake/idgen"
)

// defaultCheckRows is how many rows check simulates per logical table.
const defaultCheckRows = 100000

// runCheck validates a rules file, prints its data-node map and a simulated
// distribution of generated keys per data node. Exit status: 0 valid
// (warnings allowed), 1 invalid, 2 bad usage.
func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configFile := fs.String("config", "", "rules file to check (required)")
	rows := fs.Int("rows", defaultCheckRows, "rows to simulate per sharded table")
	seed := fs.Uint64("seed", 1, "seed of the simulation's random values")
	interval := fs.Duration("key-interval", time.Millisecond, "simulated time between two generated keys (the insert rate)")
	connect := fs.Bool("connect", false, "read each key column's type from the table's first data node and check that its key generator's keys fit it")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: shardflake check --config FILE [--rows N] [--key-interval D] [--seed N] [--connect]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Validates a rules file as serve would, then prints each logical table's data")
		fmt.Fprintln(stderr, "nodes and where simulated rows land: the key column gets keys from the")
		fmt.Fprintln(stderr, "table's key generator (on a simulated clock, one key per --key-interval),")
		fmt.Fprintln(stderr, "other sharding columns uniformly random values.")
		fmt.Fprintln(stderr, "Warns about data nodes that get no rows or more than twice their share.")
		fmt.Fprintln(stderr, "With --connect, also checks that each key column's type holds its generator's")
		fmt.Fprintln(stderr, "keys (a SNOWFLAKE key does not fit an INT).")
		fmt.Fprintln(stderr, "Exit status: 0 valid (warnings allowed), 1 invalid or a key column too narrow, 2 bad usage.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return flagExit(err)
	}
	if *configFile == "" || fs.NArg() > 0 || *rows <= 0 || *interval <= 0 {
		fs.Usage()
		return 2
	}
	r, err := config.Load(*configFile)
	if err != nil {
		fmt.Fprintf(stderr, "%s: invalid rules\n%v\n", *configFile, err)
		return 1
	}
	c := &checker{out: stdout, rules: r, rows: *rows, seed: *seed, keyInterval: *interval, connect: *connect, rng: rand.New(rand.NewPCG(*seed, 0x5f1a))}
	defer c.close()
	if err := c.report(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", *configFile, err)
		return 1
	}
	if c.rangeErrors > 0 {
		fmt.Fprintf(stderr, "%s: %d key columns cannot hold their generator's keys\n", *configFile, c.rangeErrors)
		return 1
	}
	return 0
}

// checker prints one rules file's report.
type checker struct {
	out         io.Writer
	rules       *config.Rules
	rows        int
	seed        uint64
	keyInterval time.Duration
	rng         *rand.Rand
	generators  []*idgen.Snowflake
	warnings    int
	connect     bool
	rangeErrors int
}

func (c *checker) close() {
	for _, g := range c.generators {
		g.Close()
	}
}

func (c *checker) printf(format string, args ...any) { fmt.Fprintf(c.out, format, args...) }

func (c *checker) warnf(format string, args ...any) {
	c.warnings++
	c.printf("  warning: "+format+"\n", args...)
}

func (c *checker) report() error {
	r := c.rules
	c.printf("%s: valid: database %s, %s, %s, %s\n", r.File, r.DatabaseName,
		counted(len(r.DataSources), "data source"), counted(len(r.Tables), "sharded table"), counted(len(r.BroadcastTables), "broadcast table"))
	for _, w := range r.Warnings {
		c.printf("warning: %v\n", w)
	}
	c.printf("\ndata sources:\n")
	for _, ds := range r.DataSources {
		mark := ""
		if ds.Name == r.DefaultDataSource {
			mark = "  (default: tables without rules)"
		}
		c.printf("  %-8s %s/%s user %s%s\n", ds.Name, ds.Addr(), ds.Database, ds.User, mark)
		if g := r.ReadwriteGroup(ds.Name); g != nil {
			c.printf("    readwrite group: primary %s; reads by %s, in transactions %s, read-your-writes %s\n",
				g.Primary.Name, g.LoadBalancer.Type, g.TransactionalReads, g.CausalReads)
			for _, rp := range g.Replicas {
				c.printf("    replica %s %s/%s weight %g\n", rp.Name, rp.Addr(), rp.Database, rp.Weight)
			}
		}
	}
	if len(r.BroadcastTables) > 0 {
		c.printf("broadcast tables (on every data source): %s\n", strings.Join(r.BroadcastTables, ", "))
	}
	for _, g := range r.BindingGroups {
		c.printf("binding group (joined data node by data node): %s\n", strings.Join(g, ", "))
	}
	names := make([]string, 0, len(r.Tables))
	for name := range r.Tables {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return r.Tables[names[i]].Line < r.Tables[names[j]].Line })
	for _, name := range names {
		if err := c.table(r.Tables[name]); err != nil {
			return err
		}
	}
	c.printf("\nwarnings: %d\n", c.warnings+len(r.Warnings))
	return nil
}

func (c *checker) table(t *config.TableRule) error {
	c.printf("\ntable %s: %d data nodes\n", t.Name, len(t.DataNodes))
	c.printf("  database strategy: %s\n", describeStrategy(t.DatabaseStrategy))
	c.printf("  table strategy:    %s\n", describeStrategy(t.TableStrategy))
	if t.KeyColumn != "" {
		c.printf("  key: %s from key generator %s\n", t.KeyColumn, t.KeyGenerator)
		if c.connect {
			c.keyColumn(t)
		}
	}
	for _, ds := range t.DataSources() {
		c.printf("  %s: %s\n", ds, strings.Join(t.Tables(ds), ", "))
	}
	keys, keyDesc, err := c.keySource(t)
	if err != nil {
		return err
	}
	dist, err := t.Simulate(c.rows, keys, c.rng)
	if err != nil {
		c.printf("  no simulation: %v\n", err)
		return nil
	}
	var how []string
	if dist.KeyColumn != "" {
		how = append(how, dist.KeyColumn+": "+keyDesc)
	}
	if len(dist.RandomColumns) > 0 {
		how = append(how, strings.Join(dist.RandomColumns, ", ")+": uniformly random values")
	}
	if len(how) == 0 {
		how = append(how, "no sharding column")
	}
	c.printf("  simulated distribution of %d rows (%s):\n", dist.Rows, strings.Join(how, "; "))
	share := float64(dist.Rows) / float64(len(t.DataNodes))
	var empty []string
	for i, n := range t.DataNodes {
		got := dist.Counts[i]
		c.printf("    %-32s %8d  %5.1f%%\n", n.String(), got, 100*float64(got)/float64(dist.Rows))
		if got == 0 {
			empty = append(empty, n.String())
		}
	}
	if len(empty) > 0 {
		reached := len(t.DataNodes) - len(empty)
		c.warnf("%d of %d data nodes get no rows (%d reached): %s", len(empty), len(t.DataNodes), reached, strings.Join(empty, ", "))
	}
	for i, n := range t.DataNodes {
		if got := dist.Counts[i]; float64(got) > 2*share {
			c.warnf("%s gets %d rows, more than twice its share of %.0f", n, got, share)
		}
	}
	return nil
}

// keySource returns the generator of the table's key column and how the
// output describes it; nil when the table has no key generator.
//
// It is the table's idgen generator, built from the rules file's props, on
// a simulated clock that advances keyInterval per key (so 100,000 keys cost
// no real time and the distribution reflects the chosen insert rate). The
// generator neither reads nor writes the state file and does not contact
// etcd: an etcd-leased generator is simulated with worker 0.
func (c *checker) keySource(t *config.TableRule) (func() (int64, error), string, error) {
	if t.KeyColumn == "" {
		return nil, "", nil
	}
	kg, ok := c.rules.KeyGenerators[t.KeyGenerator]
	if !ok {
		return nil, "", fmt.Errorf("table %s: key generator %s is not defined", t.Name, t.KeyGenerator)
	}
	switch kg.Type {
	case idgen.TypeUUID, idgen.TypeUUIDv7:
		return nil, "", nil
	case idgen.TypeSegment:
		next := int64(0)
		return func() (int64, error) { next++; return next, nil },
			fmt.Sprintf("keys of %s generator %s: consecutive, as blocks of one segment row give them", kg.Type, kg.Name), nil
	case idgen.TypeTicket:
		cfg, err := idgen.ParseTicketProps(kg.Props)
		if err != nil {
			return nil, "", fmt.Errorf("key generator %s: %w", kg.Name, err)
		}
		n := int64(len(cfg.Store.URLs))
		next := int64(0)
		return func() (int64, error) { next++; return next, nil },
			fmt.Sprintf("keys of %s generator %s: %d ticket servers with increment %d, offsets 1..%d, taken round-robin (with a server down, only its partners' residues mod %d occur)", kg.Type, kg.Name, n, n, n, n), nil
	}
	cfg, err := idgen.ParseProps(kg.Props)
	if err != nil {
		return nil, "", fmt.Errorf("key generator %s: %w", kg.Name, err)
	}
	cfg.StateFile = ""
	if cfg.Source == idgen.WorkerIDEtcd {
		cfg.Source, cfg.WorkerID = idgen.WorkerIDStatic, 0
	}
	clock := &simClock{now: cfg.Layout.Epoch.AddDate(1, 0, 0)}
	g, err := idgen.New(context.Background(), cfg, idgen.WithClock(clock), idgen.WithSeed(c.seed, uint64(len(c.generators))))
	if err != nil {
		return nil, "", fmt.Errorf("key generator %s: %w", kg.Name, err)
	}
	c.generators = append(c.generators, g)
	next := func() (int64, error) {
		id, err := g.Next()
		clock.now = clock.now.Add(c.keyInterval)
		return id, err
	}
	desc := fmt.Sprintf("keys of %s generator %s (datacenter %d, worker %d), one every %s of simulated time",
		kg.Type, kg.Name, cfg.DatacenterID, cfg.WorkerID, c.keyInterval)
	return next, desc, nil
}

// simClock is the simulated clock of check's key generators: Sleep
// advances it instead of waiting.
type simClock struct{ now time.Time }

func (s *simClock) Now() time.Time        { return s.now }
func (s *simClock) Sleep(d time.Duration) { s.now = s.now.Add(d) }

// describeStrategy prints a strategy as the rules file configures it.
func describeStrategy(s *algorithm.Strategy) string {
	if s == nil {
		return "none (every target)"
	}
	desc := fmt.Sprintf("%s on %s, algorithm %s (%s", s.Kind, strings.Join(s.Columns, ","), s.AlgorithmName, s.Algorithm.Type())
	if expr, ok := s.Algorithm.Props()["algorithm-expression"]; ok {
		desc += " " + expr
	}
	return desc + ")"
}

// counted is n and noun, plural unless n is 1: "1 broadcast table".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
