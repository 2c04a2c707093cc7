package config

import "sync/atomic"

// roundRobin takes the candidates in turn.
type roundRobin struct{ next atomic.Uint64 }

func newRoundRobin(props map[string]string, replicas []string) (LoadBalancer, []float64, error) {
	return &roundRobin{}, nil, nil
}

func (r *roundRobin) Pick(candidates []int) int {
	return candidates[(r.next.Add(1)-1)%uint64(len(candidates))]
}
