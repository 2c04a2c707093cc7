package proxy

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/proxy/merge"
	"github.com/shardflake/shardflake/router"
)

// runCall is the execute stage of a CALL (callPlan): it runs the plan's
// one route on its data source and relays every result the procedure sends:
// each SELECT's result set and the closing OK, each but the last flagged
// SERVER_MORE_RESULTS_EXISTS, as MariaDB sends them (the executor kept
// only the first result set and dropped the rest). A procedure's error
// after some result sets reaches the client after them. Each result set
// is read whole before it is written, so that its closing EOF can say
// whether another follows, within server.mergeMemoryBytes.
func (s *Session) runCall(ctx context.Context, plan *router.Plan, out output) error {
	bc, sent, done, err := s.relay(ctx, plan.Routes[0])
	if err != nil {
		return err
	}
	defer done()
	budget := merge.NewBudget(s.srv.rules.Server.MergeMemoryBytes)
	for first := true; ; first = false {
		h, err := bc.readHead()
		if first {
			s.srv.obs.Route(RouteEvent{DataSource: plan.Routes[0].DataSource, Duration: time.Since(sent), Err: err})
		}
		if err != nil {
			return cancelled(ctx, err)
		}
		if h.columns == nil {
			last := !bc.moreResults()
			if err := s.writeOK(h.ok, out.more || !last); err != nil {
				return err
			}
			if last {
				return nil
			}
			continue
		}
		var rows []Row
		for {
			p, err := bc.readRow()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return cancelled(ctx, err)
			}
			if err := budget.Take(int64(len(p))+64, "the result sets of CALL"); err != nil {
				bc.broken = true // the rest of the response is unread
				return err
			}
			row, err := wire.SplitTextRow(p, len(h.columns), nil)
			if err != nil {
				bc.broken = true
				return err
			}
			rows = append(rows, Row(row).Clone())
		}
		last := !bc.moreResults()
		if err := s.writeRows(newMemStream(h.columns, rows), out.followedBy(!last)); err != nil {
			return err
		}
		if last {
			return nil
		}
	}
}

// relay sends a route's SQL as it is on a connection of the statement's
// (relaySource), for a statement whose responses the session reads
// itself (CALL, LOAD DATA LOCAL). Cancelling ctx closes the connection;
// done gives it back. A connection that could not be had counts as the
// route's error (the executor counts it so too).
func (s *Session) relay(ctx context.Context, r router.Route) (bc *backendConn, sent time.Time, done func(), err error) {
	src := s.relaySource()
	bcs, err := src.acquire(ctx, r.DataSource, 1)
	if err != nil {
		s.srv.obs.Route(RouteEvent{DataSource: r.DataSource, Err: err})
		return nil, sent, nil, err
	}
	bc = bcs[0]
	stop := context.AfterFunc(ctx, func() { bc.broken = true; bc.nc.Close() })
	done = func() {
		stop()
		src.release(bc)
	}
	sent = time.Now()
	if err := bc.send(mysql.COM_QUERY, r.SQL); err != nil {
		s.srv.obs.Route(RouteEvent{DataSource: r.DataSource, Duration: time.Since(sent), Err: err})
		done()
		return nil, sent, nil, err
	}
	return bc, sent, done, nil
}
