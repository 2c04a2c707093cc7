package config

import (
	"fmt"
	"math/rand/v2"

	"github.com/shardflake/shardflake/algorithm"
)

// columnDomains returns the domain of each sharding column, or why the
// table cannot be sampled (a hint strategy, an inline expression that uses
// its column as text, a column two algorithms read differently).
func (t *TableRule) columnDomains() (map[string]algorithm.Domain, string) {
	doms := map[string]algorithm.Domain{}
	for _, s := range []*algorithm.Strategy{t.DatabaseStrategy, t.TableStrategy} {
		if s == nil {
			continue
		}
		if s.Kind == algorithm.StrategyHint {
			return nil, "a hint strategy routes by hint values only"
		}
		dom, why := s.Algorithm.Domain()
		if why != "" {
			return nil, why
		}
		for _, c := range s.Columns {
			prev, ok := doms[c]
			switch {
			case ok && (prev.Kind != dom.Kind || prev.Layout != dom.Layout):
				return nil, "column " + c + " is read as two different kinds of value"
			case !ok || dom.Ranged && !prev.Ranged:
				doms[c] = dom
			}
		}
	}
	return doms, ""
}

// Distribution is how many of a number of simulated rows each data node
// of a table receives.
type Distribution struct {
	Table string
	Rows  int
	// Counts[i] is the rows data node DataNodes[i] received.
	Counts []int
	// KeyColumn is the sharding column the key generator filled, "" when
	// the key column is not a sharding column or no generator was given.
	KeyColumn string
	// RandomColumns are the sharding columns given uniformly random values
	// (non-negative integers, or date-times within the algorithm's bounds).
	RandomColumns []string
}

// Simulate routes rows through the table's strategies and counts the rows
// per data node. key, when not nil, fills the table's key column (a
// generator's next key); every other sharding column gets a random value
// from rng. The table must be sampleable: no hint strategy, and inline
// expressions that read their columns as numbers.
func (t *TableRule) Simulate(rows int, key func() (int64, error), rng *rand.Rand) (*Distribution, error) {
	doms, why := t.columnDomains()
	if why != "" {
		return nil, fmt.Errorf("table %s cannot be simulated: %s", t.Name, why)
	}
	dist := &Distribution{Table: t.Name, Rows: rows, Counts: make([]int, len(t.DataNodes))}
	cols := t.ShardingColumns()
	for _, c := range cols {
		if c == t.KeyColumn && key != nil && doms[c].Kind == algorithm.DomainInt {
			dist.KeyColumn = c
		} else {
			dist.RandomColumns = append(dist.RandomColumns, c)
		}
	}
	index := make(map[DataNode]int, len(t.DataNodes))
	for i, n := range t.DataNodes {
		index[n] = i
	}
	conds := make(map[string]algorithm.ColumnCondition, len(cols))
	vals := make([]algorithm.Value, len(cols))
	for i := 0; i < rows; i++ {
		for j, c := range cols {
			if c == dist.KeyColumn {
				k, err := key()
				if err != nil {
					return nil, fmt.Errorf("generate key: %w", err)
				}
				vals[j] = k
			} else {
				vals[j] = doms[c].Random(rng)
			}
			conds[c] = algorithm.ColumnCondition{Column: c, Values: vals[j : j+1 : j+1]}
		}
		nodes, err := t.Route(conds)
		if err != nil {
			return nil, err
		}
		if len(nodes) != 1 {
			return nil, fmt.Errorf("table %s: a row with %s reaches %d data nodes", t.Name, rowString(cols, vals), len(nodes))
		}
		dist.Counts[index[nodes[0]]]++
	}
	return dist, nil
}

// rowString prints column values as "a=1, b=2".
func rowString(cols []string, vals []algorithm.Value) string {
	s := ""
	for i, c := range cols {
		if i > 0 {
			s += ", "
		}
		s += c + "=" + algorithm.FormatValue(vals[i])
	}
	return s
}
