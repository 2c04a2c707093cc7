package router

import (
	"testing"

	"github.com/shardflake/shardflake/config"
)

// load loads a rules file for a test, failing it on an error.
func load(t testing.TB, path string) *config.Rules {
	t.Helper()
	r, err := config.Load(path)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	return r
}
