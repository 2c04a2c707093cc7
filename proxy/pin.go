package proxy

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Backend session state.
//
// Some statements leave state on the backend connection that ran them,
// state the proxy cannot record and replay on another connection the way
// it replays SET: a temporary table, a named lock (GET_LOCK), a user
// variable assigned inside a statement (SELECT @x := ...). Such a
// statement pins the connection(s) it runs on to the client session:
// every later statement of the session on that data source uses the same
// connection, and no other session gets it, until the state is gone
// (the session's last temporary table dropped, with no lock or variable
// held), the client resets its connection (COM_RESET_CONNECTION), or the
// session ends. A connection that carried such state is reset with
// COM_RESET_CONNECTION before it goes back to its pool (pool.put), so the
// next session finds neither the tables nor the locks.

// backendState is what one statement does to backend session state.
type backendState struct {
	createsTemp []string // CREATE TEMPORARY TABLE names, lower case
	drops       []string // DROP [TEMPORARY] TABLE names, lower case
	locks       bool     // GET_LOCK
	releaseAll  bool     // RELEASE_ALL_LOCKS
	userVars    bool     // @var := ... inside a statement
	// tempDDL: CREATE or DROP TEMPORARY TABLE, which MySQL runs inside an
	// open transaction without committing it.
	tempDDL bool
}

// pins reports whether the statement must run on pinned connections.
func (b backendState) pins() bool {
	return len(b.createsTemp) > 0 || b.locks || b.userVars
}

// touches reports whether the statement changes what the session holds.
func (b backendState) touches() bool {
	return b.pins() || len(b.drops) > 0 || b.releaseAll
}

// stateOf finds what stmt does to backend session state.
func stateOf(stmt ast.StmtNode) backendState {
	var b backendState
	switch st := stmt.(type) {
	case *ast.CreateTableStmt:
		if st.TemporaryKeyword != ast.TemporaryNone && st.Table != nil {
			b.createsTemp = append(b.createsTemp, st.Table.Name.L)
			b.tempDDL = true
		}
	case *ast.DropTableStmt:
		if !st.IsView {
			for _, t := range st.Tables {
				b.drops = append(b.drops, t.Name.L)
			}
			b.tempDDL = st.TemporaryKeyword != ast.TemporaryNone
		}
	}
	f := &stateFinder{b: &b}
	stmt.Accept(f)
	return b
}

// stateFinder looks for named-lock functions and variable assignments.
type stateFinder struct{ b *backendState }

func (f *stateFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.FuncCallExpr:
		switch x.FnName.L {
		case "get_lock":
			f.b.locks = true
		case "release_all_locks":
			f.b.releaseAll = true
		}
	case *ast.VariableExpr:
		if !x.IsSystem && x.Value != nil {
			f.b.userVars = true
		}
	}
	return n, false
}

func (f *stateFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// sessionState is what a session holds on its pinned connections.
type sessionState struct {
	pinned     map[string]*backendConn // data source -> connection
	tempTables map[string]bool
	locks      bool
	userVars   bool
	// tableLocks are the data sources where the session holds LOCK
	// TABLES locks (lock.go).
	tableLocks map[string]bool
	// pinNext: the running statement creates state, so the connections
	// it takes are pinned.
	pinNext bool
	// tempDDL: the running statement is CREATE or DROP TEMPORARY TABLE.
	tempDDL bool
}

func (st *sessionState) empty() bool {
	return len(st.tempTables) == 0 && !st.locks && !st.userVars && len(st.tableLocks) == 0
}

// beginState is called before a statement runs: it pins the connections
// the statement takes when it creates state.
func (s *Session) beginState(b backendState) {
	s.state.pinNext = b.pins()
	s.state.tempDDL = b.tempDDL
	if b.tempDDL {
		// Its OK tells a client that tracks it that the session's state
		// changed (endState takes that back if it fails).
		s.stateChanged = true
	}
}

// endState records what a statement left on the backends (only when it
// succeeded) and unpins the connections once nothing is left.
func (s *Session) endState(b backendState, err error) {
	s.state.pinNext = false
	s.state.tempDDL = false
	if b.tempDDL && err != nil {
		s.stateChanged = false
	}
	if len(s.state.pinned) == 0 {
		return
	}
	if err == nil {
		st := &s.state
		for _, name := range b.createsTemp {
			if st.tempTables == nil {
				st.tempTables = map[string]bool{}
			}
			st.tempTables[name] = true
		}
		for _, name := range b.drops {
			delete(st.tempTables, name)
		}
		st.locks = (st.locks || b.locks) && !b.releaseAll
		st.userVars = st.userVars || b.userVars
	}
	if s.state.empty() {
		s.unpinAll()
	}
}

// pin keeps bc for the session on its data source.
func (s *Session) pin(bc *backendConn) {
	if s.state.pinned == nil {
		s.state.pinned = map[string]*backendConn{}
	}
	s.held.remove(bc)
	bc.pinned = true
	bc.carriesState = true
	s.state.pinned[bc.pool.name] = bc
	s.log.Debug("backend connection pinned to the session", "datasource", bc.pool.name, "backend_conn", bc.id)
}

// pinnedConn returns the session's pinned connection to ds, nil if none.
// A pinned connection that broke is dropped: its state is gone with it.
func (s *Session) pinnedConn(ds string) *backendConn {
	bc := s.state.pinned[ds]
	if bc == nil {
		return nil
	}
	if bc.broken {
		s.log.Warn("the backend connection holding this session's temporary tables or locks was lost", "datasource", ds)
		delete(s.state.pinned, ds)
		bc.pinned = false
		bc.pool.put(bc)
		return nil
	}
	return bc
}

// unpinAll gives the pinned connections back: reset (pool.put does it,
// as they carry state) unless an open transaction still uses them, in
// which case the transaction gives them back when it ends.
func (s *Session) unpinAll() {
	for ds, bc := range s.state.pinned {
		bc.pinned = false
		if s.txn.conns[ds] == bc {
			s.held.add(bc)
			continue
		}
		bc.pool.put(bc)
	}
	s.state = sessionState{}
}

// tempTableError refuses a temporary table named like a sharded or
// broadcast table: it would shadow one data node's physical table on one
// connection, which no routing can express.
func (srv sessionServer) tempTableError(stmt ast.StmtNode) error {
	ct, ok := stmt.(*ast.CreateTableStmt)
	if !ok || ct.TemporaryKeyword == ast.TemporaryNone || ct.Table == nil {
		return nil
	}
	name := ct.Table.Name.O
	kind := ""
	switch {
	case srv.rules.Table(name) != nil:
		kind = "sharded"
	case srv.rules.IsBroadcast(name):
		kind = "broadcast"
	case srv.physicalTable[strings.ToLower(name)] != "" || srv.physicalTable[name] != "":
		kind = "physical"
	default:
		return nil
	}
	return &NotSupportedError{What: "a temporary table named like the " + kind + " table " + name + " (temporary tables live on one backend connection of the default data source; give it a name of its own)"}
}
