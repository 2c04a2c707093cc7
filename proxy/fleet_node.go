package proxy

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// A proxy as a compute node: its identity, its connection ids, and the
// KILL that reaches the proxy owning a connection (fleet.go).

// nodeIdentity is what SHOW COMPUTE NODES says of this proxy.
type nodeIdentity struct {
	mu           sync.Mutex
	id           string
	mysql, admin string
}

// connIDs issues the connection ids: the prefix (the worker id, or the
// one the fleet gave) in the high bits, a counter below. go-mysql's own
// counter is replaced in the greeting (announceConn).
type connIDs struct {
	prefix atomic.Uint32
	next   atomic.Uint32
}

// SetNodeAddrs sets the addresses SHOW COMPUTE NODES gives for this
// proxy when it is not in a fleet (Fleet.Join sets them there).
func (srv *Server) SetNodeAddrs(mysqlAddr, adminAddr string) {
	srv.node.mu.Lock()
	defer srv.node.mu.Unlock()
	srv.node.mysql, srv.node.admin = mysqlAddr, adminAddr
}

// defaultNodeID names a proxy outside a fleet: host and process id.
func defaultNodeID() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

// workerID returns the worker id of the first Snowflake key generator
// (by name): datacenter id and worker id as one number, the prefix of
// this proxy's connection ids; -1 without one.
func (srv *Server) workerID() int {
	names := make([]string, 0, len(srv.keys))
	for name := range srv.keys {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		st, ok := srv.keys[name].(statser)
		if !ok {
			continue
		}
		s := st.Stats()
		if s.Source == 0 {
			continue
		}
		return (s.DatacenterID<<5 | s.WorkerID) & maxConnPrefix
	}
	return -1
}

// connPrefix is the prefix of the connection ids this proxy issues.
func (srv *Server) connPrefix() int { return int(srv.connIDs.prefix.Load()) }

// newConnID returns a connection id no session of this proxy holds.
func (srv *Server) newConnID() uint32 {
	prefix := srv.connIDs.prefix.Load() << connIDBits
	for {
		n := srv.connIDs.next.Add(1) & (1<<connIDBits - 1)
		if n == 0 {
			continue
		}
		id := prefix | n
		srv.mu.Lock()
		_, taken := srv.sessions[id]
		srv.mu.Unlock()
		if !taken {
			return id
		}
	}
}

// localNode is this proxy's record.
func (srv *Server) localNode() fleetNode {
	srv.node.mu.Lock()
	n := fleetNode{ID: srv.node.id, MySQL: srv.node.mysql, Admin: srv.node.admin}
	srv.node.mu.Unlock()
	if n.ID == "" {
		n.ID = defaultNodeID()
	}
	if n.MySQL == "" {
		srv.mu.Lock()
		for l := range srv.listeners {
			n.MySQL = l.Addr().String()
		}
		srv.mu.Unlock()
	}
	n.Digest = srv.RulesDigest()
	n.WorkerID = srv.workerID()
	n.ConnPrefix = srv.connPrefix()
	n.Sessions = srv.Clients()
	n.Started = srv.started.UTC().Truncate(time.Second)
	switch {
	case srv.shutdown.Load():
		n.State = nodeStopping
	case srv.draining.Load():
		n.State = nodeDraining
	default:
		n.State = nodeReady
	}
	if srv.fleet() != nil {
		if note := srv.fleet().note.Load(); note != nil {
			n.Note = *note
		}
	}
	return n
}

// computeNodes lists the proxies of the fleet, or this one alone.
func (srv *Server) computeNodes(ctx context.Context) ([]fleetNode, error) {
	if srv.fleet() == nil {
		return []fleetNode{srv.localNode()}, nil
	}
	return srv.fleet().members(ctx)
}

// killSession is KILL QUERY id (query) or KILL id, sent by session from.
// A connection of another proxy of the fleet (its id's prefix says
// which) is killed there.
func (srv *Server) killSession(from *Session, id uint64, query bool) error {
	admin := from.privileges().RulesAdmin
	if srv.fleet() != nil && id <= 0xffffffff && int(id>>connIDBits) != srv.connPrefix() {
		return srv.fleet().forwardKill(context.Background(), killRequest{Conn: uint32(id), Query: query, User: from.user, Admin: admin, From: srv.fleet().nodeID})
	}
	return srv.killLocal(from, id, query, from.user, admin)
}

// killLocal kills connection id of this proxy for user (from, when the
// KILL came from a session of this proxy). As MariaDB: a user may kill
// its own connections, an admin (rulesAdmin) any.
func (srv *Server) killLocal(from *Session, id uint64, query bool, user string, admin bool) error {
	target := srv.session(id)
	if target == nil {
		return &UnknownThreadError{ID: id}
	}
	if target.shownUser() != user && !admin {
		return &KillDeniedError{ID: id}
	}
	if query {
		target.watch.cancel(ErrQueryInterrupted) // KILL QUERY
		return nil
	}
	if target == from {
		// MySQL closes the connection without an answer.
		from.quit = true
		return nil
	}
	target.kill(ErrQueryInterrupted)
	return nil
}

// pokeFleet writes this proxy's member record now (its state changed).
func (srv *Server) pokeFleet() {
	if srv.fleet() != nil {
		srv.fleet().poke()
	}
}

// setDraining starts (DRAIN COMPUTE NODE) or ends (RESUME) draining:
// /readyz answers 503 while it lasts.
func (srv *Server) setDraining(on bool) {
	srv.draining.Store(on)
	srv.pokeFleet()
}

// drainNode is DRAIN (on) or RESUME COMPUTE NODE [id]: this proxy when id
// is empty or its own, else the proxy of the fleet it names. It reports
// whether this proxy was the one.
func (srv *Server) drainNode(ctx context.Context, id string, on bool) (here bool, err error) {
	if id == "" || id == srv.localNode().ID {
		srv.setDraining(on)
		return true, nil
	}
	if srv.fleet() == nil {
		return false, unknownNode(id)
	}
	op := "resume"
	if on {
		op = "drain"
	}
	return false, srv.fleet().forwardNodeOp(ctx, id, op)
}

// fleet returns this proxy's fleet membership; nil when standalone.
func (srv *Server) fleet() *Fleet { return srv.fleetRef.Load() }
