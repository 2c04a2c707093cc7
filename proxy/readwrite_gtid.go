package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// Read-your-writes with MariaDB GTIDs. After a session writes to a group
// (an autocommit statement, or a transaction's COMMIT), its next replica
// read on that group reads the primary's @@gtid_binlog_pos once: a
// position at or after its writes. A replica whose gtid_slave_pos (polled
// by the monitor) already covers it serves the read at once; otherwise
// the read runs MASTER_GTID_WAIT(pos, causalTimeout) on the chosen replica
// first and goes to the primary when that times out. With causalReads
// USER, the writes of every session of the user count for causalWindow.

// gtid is one replication domain's last transaction.
type gtid struct {
	server uint32
	seq    uint64
}

// gtidPos is a GTID position, domain -> last GTID; nil means none.
type gtidPos map[uint32]gtid

// parseGTIDPos reads a position such as "0-1-42,1-2-7" (empty: none).
func parseGTIDPos(s string) (gtidPos, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return gtidPos{}, nil
	}
	pos := gtidPos{}
	for _, part := range strings.Split(s, ",") {
		f := strings.Split(strings.TrimSpace(part), "-")
		if len(f) != 3 {
			return nil, fmt.Errorf("malformed GTID %q", part)
		}
		d, err1 := strconv.ParseUint(f[0], 10, 32)
		sv, err2 := strconv.ParseUint(f[1], 10, 32)
		n, err3 := strconv.ParseUint(f[2], 10, 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("malformed GTID %q", part)
		}
		pos[uint32(d)] = gtid{server: uint32(sv), seq: n}
	}
	return pos, nil
}

// String writes the position as MariaDB does, domains in order.
func (p gtidPos) String() string {
	var parts []string
	for _, d := range slices.Sorted(func(yield func(uint32) bool) {
		for d := range p {
			if !yield(d) {
				return
			}
		}
	}) {
		g := p[d]
		parts = append(parts, fmt.Sprintf("%d-%d-%d", d, g.server, g.seq))
	}
	return strings.Join(parts, ",")
}

// covers reports whether a replica at position p has applied every
// transaction up to want, domain by domain.
func (p gtidPos) covers(want gtidPos) bool {
	for d, w := range want {
		h, ok := p[d]
		if !ok || h.seq < w.seq {
			return false
		}
	}
	return true
}

// causalPosition returns the position a replica must have reached for
// this session's read on g to see its writes; nil when none is needed.
func (s *Session) causalPosition(ctx context.Context, g *rwGroup) (gtidPos, error) {
	ds := g.cfg.Name
	switch g.cfg.CausalReads {
	case config.CausalSession:
		if s.rw.pending[ds] {
			pos, err := s.srv.primaryPosition(ctx, ds)
			if err != nil {
				return nil, err
			}
			if s.rw.pos == nil {
				s.rw.pos = map[string]gtidPos{}
			}
			s.rw.pos[ds] = pos
			delete(s.rw.pending, ds)
		}
		return s.rw.pos[ds], nil
	case config.CausalUser:
		return s.srv.current().rw.users.position(ctx, s.user, ds, g.cfg.CausalWindow, func(ctx context.Context) (gtidPos, error) {
			return s.srv.primaryPosition(ctx, ds)
		})
	}
	return nil, nil
}

// primaryPosition reads @@gtid_binlog_pos from the primary of group ds.
func (srv *Server) primaryPosition(ctx context.Context, ds string) (gtidPos, error) {
	p := srv.current().pools[ds]
	bcs, err := p.get(ctx, 1)
	if err != nil {
		g := srv.current().rw.group(ds)
		return nil, &PrimaryDownError{Group: ds, Primary: g.cfg.Primary.Name, Err: err}
	}
	defer p.put(bcs[0])
	v, _, err := queryValue(bcs[0], "SELECT @@gtid_binlog_pos")
	if err != nil {
		return nil, err
	}
	return parseGTIDPos(v)
}

// masterGTIDWait waits on a replica connection until the replica has
// applied want or timeout passes; caught is false on timeout.
func masterGTIDWait(bc *backendConn, want gtidPos, timeout time.Duration) (caught bool, err error) {
	sql := fmt.Sprintf("SELECT MASTER_GTID_WAIT('%s', %.3f)", want.String(), timeout.Seconds())
	v, null, err := queryValue(bc, sql)
	if err != nil {
		return false, err
	}
	return !null && v == "0", nil
}

// queryValue runs sql on bc and returns the first column of its one row
// (null when NULL).
func queryValue(bc *backendConn, sql string) (string, bool, error) {
	cols, rows, err := backendRows(bc, sql)
	if err != nil {
		return "", false, err
	}
	if len(cols) == 0 || len(rows) == 0 {
		return "", true, fmt.Errorf("%s returned no row", sql)
	}
	if rows[0][0] == nil {
		return "", true, nil
	}
	return *rows[0][0], false, nil
}

// backendRows runs sql on bc and returns the column names and the rows
// (nil for NULL), copied out of the packets.
func backendRows(bc *backendConn, sql string) ([]string, [][]*string, error) {
	if err := bc.send(mysql.COM_QUERY, sql); err != nil {
		return nil, nil, err
	}
	h, err := bc.readHead()
	if err != nil || h.columns == nil {
		return nil, nil, err
	}
	cols := make([]string, len(h.columns))
	for i, c := range h.columns {
		cols[i] = string(c.Name)
	}
	var rows [][]*string
	var vals [][]byte
	for {
		p, err := bc.readRow()
		if errors.Is(err, io.EOF) {
			return cols, rows, nil
		}
		if err != nil {
			return nil, nil, err
		}
		if vals, err = wire.SplitTextRow(p, len(cols), vals); err != nil {
			bc.broken = true
			return nil, nil, err
		}
		row := make([]*string, len(cols))
		for i, v := range vals {
			if v != nil {
				s := string(v)
				row[i] = &s
			}
		}
		rows = append(rows, row)
	}
}

// causalUsers is causalReads USER: per user and group, when the user last
// wrote and the primary's position read after it.
type causalUsers struct {
	mu    sync.Mutex
	users map[string]*userWrite // key user + "\x00" + group
}

type userWrite struct {
	mu       sync.Mutex // serializes resolving
	wroteAt  time.Time
	pos      gtidPos
	resolved time.Time // when pos was read; after wroteAt when current
}

func newCausalUsers() *causalUsers { return &causalUsers{users: map[string]*userWrite{}} }

func (cu *causalUsers) entry(user, ds string, create bool) *userWrite {
	cu.mu.Lock()
	defer cu.mu.Unlock()
	k := user + "\x00" + ds
	w := cu.users[k]
	if w == nil && create {
		w = &userWrite{}
		cu.users[k] = w
	}
	return w
}

// wrote records that a session of user committed a write to ds.
func (cu *causalUsers) wrote(user, ds string) {
	w := cu.entry(user, ds, true)
	w.mu.Lock()
	w.wroteAt = time.Now()
	w.mu.Unlock()
}

// position returns the position a read of user on ds must wait for: the
// primary's position read after the user's last write, when that write is
// younger than window; nil otherwise.
func (cu *causalUsers) position(ctx context.Context, user, ds string, window time.Duration, resolve func(context.Context) (gtidPos, error)) (gtidPos, error) {
	w := cu.entry(user, ds, false)
	if w == nil {
		return nil, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if time.Since(w.wroteAt) > window {
		return nil, nil
	}
	if w.resolved.After(w.wroteAt) {
		return w.pos, nil
	}
	at := time.Now()
	pos, err := resolve(ctx)
	if err != nil {
		return nil, err
	}
	w.pos, w.resolved = pos, at
	return pos, nil
}
