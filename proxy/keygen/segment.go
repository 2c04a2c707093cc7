package keygen

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/shardflake/shardflake/idgen"
)

// segmentDDL is the segment table, as README documents it; the generator
// creates it (and its row) when missing.
const segmentDDL = `CREATE TABLE IF NOT EXISTS %s (
  biz_tag VARCHAR(128) NOT NULL PRIMARY KEY,
  max_id BIGINT NOT NULL DEFAULT 0,
  step INT NOT NULL DEFAULT 1000,
  update_time TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP
) ENGINE=InnoDB`

func buildSegment(b keygenBuild) (idgen.KeyGenerator, func() error, error) {
	cfg, err := idgen.ParseSegmentProps(b.cfg.Props)
	if err != nil {
		return nil, nil, err
	}
	if cfg.BizTag == "" {
		cfg.BizTag = b.name
	}
	db, addr, err := openStore(cfg.Store.URLs[0], cfg.Store, 2, false)
	if err != nil {
		return nil, nil, err
	}
	st := &segmentStore{db: db, table: quoteName(cfg.Table), tag: cfg.BizTag, step: cfg.Step,
		addr: fmt.Sprintf("%s %s biz_tag %s", addr, cfg.Table, cfg.BizTag)}
	g := idgen.NewSegment(cfg, st, tableGuard(b.rules, b.name))
	return g, func() error { g.Close(); return db.Close() }, nil
}

// segmentStore is idgen.SegmentStore over database/sql: one UPDATE per
// block, the new maximum read from the OK packet's last-insert-id.
type segmentStore struct {
	db         *sql.DB
	table, tag string
	step       int64
	addr       string

	mu    sync.Mutex
	ready bool
}

// ensure creates the table and the row when they are missing; once.
func (s *segmentStore) ensure(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready {
		return nil
	}
	if _, err := s.db.ExecContext(ctx, fmt.Sprintf(segmentDDL, s.table)); err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, "INSERT IGNORE INTO "+s.table+" (biz_tag, max_id, step) VALUES (?, 0, ?)", s.tag, s.step); err != nil {
		return err
	}
	s.ready = true
	return nil
}

func (s *segmentStore) Fetch(ctx context.Context, step int64) (int64, error) {
	if err := s.ensure(ctx); err != nil {
		return 0, err
	}
	res, err := s.db.ExecContext(ctx, "UPDATE "+s.table+" SET max_id = LAST_INSERT_ID(max_id + ?), step = ? WHERE biz_tag = ?", step, step, s.tag)
	if err != nil {
		return 0, err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return 0, fmt.Errorf("no row for biz_tag %q", s.tag)
	}
	return res.LastInsertId()
}

func (s *segmentStore) Raise(ctx context.Context, floor int64) error {
	if err := s.ensure(ctx); err != nil {
		return err
	}
	_, err := s.db.ExecContext(ctx, "UPDATE "+s.table+" SET max_id = GREATEST(max_id, ?) WHERE biz_tag = ?", floor, s.tag)
	return err
}

func (s *segmentStore) Addr() string { return s.addr }
