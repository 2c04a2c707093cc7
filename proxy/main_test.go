package proxy

import (
	"os"
	"sync"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// The package's tests share two MariaDB servers, started on first use and
// stopped when the tests are done. Tests that kill a backend start their
// own.
var shared struct {
	once    sync.Once
	servers []*mariadbtest.Server
	err     error
}

func sharedServers(t testing.TB) []*mariadbtest.Server {
	t.Helper()
	shared.once.Do(func() {
		if shared.err = mariadbtest.Available(); shared.err != nil {
			return
		}
		shared.servers, shared.err = mariadbtest.LaunchN(2, mariadbtest.Options{Databases: []string{"ds_0", "ds_1"}})
	})
	mariadbtest.Require(t, shared.err)
	if shared.err != nil {
		t.FailNow()
	}
	return shared.servers
}

func TestMain(m *testing.M) {
	if os.Getenv(proxyHelperEnv) != "" {
		os.Exit(runProxyHelper())
	}
	code := m.Run()
	for _, s := range shared.servers {
		s.Close()
	}
	os.Exit(code)
}
