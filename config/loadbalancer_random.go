package config

import "math/rand/v2"

// random picks a candidate uniformly.
type random struct{}

func newRandom(props map[string]string, replicas []string) (LoadBalancer, []float64, error) {
	return random{}, nil, nil
}

func (random) Pick(candidates []int) int { return candidates[rand.IntN(len(candidates))] }
