package proxy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// monitorInterval is how often each replica is probed: a replica that
// stops replicating is excluded within this (plus one probe), and one that
// recovers comes back as fast.
const monitorInterval = 500 * time.Millisecond

// startMonitors starts one monitor goroutine per replica.
func (rw *readwriteSplit) startMonitors() {
	for _, g := range rw.order {
		for _, rp := range g.replicas {
			rw.wg.Add(1)
			go rw.monitor(g, rp)
		}
	}
}

// monitor probes rp every monitorInterval on a connection of its own
// until the split is closed.
func (rw *readwriteSplit) monitor(g *rwGroup, rp *replica) {
	defer rw.wg.Done()
	var bc *backendConn
	defer func() {
		if bc != nil {
			bc.close()
		}
	}()
	t := time.NewTicker(monitorInterval)
	defer t.Stop()
	for {
		if bc == nil {
			ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
			c, err := dialBackend(ctx, rp.pool)
			cancel()
			if err != nil {
				rp.lag.Store(-1)
				rp.markExcluded("unreachable: " + errLine(err))
			} else {
				bc = c
			}
		}
		if bc != nil {
			if err := rp.probe(bc, g); err != nil {
				rp.lag.Store(-1)
				rp.markExcluded("probe failed: " + errLine(err))
				bc.close()
				bc = nil
			}
		}
		rp.probed.Store(true)
		select {
		case <-rw.done:
			return
		case <-t.C:
		}
	}
}

// probe reads the replica's replication state and marks it healthy or
// excluded. An error means the connection is no longer usable.
func (rp *replica) probe(bc *backendConn, g *rwGroup) error {
	maxLag := g.cfg.MaxReplicationLag
	bc.nc.SetDeadline(time.Now().Add(probeTimeout))
	defer bc.nc.SetDeadline(time.Time{})
	// MariaDB's SHOW ALL SLAVES STATUS is SHOW SLAVE STATUS plus
	// Gtid_Slave_Pos (one row per replication connection; the default
	// connection is the only one here). Reading the position there keeps
	// the probe off the replica's Com_select. Other servers get SHOW
	// SLAVE STATUS, then SHOW REPLICA STATUS (MySQL 8.4).
	var cols []string
	var rows [][]*string
	var err error
	for _, q := range []string{"SHOW ALL SLAVES STATUS", "SHOW SLAVE STATUS", "SHOW REPLICA STATUS"} {
		cols, rows, err = backendRows(bc, q)
		var my *mysql.MyError
		if !errors.As(err, &my) {
			break
		}
	}
	if err != nil {
		return err
	}
	if len(rows) == 0 {
		rp.lag.Store(-1)
		rp.markExcluded("not a replica: SHOW SLAVE STATUS is empty")
		return nil
	}
	col := func(names ...string) *string {
		for i, c := range cols {
			for _, name := range names {
				if strings.EqualFold(c, name) {
					return rows[0][i]
				}
			}
		}
		return nil
	}
	pos := col("Gtid_Slave_Pos")
	if pos == nil && !statusHasColumn(cols, "Gtid_Slave_Pos") {
		v, null, err := queryValue(bc, "SELECT @@gtid_slave_pos")
		if err != nil {
			return err
		}
		if !null {
			pos = &v
		}
	}
	if pos != nil {
		if p, err := parseGTIDPos(*pos); err == nil {
			rp.gtid.Store(&p)
		}
	}
	sbm := col("Seconds_Behind_Master", "Seconds_Behind_Source")
	if sbm == nil && orphaned(col, g) {
		rp.lag.Store(-1)
		rp.markHealthy("primary unreachable: serves the transactions it applied (" + text(col("Gtid_Slave_Pos")) + "); no replica is promoted")
		return nil
	}
	if sbm == nil {
		rp.lag.Store(-1)
		rp.markExcluded(fmt.Sprintf("replication stopped (Seconds_Behind_Master is NULL; Slave_IO_Running=%s, Slave_SQL_Running=%s)", text(col("Slave_IO_Running", "Replica_IO_Running")), text(col("Slave_SQL_Running", "Replica_SQL_Running"))))
		return nil
	}
	lag, err := strconv.ParseInt(*sbm, 10, 64)
	if err != nil {
		return fmt.Errorf("Seconds_Behind_Master %q: %w", *sbm, err)
	}
	rp.lag.Store(lag)
	if maxLag > 0 && time.Duration(lag)*time.Second > maxLag {
		rp.markExcluded(fmt.Sprintf("lagging %ds behind the primary (maxReplicationLag %s)", lag, maxLag))
		return nil
	}
	rp.markHealthy("")
	return nil
}

// orphaned reports whether a replica whose Seconds_Behind_Master is NULL
// only lost its primary: its IO thread is reconnecting, its SQL thread
// runs and has applied every transaction it received (Gtid_Slave_Pos
// covers Gtid_IO_Pos), and the proxy cannot log in to the primary either.
// Nothing can be written then, so the replica is as fresh as the data
// gets, and plain reads go on there. A replica stopped by an operator,
// or one cut off from a primary that still takes writes, is excluded.
func orphaned(col func(...string) *string, g *rwGroup) bool {
	if text(col("Slave_IO_Running", "Replica_IO_Running")) != "Connecting" || text(col("Slave_SQL_Running", "Replica_SQL_Running")) != "Yes" {
		return false
	}
	received, applied := col("Gtid_IO_Pos"), col("Gtid_Slave_Pos")
	if received == nil || applied == nil {
		return false
	}
	rpos, err1 := parseGTIDPos(*received)
	apos, err2 := parseGTIDPos(*applied)
	if err1 != nil || err2 != nil || !apos.covers(rpos) {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	return probe(ctx, g.primaryProbe) != nil
}

func text(p *string) string {
	if p == nil {
		return "NULL"
	}
	return *p
}

// markExcluded takes the replica out of the reads' candidates.
func (rp *replica) markExcluded(reason string) {
	old := rp.reason.Swap(&reason)
	if rp.healthy.Swap(false) {
		rp.exclusions.Add(1)
		rp.pool.log.Warn("replica excluded from reads", "group", rp.group, "reason", reason)
	} else if old == nil || *old != reason {
		rp.pool.log.Debug("replica still excluded", "group", rp.group, "reason", reason)
	}
}

// markHealthy puts the replica back among the candidates; note, when
// set, says how it serves (SHOW READWRITE_SPLITTING STATUS, /readyz).
func (rp *replica) markHealthy(note string) {
	rp.reason.Store(nil)
	old := rp.note.Load()
	switch {
	case note == "":
		rp.note.Store(nil)
	case old == nil || *old != note:
		rp.note.Store(&note)
		rp.pool.log.Warn("replica serves reads", "group", rp.group, "note", note)
	}
	if !rp.healthy.Swap(true) && note == "" {
		rp.pool.log.Info("replica serves reads", "group", rp.group, "lag_seconds", rp.lag.Load())
	}
}

func statusHasColumn(cols []string, name string) bool {
	for _, c := range cols {
		if strings.EqualFold(c, name) {
			return true
		}
	}
	return false
}
