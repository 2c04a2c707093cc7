package config

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/shardflake/shardflake/algorithm"
)

// weight picks a candidate with probability proportional to its weight,
// ShardingSphere's WEIGHT: props are replica name -> weight, and every
// replica needs one.
type weight struct{ weights []float64 }

func newWeight(props map[string]string, replicas []string) (LoadBalancer, []float64, error) {
	w := &weight{weights: make([]float64, len(replicas))}
	for name := range props {
		if !slices.Contains(replicas, name) {
			return nil, nil, propErrorf(name, "names %s, which is not one of the group's readDataSourceNames (%s)", name, strings.Join(replicas, ", "))
		}
	}
	for i, name := range replicas {
		v, ok := props[name]
		if !ok {
			return nil, nil, &algorithm.PropError{Reason: fmt.Sprintf("WEIGHT needs a weight for every replica; %s has none", name)}
		}
		var f float64
		if _, err := fmt.Sscanf(v, "%g", &f); err != nil || f <= 0 {
			return nil, nil, propErrorf(name, "weight %q must be a number above 0", v)
		}
		w.weights[i] = f
	}
	return w, w.weights, nil
}

func (w *weight) Pick(candidates []int) int {
	total := 0.0
	for _, c := range candidates {
		total += w.weights[c]
	}
	x := rand.Float64() * total
	for _, c := range candidates {
		if x -= w.weights[c]; x < 0 {
			return c
		}
	}
	return candidates[len(candidates)-1]
}
