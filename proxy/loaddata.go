package proxy

import (
	"context"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/router"
)

// LOAD DATA LOCAL INFILE into a table without rules runs on the default
// data source, where the table lives: when that data source asks for the
// file, the proxy asks the client for it and relays the packets the
// client sends, up to the empty one that ends the file. A sharded or
// broadcast table would need the file's rows routed one by one: refused.

type infileKey struct{}

// loadLocal runs LOAD DATA LOCAL INFILE st.
func (s *Session) loadLocal(ctx context.Context, st *ast.LoadDataStmt, sql string, proto Protocol, more bool) error {
	if st.FileLocRef != ast.FileLocClient {
		return &NotSupportedError{What: "LOAD DATA INFILE of a file on the server (use LOAD DATA LOCAL INFILE)"}
	}
	name := st.Table.Name.O
	if schema := st.Table.Schema.O; schema != "" {
		return &NotSupportedError{What: "LOAD DATA into a table named with its schema (name the table alone)"}
	}
	if s.srv.rules.Table(name) != nil || s.srv.rules.IsBroadcast(name) {
		return &NotSupportedError{What: "LOAD DATA into sharded or broadcast table " + strings.ToLower(name) + " (its rows would have to be routed one by one)"}
	}
	ctx = context.WithValue(ctx, infileKey{}, s)
	return s.onDefault(ctx, sql, router.KindInsert, proto, more)
}

// infileRelay returns the session that relays a LOAD DATA LOCAL file for
// the statement of ctx, nil for none.
func infileRelay(ctx context.Context) *Session {
	s, _ := ctx.Value(infileKey{}).(*Session)
	return s
}

// relayInfile answers a data source's request for a local file (its
// name follows the 0xFB header): the client is asked for it, and what it
// sends goes to the data source, up to and with the empty packet that
// ends it. A client that goes away leaves the data source mid-file: the
// connection is marked broken.
func (s *Session) relayInfile(bc *backendConn, name []byte) error {
	req := append([]byte{0xFB}, name...)
	if err := s.wc.WritePacket(req); err != nil {
		bc.broken = true
		return err
	}
	if err := s.wc.Flush(); err != nil {
		bc.broken = true
		return err
	}
	for {
		p, err := s.wc.ReadPacket()
		if err != nil {
			bc.broken = true
			return &DataSourceError{DataSource: bc.pool.name, Lost: true, Err: err}
		}
		if err := bc.wc.WritePacket(p); err != nil {
			return bc.lost(err)
		}
		if len(p) == 0 {
			break
		}
	}
	if err := bc.wc.Flush(); err != nil {
		return bc.lost(err)
	}
	return nil
}
