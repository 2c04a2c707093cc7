package proxy

import (
	"context"
	"errors"
	"io"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/proxy/merge"
)

// runCall runs a CALL (its arguments written in) on the default data source, where
// stored procedures live, and relays every result the procedure sends:
// each SELECT's result set and the closing OK, each but the last flagged
// SERVER_MORE_RESULTS_EXISTS, as MariaDB sends them (the executor kept
// only the first result set and dropped the rest). A procedure's error
// after some result sets reaches the client after them. Each result set
// is read whole before it is written, so that its closing EOF can say
// whether another follows, within server.mergeMemoryBytes.
func (s *Session) runCall(ctx context.Context, sql string, proto Protocol, more bool) error {
	ds := s.srv.rules.DefaultDataSource
	var src connSource = poolSource{s}
	if s.inTransaction() {
		if !s.txn.active {
			s.startTxn("START TRANSACTION")
		}
		src = txnSource{s: s, write: true}
	}
	bcs, err := src.acquire(ctx, ds, 1)
	if err != nil {
		return err
	}
	bc := bcs[0]
	defer src.release(bc)
	stop := context.AfterFunc(ctx, func() { bc.broken = true; bc.nc.Close() })
	defer stop()
	if err := bc.send(mysql.COM_QUERY, sql); err != nil {
		return err
	}
	budget := merge.NewBudget(s.srv.rules.Server.MergeMemoryBytes)
	for {
		h, err := bc.readHead()
		if err != nil {
			return cancelled(ctx, err)
		}
		if h.columns == nil {
			last := !bc.moreResults()
			if err := s.writeOK(h.ok, more || !last); err != nil {
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
		if err := s.writeRows(newMemStream(h.columns, rows), proto, more || !last); err != nil {
			return err
		}
		if last {
			return nil
		}
	}
}
