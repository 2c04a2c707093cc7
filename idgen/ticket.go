package idgen

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// TicketServer is one of a TICKET generator's ticket servers: a database
// with a Tickets64-shaped table whose AUTO_INCREMENT hands out the ids.
// The proxy implements it over dedicated backend connections.
type TicketServer interface {
	// Residue reads auto_increment_increment and auto_increment_offset as
	// the ticket connections see them.
	Residue(ctx context.Context) (increment, offset int64, err error)
	// Tickets takes len(dst) tickets in one round trip: one
	// REPLACE INTO Tickets64 (stub) VALUES ('a') and its LAST_INSERT_ID
	// per ticket.
	Tickets(ctx context.Context, dst []int64) error
	// Raise makes the server's next ticket above floor.
	Raise(ctx context.Context, floor int64) error
	// NextTicket returns a lower bound of the server's next ticket (its
	// table's AUTO_INCREMENT), 0 when it does not know one.
	NextTicket(ctx context.Context) (int64, error)
	// Addr names the server for errors and state.
	Addr() string
}

// TICKET props beyond the data sources'.
const (
	PropStub        = "stub"
	PropBatch       = "max-batch"
	PropConnections = "connections"
)

// TICKET defaults.
const (
	DefaultTicketTable       = "Tickets64"
	DefaultTicketStub        = "a"
	DefaultTicketBatch       = 64
	DefaultTicketConnections = 4
)

// TicketConfig is a TICKET generator's configuration.
type TicketConfig struct {
	Store StoreConfig
	Table string
	Stub  string
	// MaxBatch is how many tickets one round trip takes (the REPLACEs
	// are sent as one multi-statement); Connections how many ticket
	// connections each server gets.
	MaxBatch    int
	Connections int
}

// ParseTicketProps reads a TICKET generator's props.
func ParseTicketProps(props map[string]string) (TicketConfig, error) {
	p, err := readProps(TypeTicket, props, []string{PropURLs, PropUsername, PropPassword, PropTable, PropStub,
		PropBatch, PropConnections, PropFetchTimeout, PropRetryAfter})
	if err != nil {
		return TicketConfig{}, err
	}
	c := TicketConfig{Table: DefaultTicketTable, Stub: DefaultTicketStub, MaxBatch: DefaultTicketBatch, Connections: DefaultTicketConnections}
	c.Store = p.store(TypeTicket, PropURLs)
	if v, ok := props[PropTable]; ok {
		c.Table = strings.TrimSpace(v)
		if !identRe.MatchString(c.Table) {
			p.fail(PropTable, v, "want a plain table name")
		}
	}
	if v, ok := props[PropStub]; ok {
		c.Stub = v
		if len(v) != 1 || v == "'" || v == "\\" {
			p.fail(PropStub, v, "want one character, as stub CHAR(1) holds")
		}
	}
	c.MaxBatch = p.int(PropBatch, c.MaxBatch)
	c.Connections = p.int(PropConnections, c.Connections)
	if c.MaxBatch < 1 || c.MaxBatch > 1000 {
		p.fail(PropBatch, fmt.Sprint(c.MaxBatch), "outside [1, 1000]")
	}
	if c.Connections < 1 || c.Connections > 64 {
		p.fail(PropConnections, fmt.Sprint(c.Connections), "outside [1, 64]")
	}
	if p.err != nil {
		return TicketConfig{}, typed(TypeTicket, p.err)
	}
	return c, nil
}

func checkTicket(props map[string]string) error {
	_, err := ParseTicketProps(props)
	return err
}

// ErrResidueOverlap: two ticket servers' auto_increment settings give
// ids of the same residue class, so they would issue the same ids.
var ErrResidueOverlap = errors.New("ticket: ticket servers overlap")

// ResidueError names the two servers whose ids could coincide, or one
// server whose settings are unusable.
type ResidueError struct {
	A, B       string
	IncA, OffA int64
	IncB, OffB int64
	Reason     string
}

// Error describes the cause and the remedy.
func (e *ResidueError) Error() string {
	if e.B == "" {
		return fmt.Sprintf("ticket: server %s (auto_increment_increment %d, auto_increment_offset %d): %s", e.A, e.IncA, e.OffA, e.Reason)
	}
	return fmt.Sprintf("ticket: servers %s (auto_increment_increment %d, auto_increment_offset %d) and %s (increment %d, offset %d) hand out the same ids; give each server its own residue class, e.g. increment 2 with offsets 1 and 2",
		e.A, e.IncA, e.OffA, e.B, e.IncB, e.OffB)
}

// Is makes a ResidueError match ErrResidueOverlap.
func (e *ResidueError) Is(target error) bool { return target == ErrResidueOverlap }

// ResiduesOverlap reports whether ids offset+k·increment of two servers
// can coincide: exactly when the offsets agree modulo the gcd of the
// increments.
func ResiduesOverlap(incA, offA, incB, offB int64) bool {
	g := gcd(incA, incB)
	d := (offA - offB) % g
	return d == 0
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// ticketServer is one server's state.
type ticketServer struct {
	srv TicketServer

	mu       sync.Mutex
	inc, off int64 // 0 until read
	// refused is permanent until Adopt (guard) or a reconnect with good
	// settings: overlapping residue or a ticket outside its class.
	refused error
	err     error
	errAt   time.Time
	checked bool
	// probe is non-nil while a background probe of a failed server runs,
	// closed when it ends: callers go to the other servers meanwhile, so
	// a server that does not answer (packets dropped, not refused) costs
	// the probe its fetch timeout, not a caller.
	probe  chan struct{}
	issued uint64
	trips  uint64
	fails  uint64
}

// Ticket is Flickr's ticket servers: each id is one REPLACE INTO
// Tickets64 on one of several servers whose auto_increment settings give
// each its own residue class; calls go round-robin over the healthy
// servers and fail over to the next when one does not answer. The
// servers never hand out an id twice, so neither does the generator,
// across restarts and proxies. It is safe for concurrent use.
type Ticket struct {
	cfg     TicketConfig
	servers []*ticketServer
	guard   TicketGuard
	rr      atomic.Uint64
	// residueMu serialises reading and checking residue classes.
	residueMu sync.Mutex

	mu     sync.Mutex
	floor  int64
	closed bool
	waited time.Duration
}

// TicketGuard returns the largest key at or above from among the keys
// of the residue class id % inc = off % inc that the tables a TICKET
// generator fills already hold, 0 when there is none. Only those keys
// can meet a server's tickets: with several proxies sharing the
// servers, the other classes' keys run ahead of a server's next ticket
// without ever colliding with it.
type TicketGuard func(ctx context.Context, from, inc, off int64) (int64, error)

// NewTicket builds a TICKET generator. It reads every server's residue
// class and refuses (a *ResidueError) when two overlap or one is
// unusable; a server that does not answer is checked when it first does.
func NewTicket(ctx context.Context, cfg TicketConfig, servers []TicketServer, guard TicketGuard) (*Ticket, error) {
	g := &Ticket{cfg: cfg, guard: guard}
	for _, s := range servers {
		g.servers = append(g.servers, &ticketServer{srv: s})
	}
	for _, s := range g.servers {
		cctx, cancel := context.WithTimeout(ctx, cfg.Store.FetchTimeout)
		err := g.readResidue(cctx, s)
		cancel()
		var re *ResidueError
		if errors.As(err, &re) {
			return nil, err
		}
	}
	return g, nil
}

// readResidue reads s's settings and checks them against the others'.
func (g *Ticket) readResidue(ctx context.Context, s *ticketServer) error {
	inc, off, err := s.srv.Residue(ctx)
	// Checked and stored under one lock: two servers read at once see
	// each other. The read itself is outside it, so a server that does
	// not answer holds up no other server's check.
	g.residueMu.Lock()
	defer g.residueMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trips++
	if err != nil {
		s.err, s.errAt = &StoreError{Type: TypeTicket, Addr: s.srv.Addr(), Err: err}, time.Now()
		s.fails++
		return s.err
	}
	if inc < 1 || off < 1 || off > inc {
		s.refused = &ResidueError{A: s.srv.Addr(), IncA: inc, OffA: off, Reason: "want 1 <= auto_increment_offset <= auto_increment_increment"}
		return s.refused
	}
	for _, o := range g.servers {
		if o == s {
			continue
		}
		o.mu.Lock()
		oi, oo := o.inc, o.off
		o.mu.Unlock()
		if oi > 0 && ResiduesOverlap(inc, off, oi, oo) {
			s.refused = &ResidueError{A: o.srv.Addr(), IncA: oi, OffA: oo, B: s.srv.Addr(), IncB: inc, OffB: off}
			return s.refused
		}
	}
	s.inc, s.off, s.err, s.refused = inc, off, nil, nil
	return nil
}

// MaxBatch is how many tickets one round trip takes.
func (g *Ticket) MaxBatch() int { return g.cfg.MaxBatch }

// NextKeys fills dst with tickets from one server, trying the servers in
// turn; the error lists every server's cause when none could issue.
// Servers believed healthy are tried first; a failed server whose retry
// is due is probed in the background, and only when no healthy server
// could issue does the call wait for those probes and try the servers
// that came back.
func (g *Ticket) NextKeys(dst []int64) error {
	if len(dst) < 1 || len(dst) > g.cfg.MaxBatch {
		return &BatchSizeError{N: len(dst), Max: g.cfg.MaxBatch}
	}
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed {
		return ErrClosed
	}
	start := time.Now()
	defer func() {
		g.mu.Lock()
		g.waited += time.Since(start)
		g.mu.Unlock()
	}()
	n := uint64(len(g.servers))
	first := g.rr.Add(1)
	order := make([]*ticketServer, n)
	for i := range order {
		order[i] = g.servers[(first+uint64(i))%n]
	}
	var causes []error
	var later []*ticketServer
	for _, s := range order {
		if !g.healthy(s) {
			g.probeDue(s)
			later = append(later, s)
		}
	}
	for _, s := range order {
		if !g.healthy(s) {
			continue
		}
		err := g.take(s, dst)
		if err == nil {
			return nil
		}
		causes = append(causes, err)
	}
	for _, s := range later {
		s.mu.Lock()
		probe := s.probe
		s.mu.Unlock()
		if probe != nil {
			<-probe // bounded by the fetch timeout
		}
		err := g.take(s, dst)
		if err == nil {
			return nil
		}
		causes = append(causes, err)
	}
	return &NoTicketError{Causes: causes}
}

// healthy reports whether s answered last time and is not refused.
func (g *Ticket) healthy(s *ticketServer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused == nil && s.err == nil && s.inc > 0
}

// probeDue starts a background probe of a failed server whose retry is
// due: reading its residue class again, which also checks its settings.
func (g *Ticket) probeDue(s *ticketServer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refused != nil || s.probe != nil || s.err != nil && time.Since(s.errAt) < g.cfg.Store.RetryAfter {
		return
	}
	done := make(chan struct{})
	s.probe = done
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), g.cfg.Store.FetchTimeout)
		g.readResidue(ctx, s)
		cancel()
		s.mu.Lock()
		s.probe = nil
		s.mu.Unlock()
		close(done)
	}()
}

// NoTicketError says that no ticket server could issue, with each
// server's cause; errors.Is matches any cause's sentinel.
type NoTicketError struct {
	Causes []error
}

// Error describes every cause for a client.
func (e *NoTicketError) Error() string {
	parts := make([]string, len(e.Causes))
	for i, c := range e.Causes {
		parts[i] = c.Error()
	}
	return "ticket: no ticket server can issue: " + strings.Join(parts, "; ")
}

// Unwrap returns the causes.
func (e *NoTicketError) Unwrap() []error { return e.Causes }

// take fills dst from s, or says why s cannot.
func (g *Ticket) take(s *ticketServer, dst []int64) error {
	s.mu.Lock()
	refused, err, known := s.refused, s.err, s.inc > 0
	s.mu.Unlock()
	if refused != nil {
		return refused
	}
	if err != nil || !known {
		// Only a probe brings a failed server back (probeDue): its
		// settings may have changed with a restart, and a caller should
		// not wait for a server that does not answer.
		if err == nil {
			err = &StoreError{Type: TypeTicket, Addr: s.srv.Addr(), Err: errors.New("not checked yet")}
		}
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), g.cfg.Store.FetchTimeout)
	defer cancel()
	g.mu.Lock()
	floor := g.floor
	g.mu.Unlock()
	s.mu.Lock()
	inc, off, checked := s.inc, s.off, s.checked
	s.mu.Unlock()
	// A server's first tickets must not meet a key of its class that the
	// tables already hold (the server was reset, or keys were written
	// behind the generator's back). The tables are read before the
	// tickets are taken: keys that other proxies write afterwards came
	// from this server after these tickets and lie above them. The
	// server's AUTO_INCREMENT bounds the read from below.
	from, classMax := int64(0), int64(0)
	if !checked && g.guard != nil {
		var err error
		if from, err = s.srv.NextTicket(ctx); err != nil {
			return g.storeFailed(s, err)
		}
		if classMax, err = g.guard(ctx, from, inc, off); err != nil {
			return fmt.Errorf("ticket: checking the tables' keys before %s's first ticket: %w", s.srv.Addr(), err)
		}
	}
	for attempt := 0; ; attempt++ {
		terr := s.srv.Tickets(ctx, dst)
		s.mu.Lock()
		s.trips++
		if terr != nil {
			s.mu.Unlock()
			return g.storeFailed(s, terr)
		}
		for _, id := range dst {
			if id%inc != off%inc {
				// The server's settings changed under its connections:
				// its ids may now be another server's.
				s.refused = &ResidueError{A: s.srv.Addr(), IncA: inc, OffA: off, Reason: fmt.Sprintf("issued ticket %d outside its residue class; the server's auto_increment settings changed", id)}
				err := s.refused
				s.mu.Unlock()
				return err
			}
		}
		low := dst[0]
		for _, id := range dst {
			low = min(low, id)
		}
		if low > floor {
			if !checked && g.guard != nil {
				if low < from {
					// The counter went below what it said just before:
					// the read did not cover these tickets.
					s.mu.Unlock()
					return &StoreError{Type: TypeTicket, Addr: s.srv.Addr(), Err: fmt.Errorf("ticket %d below the table's AUTO_INCREMENT %d read just before", low, from)}
				}
				if classMax >= low {
					s.refused = &AdoptError{Type: TypeTicket, TableMax: classMax, Next: low, Class: fmt.Sprintf("id %% %d = %d", inc, off%inc)}
					err := s.refused
					s.mu.Unlock()
					return err
				}
			}
			s.checked = true
			s.issued += uint64(len(dst))
			s.mu.Unlock()
			return nil
		}
		s.mu.Unlock()
		if attempt > 0 {
			return &StoreError{Type: TypeTicket, Addr: s.srv.Addr(), Err: fmt.Errorf("tickets still at or below the adopted floor %d after raising it", floor)}
		}
		if err := s.srv.Raise(ctx, floor); err != nil {
			return &StoreError{Type: TypeTicket, Addr: s.srv.Addr(), Err: err}
		}
	}
}

// storeFailed marks s failed with err and returns it as a StoreError.
func (g *Ticket) storeFailed(s *ticketServer, err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fails++
	se := &StoreError{Type: TypeTicket, Addr: s.srv.Addr(), Err: err}
	s.err, s.errAt = se, time.Now()
	return se
}

// Adopt moves every server's next ticket above floor. A server that does
// not answer is raised when a ticket at or below floor comes back from it.
func (g *Ticket) Adopt(floor int64) error {
	g.mu.Lock()
	g.floor = max(g.floor, floor)
	g.mu.Unlock()
	var errs []error
	for _, s := range g.servers {
		ctx, cancel := context.WithTimeout(context.Background(), g.cfg.Store.FetchTimeout)
		err := s.srv.Raise(ctx, floor)
		cancel()
		s.mu.Lock()
		if _, ok := s.refused.(*AdoptError); ok {
			s.refused, s.checked = nil, false
		}
		s.mu.Unlock()
		if err != nil {
			errs = append(errs, &StoreError{Type: TypeTicket, Addr: s.srv.Addr(), Err: err})
		}
	}
	return errors.Join(errs...)
}

// Close makes later calls fail with ErrClosed.
func (g *Ticket) Close() error {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	return nil
}

// State is a snapshot for admin statements and metrics.
func (g *Ticket) State() GeneratorState {
	g.mu.Lock()
	st := GeneratorState{Floor: g.floor, Waited: g.waited}
	g.mu.Unlock()
	healthy := 0
	var causes []string
	for _, s := range g.servers {
		s.mu.Lock()
		ss := ServerState{Addr: s.srv.Addr(), Increment: s.inc, Offset: s.off, Issued: s.issued, Healthy: s.refused == nil && s.err == nil}
		if s.refused != nil {
			ss.Err = s.refused.Error()
		} else if s.err != nil {
			ss.Err = s.err.Error()
		}
		st.Issued += s.issued
		st.RoundTrips += s.trips
		st.Failures += s.fails
		s.mu.Unlock()
		if ss.Healthy {
			healthy++
		} else {
			causes = append(causes, ss.Err)
		}
		st.Servers = append(st.Servers, ss)
	}
	if healthy == 0 {
		st.Err = strings.Join(causes, "; ")
	}
	return st
}
