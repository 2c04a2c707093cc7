package algorithm

import "strings"

// StrategyKind is the shape of a sharding strategy.
type StrategyKind int

// Strategy kinds, as ShardingSphere names them.
const (
	StrategyStandard StrategyKind = iota + 1
	StrategyComplex
	StrategyHint
)

// Strategy is a databaseStrategy or tableStrategy: its sharding columns and
// the algorithm that maps their values to targets.
type Strategy struct {
	Kind          StrategyKind
	Columns       []string // lower-case; one for standard, several for complex, none for hint
	AlgorithmName string
	Algorithm     Algorithm
	// Line is where the strategy is written in the rules file (the
	// default strategy's line when the table inherits it).
	Line int

	// prefix and suffixLen address auto algorithms' targets by number, as
	// ShardingSphere's DataNodeInfo does: target = prefix + the number
	// left-padded with '0' to suffixLen digits.
	prefix    string
	suffixLen int
}

// String returns the strategy kind as the rules file writes it.
func (k StrategyKind) String() string {
	switch k {
	case StrategyStandard:
		return "standard"
	case StrategyComplex:
		return "complex"
	case StrategyHint:
		return "hint"
	}
	return "unknown"
}

// WithTargets returns a copy of the strategy that addresses targets (the
// physical tables of logical, or the data sources) by number, as auto
// algorithms do. The loader calls it once, before the strategy is shared.
func (s Strategy) WithTargets(logical string, targets []string) *Strategy {
	s.prefix, s.suffixLen = dataNodeInfo(logical, targets)
	return &s
}

// dataNodeInfo returns the prefix and minimum suffix length auto
// algorithms address targets with, as ShardingSphere computes them from the
// first target: its name without trailing digits (for a table named after
// the logical table, the logical name plus the rest without digits).
func dataNodeInfo(logical string, targets []string) (string, int) {
	if len(targets) == 0 {
		return "", 1
	}
	first := targets[0]
	prefix := strings.TrimRight(first, "0123456789")
	if strings.HasPrefix(strings.ToLower(first), logical) {
		prefix = first[:len(logical)] + strings.TrimRight(first[len(logical):], "0123456789")
	}
	minLen := -1
	for _, t := range targets {
		if l := len(t) - len(prefix); minLen < 0 || l < minLen {
			minLen = l
		}
	}
	return prefix, max(minLen, 1)
}
