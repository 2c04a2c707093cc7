package mariadbtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Replicated is a primary with replicas using MariaDB GTID replication.
type Replicated struct {
	Primary  *Server
	Replicas []*Server
}

// StartReplicated launches a primary (binary log on, server id 1, GTID
// domain domain) and n replicas (server ids 2..n+1) replicating from it
// with CHANGE MASTER TO ... MASTER_USE_GTID=slave_pos, for one test (a
// replica that restarts resumes replicating by itself). The
// databases of opts are created on the primary and reach the replicas by
// replication; it returns once every replica has applied them.
func StartReplicated(t testing.TB, n int, domain int, opts Options) *Replicated {
	t.Helper()
	Require(t, Available())
	r, err := LaunchReplicated(n, domain, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// LaunchReplicated is StartReplicated for callers that close the servers
// themselves (Close).
func LaunchReplicated(n int, domain int, opts Options) (*Replicated, error) {
	r := &Replicated{Replicas: make([]*Server, n)}
	errs := make([]error, n+1)
	var wg sync.WaitGroup
	wg.Go(func() {
		o := opts
		o.Args = append([]string{"--log-bin=mariadb-bin", "--server-id=1", "--gtid-domain-id=" + strconv.Itoa(domain), "--binlog-format=ROW"}, opts.Args...)
		r.Primary, errs[0] = Launch(o)
	})
	for i := range n {
		wg.Go(func() {
			o := Options{Args: append([]string{"--server-id=" + strconv.Itoa(i+2), "--gtid-domain-id=" + strconv.Itoa(domain), "--relay-log=relay-bin"}, opts.Args...)}
			r.Replicas[i], errs[i+1] = Launch(o)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		r.Close()
		return nil, err
	}
	for _, rp := range r.Replicas {
		if err := rp.replicateFrom(r.Primary); err != nil {
			r.Close()
			return nil, err
		}
	}
	if err := r.WaitReplicas(30 * time.Second); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// replicateFrom points the server at primary and starts replicating.
func (s *Server) replicateFrom(primary *Server) error {
	db, err := s.DB("")
	if err != nil {
		return err
	}
	defer db.Close()
	for _, q := range []string{
		fmt.Sprintf("CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=%d, MASTER_USER='root', MASTER_PASSWORD='', MASTER_CONNECT_RETRY=1, MASTER_USE_GTID=slave_pos", primary.Port()),
		"START SLAVE",
	} {
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("mariadbtest: replica %s: %s: %w", s.Addr(), q, err)
		}
	}
	return nil
}

// WaitReplicas waits until every replica has applied the primary's
// current binary log position (MASTER_GTID_WAIT).
func (r *Replicated) WaitReplicas(timeout time.Duration) error {
	pdb, err := r.Primary.DB("")
	if err != nil {
		return err
	}
	defer pdb.Close()
	var pos string
	if err := pdb.QueryRow("SELECT @@gtid_binlog_pos").Scan(&pos); err != nil {
		return fmt.Errorf("mariadbtest: primary position: %w", err)
	}
	for _, rp := range r.Replicas {
		if err := rp.WaitGTID(pos, timeout); err != nil {
			return err
		}
	}
	return nil
}

// WaitGTID waits until the server (a replica) has applied position pos.
func (s *Server) WaitGTID(pos string, timeout time.Duration) error {
	db, err := s.DB("")
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout+5*time.Second)
	defer cancel()
	var res sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT MASTER_GTID_WAIT(?, ?)", pos, timeout.Seconds()).Scan(&res); err != nil {
		return fmt.Errorf("mariadbtest: replica %s: MASTER_GTID_WAIT: %w", s.Addr(), err)
	}
	if !res.Valid || res.Int64 != 0 {
		return fmt.Errorf("mariadbtest: replica %s did not reach %s within %s%s", s.Addr(), pos, timeout, tail(readFrom(s.logPath(), 0)))
	}
	return nil
}

// Close stops every server.
func (r *Replicated) Close() {
	if r.Primary != nil {
		r.Primary.Close()
	}
	for _, rp := range r.Replicas {
		if rp != nil {
			rp.Close()
		}
	}
}
