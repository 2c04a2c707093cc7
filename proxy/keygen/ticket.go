package keygen

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shardflake/shardflake/idgen"
)

// ticketDDL is Flickr's Tickets64, as README documents it; the generator
// creates it when missing. MyISAM as in Flickr's post: concurrent
// REPLACEs of one InnoDB row deadlock (1213) under load, a MyISAM table
// lock serialises them.
const ticketDDL = `CREATE TABLE IF NOT EXISTS %s (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  stub CHAR(1) NOT NULL DEFAULT '' UNIQUE
) ENGINE=MyISAM`

// ticketRetries is how often a ticket statement that lost a deadlock or a
// lock wait (an InnoDB Tickets64) is sent again, after a random pause that
// grows with each attempt (so the REPLACEs that collided do not collide
// again in step): the loser was rolled back, so no ticket is lost or
// issued twice. The fetch timeout bounds the whole.
const ticketRetries = 20

func buildTicket(b keygenBuild) (idgen.KeyGenerator, func() error, error) {
	cfg, err := idgen.ParseTicketProps(b.cfg.Props)
	if err != nil {
		return nil, nil, err
	}
	var dbs []*sql.DB
	closeAll := func() error {
		var errs []error
		for _, db := range dbs {
			errs = append(errs, db.Close())
		}
		return errors.Join(errs...)
	}
	var servers []idgen.TicketServer
	for _, u := range cfg.Store.URLs {
		db, addr, err := openStore(u, cfg.Store, cfg.Connections, true)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		dbs = append(dbs, db)
		servers = append(servers, &ticketServer{db: db, addr: addr, table: quoteName(cfg.Table), name: cfg.Table, stub: cfg.Stub})
	}
	g, err := idgen.NewTicket(b.ctx, cfg, servers, ticketGuard(b.rules, b.name))
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	return g, func() error { g.Close(); return closeAll() }, nil
}

// ticketServer is idgen.TicketServer over a database/sql pool of ticket
// connections: n tickets are n REPLACE statements sent as one
// multi-statement, each one's LAST_INSERT_ID read from its OK packet.
type ticketServer struct {
	db          *sql.DB
	addr        string
	table, stub string
	name        string // the table's name unquoted

	mu    sync.Mutex
	ready bool
}

func (s *ticketServer) ensure(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, fmt.Sprintf(ticketDDL, s.table)); err != nil {
		return err
	}
	s.ready = true
	return nil
}

func (s *ticketServer) Residue(ctx context.Context) (int64, int64, error) {
	var inc, off int64
	err := s.db.QueryRowContext(ctx, "SELECT @@auto_increment_increment, @@auto_increment_offset").Scan(&inc, &off)
	return inc, off, err
}

func (s *ticketServer) Tickets(ctx context.Context, dst []int64) error {
	if err := s.ensure(ctx); err != nil {
		return err
	}
	var err error
	for attempt := range ticketRetries {
		if err = s.tickets(ctx, dst); !retryable(err) {
			return err
		}
		pause := time.Duration(1+rand.IntN(2*(attempt+1))) * time.Millisecond
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pause):
		}
	}
	return err
}

// retryable reports a deadlock or lock wait timeout.
func retryable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205)
}

func (s *ticketServer) tickets(ctx context.Context, dst []int64) error {
	one := "REPLACE INTO " + s.table + " (stub) VALUES ('" + s.stub + "')"
	if len(dst) == 1 {
		res, err := s.db.ExecContext(ctx, one)
		if err != nil {
			return err
		}
		dst[0], err = res.LastInsertId()
		return err
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	q := strings.Repeat(one+";", len(dst))
	return conn.Raw(func(dc any) error {
		ex, ok := dc.(driver.ExecerContext)
		if !ok {
			return errors.New("driver connection cannot execute")
		}
		res, err := ex.ExecContext(ctx, q, nil)
		if err != nil {
			return err
		}
		mr, ok := res.(mysql.Result)
		if !ok {
			return errors.New("driver result has no per-statement insert ids")
		}
		ids := mr.AllLastInsertIds()
		if len(ids) != len(dst) {
			return fmt.Errorf("%d tickets asked, %d statements answered", len(dst), len(ids))
		}
		copy(dst, ids)
		return nil
	})
}

func (s *ticketServer) Raise(ctx context.Context, floor int64) error {
	if err := s.ensure(ctx); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, fmt.Sprintf("ALTER TABLE %s AUTO_INCREMENT = %d", s.table, floor+1))
	return err
}

func (s *ticketServer) NextTicket(ctx context.Context) (int64, error) {
	if err := s.ensure(ctx); err != nil {
		return 0, err
	}
	var next sql.NullInt64
	err := s.db.QueryRowContext(ctx, "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", s.name).Scan(&next)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return next.Int64, err
}

func (s *ticketServer) Addr() string { return s.addr }
