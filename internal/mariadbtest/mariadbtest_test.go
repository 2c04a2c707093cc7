package mariadbtest

import (
	"os"
	"testing"
	"time"
)

func TestServersAreIndependentAndSurviveRestart(t *testing.T) {
	servers := StartN(t, 2, Options{Databases: []string{"ds_0", "ds_1"}})
	a, b := servers[0], servers[1]
	if a.Port() == b.Port() {
		t.Fatalf("both servers on port %d", a.Port())
	}

	a.Exec(t, "ds_0", "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1), (2)")
	b.Exec(t, "ds_1", "CREATE TABLE t (id INT PRIMARY KEY)")

	count := func(s *Server, db string) int {
		t.Helper()
		var n int
		if err := s.Open(t, db).QueryRow("SELECT COUNT(*) FROM t").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := count(a, "ds_0"); got != 2 {
		t.Errorf("server a: got %d rows, want 2", got)
	}
	if got := count(b, "ds_1"); got != 0 {
		t.Errorf("server b: got %d rows, want 0", got)
	}

	port := a.Port()
	if err := a.Kill(); err != nil {
		t.Fatal(err)
	}
	if a.Running() {
		t.Fatal("server still running after Kill")
	}
	if err := a.Restart(); err != nil {
		t.Fatal(err)
	}
	if a.Port() != port {
		t.Errorf("restart moved the server from port %d to %d", port, a.Port())
	}
	if got := count(a, "ds_0"); got != 2 {
		t.Errorf("after restart: got %d rows, want 2", got)
	}

	dir := a.dir
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Close left %s behind (stat error %v)", dir, err)
	}
	if a.Running() {
		t.Error("server running after Close")
	}
}

// TestReplicated: a row written on the primary reaches both replicas.
func TestReplicated(t *testing.T) {
	r := StartReplicated(t, 2, 3, Options{Databases: []string{"rdb"}})
	r.Primary.Exec(t, "rdb", "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (7)")
	if err := r.WaitReplicas(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, rp := range r.Replicas {
		var id int
		if err := rp.Open(t, "rdb").QueryRow("SELECT id FROM t").Scan(&id); err != nil || id != 7 {
			t.Errorf("replica %s: id %d, %v", rp.Addr(), id, err)
		}
		var domain int
		if err := rp.Open(t, "").QueryRow("SELECT @@gtid_domain_id").Scan(&domain); err != nil || domain != 3 {
			t.Errorf("replica %s: domain %d, %v", rp.Addr(), domain, err)
		}
	}
}
