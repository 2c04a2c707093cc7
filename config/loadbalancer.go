package config

import (
	"fmt"
	"slices"
	"strings"
)

// LoadBalancer picks the replica a read goes to. Implementations are safe
// for concurrent use.
type LoadBalancer interface {
	// Pick returns one of candidates, indexes into the group's Replicas
	// (never empty, in ascending order).
	Pick(candidates []int) int
}

// loadBalancerFactory builds a load balancer for a group's replicas from
// the entry's props; a bad prop is a *propError.
type loadBalancerFactory func(props map[string]string, replicas []string) (LoadBalancer, []float64, error)

// loadBalancerTypes are the load balancer types by ShardingSphere's names,
// one registration each.
var loadBalancerTypes = map[string]loadBalancerFactory{
	"ROUND_ROBIN": newRoundRobin,
	"RANDOM":      newRandom,
	"WEIGHT":      newWeight,
}

// NewLoadBalancer builds the group's load balancer: one per group and
// proxy, holding its own state (the round-robin position).
func (g *ReadwriteGroup) NewLoadBalancer() LoadBalancer {
	lb, _, err := loadBalancerTypes[g.LoadBalancer.Type](g.LoadBalancer.Props, g.replicaNames())
	if err != nil {
		// Validated at load; unreachable for a loaded group.
		panic(fmt.Sprintf("load balancer %s of group %s: %v", g.LoadBalancer.Name, g.Name, err))
	}
	return lb
}

func loadBalancerTypeNames() string {
	return strings.Join(slices.Sorted(func(yield func(string) bool) {
		for k := range loadBalancerTypes {
			if !yield(k) {
				return
			}
		}
	}), ", ")
}
