package router

import "github.com/pingcap/tidb/pkg/parser/ast"

// Access says whether a read/write group's replicas may answer a plan:
// the router knows it from the statement's tree, so the proxy never reads
// the SQL text again to find out. The zero value (a plan the proxy built
// itself, or rules without !READWRITE_SPLITTING) means the primary.
type Access uint8

// Accesses. Only AccessRead may go to a replica.
const (
	// AccessWrite is a statement that changes data, or that the router
	// does not know to be a plain read.
	AccessWrite Access = iota + 1
	// AccessRead is a plain SELECT: a replica may answer it.
	AccessRead
	// AccessLockingRead is SELECT ... FOR UPDATE / LOCK IN SHARE MODE:
	// its locks are the primary's.
	AccessLockingRead
	// AccessSessionRead reads the session's own state on the backend
	// (LAST_INSERT_ID(), FOUND_ROWS(), @@ and @ variables, named locks),
	// which only the primary's connection has.
	AccessSessionRead
	// AccessWriteRouteOnly carries ShardingSphere's WRITE_ROUTE_ONLY hint.
	AccessWriteRouteOnly
)

// String returns the access as metrics and explain output name it.
func (a Access) String() string {
	switch a {
	case AccessWrite:
		return "write"
	case AccessRead:
		return "read"
	case AccessLockingRead:
		return "locking_read"
	case AccessSessionRead:
		return "session_read"
	case AccessWriteRouteOnly:
		return "write_route_only"
	}
	return "primary"
}

// MarshalText writes the access by name, so plans print readably.
func (a Access) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// sessionFuncs are the functions whose value is the backend session's own
// (or that take its locks): a replica's connection would answer
// differently.
var sessionFuncs = map[string]bool{
	"last_insert_id": true, "found_rows": true, "row_count": true,
	"get_lock": true, "release_lock": true, "release_all_locks": true, "is_used_lock": true, "is_free_lock": true,
	"nextval": true, "lastval": true, "setval": true, "connection_id": true,
	"master_pos_wait": true, "master_gtid_wait": true, "sleep": true,
}

// statementAccess classifies stmt for read/write splitting (h is its
// hints, nil for none).
func statementAccess(stmt ast.StmtNode, h *hints) Access {
	if h != nil && h.writeRouteOnly {
		return AccessWriteRouteOnly
	}
	switch stmt.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
	default:
		return AccessWrite
	}
	f := &accessFinder{access: AccessRead}
	stmt.Accept(f)
	return f.access
}

// accessFinder walks a SELECT for what keeps it on the primary; the
// strongest reason wins (a write over a lock over session state).
type accessFinder struct{ access Access }

func (f *accessFinder) set(a Access) {
	rank := map[Access]int{AccessRead: 0, AccessSessionRead: 1, AccessLockingRead: 2, AccessWrite: 3}
	if rank[a] > rank[f.access] {
		f.access = a
	}
}

func (f *accessFinder) Enter(n ast.Node) (ast.Node, bool) {
	switch x := n.(type) {
	case *ast.SelectStmt:
		if x.SelectIntoOpt != nil {
			f.set(AccessWrite)
		}
		if x.LockInfo != nil && x.LockInfo.LockType != ast.SelectLockNone {
			f.set(AccessLockingRead)
		}
		if x.SelectStmtOpts != nil && x.SelectStmtOpts.CalcFoundRows {
			// It leaves FOUND_ROWS() on the connection that ran it.
			f.set(AccessSessionRead)
		}
	case *ast.VariableExpr:
		f.set(AccessSessionRead)
	case *ast.FuncCallExpr:
		switch {
		case sessionFuncs[x.FnName.L]:
			f.set(AccessSessionRead)
		case x.Schema.L != "" || !nativeFunctions[x.FnName.L]:
			// A stored function (db.f() always is) may write: the
			// SELECT runs on the primary, where its writes belong
			// (a replica would refuse them with 1290, or diverge),
			// counts as the session's write for read-your-writes, and
			// is never run twice or left running after its client
			// gave up, as multiplexing (the proxy's multiplex.go) may
			// do to a plain read.
			f.set(AccessWrite)
		}
	}
	return n, false
}

func (f *accessFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// markAccess records the access on p's plans, when the rules have
// read/write groups or multiplex the plain reads (server.multiplex);
// otherwise every plan goes to its one data source and the plans print
// as before.
func (r *Router) markAccess(p *Prepared, access Access) {
	if len(r.rules.ReadwriteGroups) == 0 && !r.rules.Server.Multiplex {
		return
	}
	if p.static != nil {
		p.static.Access = access
		return
	}
	if p.b != nil {
		p.b = accessBinder{p.b, access}
	}
}

// accessBinder sets the access on each plan its binder makes (each bind
// makes a new plan).
type accessBinder struct {
	b      binder
	access Access
}

func (ab accessBinder) bind(args []any) (*Plan, error) {
	plan, err := ab.b.bind(args)
	if plan != nil {
		plan.Access = ab.access
	}
	return plan, err
}
