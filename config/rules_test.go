package config

import (
	"fmt"
	"testing"

	"github.com/shardflake/shardflake/algorithm"
)

// TestRouteConcurrent routes from many goroutines at once: strategies are
// shared, immutable snapshots (run with -race).
func TestRouteConcurrent(t *testing.T) {
	r, err := Load("../rules.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tr := r.Table("t_order")
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func(g int) {
			for i := 0; i < 500; i++ {
				u, o := int64(g*1000+i), int64(i*7)
				nodes, err := tr.Route(map[string]algorithm.ColumnCondition{"user_id": {Values: []algorithm.Value{u}}, "order_id": {Values: []algorithm.Value{o}}})
				if err == nil && (len(nodes) != 1 || nodes[0].DataSource != fmt.Sprintf("ds_%d", u%2) || nodes[0].Table != fmt.Sprintf("t_order_%d", o%4)) {
					err = fmt.Errorf("user %d order %d -> %v", u, o, nodes)
				}
				if err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}(g)
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
