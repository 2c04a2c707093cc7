package sqlvalue

import (
	"database/sql"
	"os"
	"sync"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// The package's tests check their answers against one real MariaDB,
// started on first use.
var shared struct {
	once   sync.Once
	server *mariadbtest.Server
	db     *sql.DB
	err    error
}

func mariadb(t testing.TB) *sql.DB {
	t.Helper()
	shared.once.Do(func() {
		if shared.err = mariadbtest.Available(); shared.err != nil {
			return
		}
		if shared.server, shared.err = mariadbtest.Launch(mariadbtest.Options{Databases: []string{"v"}}); shared.err != nil {
			return
		}
		shared.db, shared.err = shared.server.DB("v")
	})
	mariadbtest.Require(t, shared.err)
	if shared.err != nil {
		t.FailNow()
	}
	return shared.db
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.db != nil {
		shared.db.Close()
	}
	if shared.server != nil {
		shared.server.Close()
	}
	os.Exit(code)
}
