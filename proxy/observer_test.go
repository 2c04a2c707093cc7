package proxy

import (
	"sync"
	"testing"

	"github.com/shardflake/shardflake/router"
)

// recorder is an Observer that keeps what it is told.
type recorder struct {
	mu         sync.Mutex
	statements []StatementEvent
	routes     []RouteEvent
	errors     []uint16
	clients    int
	panics     int
}

func (r *recorder) ClientConnected()    { r.mu.Lock(); r.clients++; r.mu.Unlock() }
func (r *recorder) ClientDisconnected() { r.mu.Lock(); r.clients--; r.mu.Unlock() }
func (r *recorder) Statement(e StatementEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.statements = append(r.statements, e)
}
func (r *recorder) Route(e RouteEvent) { r.mu.Lock(); r.routes = append(r.routes, e); r.mu.Unlock() }
func (r *recorder) Error(code uint16)  { r.mu.Lock(); r.errors = append(r.errors, code); r.mu.Unlock() }
func (r *recorder) Panic()             { r.mu.Lock(); r.panics++; r.mu.Unlock() }

func TestObserverSeesStatementsRoutesAndErrors(t *testing.T) {
	rec := &recorder{}
	e := startEnv(t, envOptions{observer: rec})
	createTables(t, e)
	db := e.open(t)
	rec.mu.Lock()
	rec.statements, rec.routes, rec.errors = nil, nil, nil
	rec.mu.Unlock()
	if _, err := db.Exec("INSERT INTO t_order (order_id, user_id) VALUES (1, 0), (2, 1)"); err != nil {
		t.Fatal(err)
	}
	db.Exec("SELECT * FROM no_such_table")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.statements) != 2 {
		t.Fatalf("%d statement events, want 2: %+v", len(rec.statements), rec.statements)
	}
	ins := rec.statements[0]
	if ins.Kind != router.KindInsert || len(ins.Routes) != 2 || ins.Code != 0 || ins.ConnID == 0 {
		t.Errorf("INSERT event: %+v", ins)
	}
	if rec.statements[1].Code != 1146 {
		t.Errorf("failed statement event: code %d, want 1146", rec.statements[1].Code)
	}
	dss := map[string]bool{}
	for _, r := range rec.routes {
		dss[r.DataSource] = true
	}
	if !dss["ds_0"] || !dss["ds_1"] {
		t.Errorf("route events for %v, want ds_0 and ds_1", dss)
	}
	if len(rec.errors) != 1 || rec.errors[0] != 1146 {
		t.Errorf("error events %v, want [1146]", rec.errors)
	}
	if rec.clients < 1 {
		t.Errorf("%d clients connected", rec.clients)
	}
}
