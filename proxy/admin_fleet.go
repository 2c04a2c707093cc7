package proxy

import (
	"context"
	"strings"
	"time"
)

// The fleet's admin statement (fleet.go):
//
//	SHOW COMPUTE NODES
//
// lists the proxies of the fleet from their member records in etcd (this
// proxy's own row live), or this proxy alone when it is standalone: id,
// MySQL and admin (HTTP) addresses, state (ready, draining, stopping),
// mode, worker id, connection-id prefix, rules digest, sessions, start
// time, and why the rules in etcd are not in force there when they are
// not. It needs rulesAdmin, as the reload statements do.
const adminComputeNodes adminKind = 300

// matchFleetAdmin recognises SHOW COMPUTE NODES after its first word.
func matchFleetAdmin(lx adminLexer, first string) (st adminStmt, ok bool, err error) {
	if strings.EqualFold(first, "SHOW") && lx.keywords("COMPUTE", "NODES") {
		st.kind = adminComputeNodes
		return st, true, lx.end()
	}
	return st, false, nil
}

// runFleetAdmin answers SHOW COMPUTE NODES.
func (s *Session) runFleetAdmin(st adminStmt) error {
	if !s.privileges().RulesAdmin {
		return privilegeNeeded("RULES ADMIN (server.users rulesAdmin: true)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	nodes, err := s.srv.computeNodes(ctx)
	if err != nil {
		return err
	}
	mode := "Standalone"
	if s.srv.fleet() != nil {
		mode = "Cluster"
	}
	cols := stringColumns("instance_id", "mysql_address", "admin_address", "status", "mode_type", "worker_id", "conn_id_prefix", "rules_digest", "sessions", "started", "note")
	var rows []Row
	for _, n := range nodes {
		var worker any
		if n.WorkerID >= 0 {
			worker = n.WorkerID
		}
		var note any
		if n.Note != "" {
			note = n.Note
		}
		rows = append(rows, rowOf(n.ID, n.MySQL, n.Admin, n.State, mode, worker, n.ConnPrefix, n.Digest, n.Sessions, n.Started.Format(time.RFC3339), note))
	}
	return s.writeRows(newMemStream(cols, rows), textOutput)
}
