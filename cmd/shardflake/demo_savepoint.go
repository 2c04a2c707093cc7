//go:build demo

package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// Savepoints on the embedded backends. go-mysql-server's memory sessions
// refuse SAVEPOINT, and the proxy sets one on every connection a write
// over several physical tables reaches inside a client's transaction (its
// statement savepoint, and the client's own SAVEPOINTs): in the demo,
// BEGIN; UPDATE t_order SET ...; failed with 1105 "savepoints are not
// supported in memory sessions".
//
// serialBackend answers them itself. While a connection is in a
// transaction it holds the backend, so no other connection writes until
// it ends, and replaying the transaction's statements gives back the
// state they left. Each connection keeps its transaction's statements
// that succeeded (its journal) and where each savepoint was set in it;
// ROLLBACK TO a savepoint rolls the backend's transaction back and runs
// the statements before the savepoint again. Functions of the clock or
// of chance (NOW(), RAND(), UUID()) give new values when replayed; the
// proxy fills keys in itself, so its rows keep theirs.

// journal is one connection's open transaction.
type journal struct {
	steps []func(ctx context.Context) error
	marks []savepointMark
}

type savepointMark struct {
	name string
	at   int // len(steps) when the savepoint was set
}

// savepointStmt matches the three savepoint statements, the name bare or
// in backquotes.
var savepointStmt = regexp.MustCompile("(?is)^\\s*(SAVEPOINT|ROLLBACK\\s+(?:WORK\\s+)?TO\\s+(?:SAVEPOINT\\s+)?|RELEASE\\s+SAVEPOINT)\\s*(`(?:[^`]|``)+`|[\\w$]+)\\s*;?\\s*$")

// parseSavepoint reads query as a savepoint statement: its verb
// (SAVEPOINT, ROLLBACK or RELEASE) and name.
func parseSavepoint(query string) (verb, name string, ok bool) {
	m := savepointStmt.FindStringSubmatch(query)
	if m == nil {
		return "", "", false
	}
	verb = strings.ToUpper(strings.Fields(m[1])[0])
	name = m[2]
	if strings.HasPrefix(name, "`") {
		name = strings.ReplaceAll(name[1:len(name)-1], "``", "`")
	}
	return verb, name, true
}

// firstStatement splits a multi-statement text after its first
// statement when that is a savepoint statement (they hold no quotes but
// a name's backquotes, which the pattern reads whole).
func firstStatement(query string) (first, rest string) {
	i := strings.IndexByte(query, ';')
	if i < 0 {
		return query, ""
	}
	return query[:i], strings.TrimSpace(query[i+1:])
}

// savepoint answers a savepoint statement for c.
func (b *serialBackend) savepoint(ctx context.Context, c *mysql.Conn, verb, name string) error {
	b.mu.Lock()
	j := b.journals[c.ConnectionID]
	b.mu.Unlock()
	if j == nil {
		if verb == "SAVEPOINT" {
			return nil // outside a transaction MariaDB keeps none either
		}
		return mysql.NewSQLError(mysql.ERSPDoesNotExist, "42000", "SAVEPOINT %s does not exist", name)
	}
	i := len(j.marks) - 1
	for i >= 0 && !strings.EqualFold(j.marks[i].name, name) {
		i--
	}
	switch {
	case verb == "SAVEPOINT":
		if i >= 0 {
			j.marks = append(j.marks[:i], j.marks[i+1:]...)
		}
		j.marks = append(j.marks, savepointMark{name: name, at: len(j.steps)})
		return nil
	case i < 0:
		return mysql.NewSQLError(mysql.ERSPDoesNotExist, "42000", "SAVEPOINT %s does not exist", name)
	case verb == "RELEASE":
		j.marks = j.marks[:i]
		return nil
	}
	// ROLLBACK TO: the savepoint stays, those set after it go.
	at := j.marks[i].at
	j.marks = j.marks[:i+1]
	j.steps = j.steps[:at]
	if err := b.Handler.ComQuery(ctx, c, "ROLLBACK", discardResults); err != nil {
		return err
	}
	for _, step := range j.steps {
		if err := step(ctx); err != nil {
			return mysql.NewSQLError(mysql.ERUnknownError, "HY000", "cannot roll back to savepoint %s on the demo's in-memory backend: replaying the transaction failed: %v", name, err)
		}
	}
	return nil
}

// record keeps step in c's journal when c is in a transaction after it,
// and drops the journal when c's transaction has ended.
func (b *serialBackend) record(c *mysql.Conn, step func(ctx context.Context) error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c.StatusFlags&uint16(mysql.ServerInTransaction) == 0 {
		delete(b.journals, c.ConnectionID)
		return
	}
	j := b.journals[c.ConnectionID]
	if j == nil {
		j = &journal{}
		b.journals[c.ConnectionID] = j
	}
	j.steps = append(j.steps, step)
}

func (b *serialBackend) forget(c *mysql.Conn) {
	b.mu.Lock()
	delete(b.journals, c.ConnectionID)
	b.mu.Unlock()
}

func discardResults(*sqltypes.Result, bool) error { return nil }

// replayQuery and replayExecute are journal steps.
func (b *serialBackend) replayQuery(c *mysql.Conn, query string, multi bool) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		if multi {
			// One call runs the text's first statement, as it did.
			_, err := b.Handler.ComMultiQuery(ctx, c, query, discardResults)
			return err
		}
		return b.Handler.ComQuery(ctx, c, query, discardResults)
	}
}

func (b *serialBackend) replayExecute(c *mysql.Conn, prepare *mysql.PrepareData) func(ctx context.Context) error {
	p := *prepare
	p.BindVars = make(map[string]*querypb.BindVariable, len(prepare.BindVars))
	for k, v := range prepare.BindVars {
		bv := &querypb.BindVariable{Type: v.Type, Value: bytes.Clone(v.Value)}
		for _, e := range v.Values {
			bv.Values = append(bv.Values, &querypb.Value{Type: e.Type, Value: bytes.Clone(e.Value)})
		}
		p.BindVars[k] = bv
	}
	return func(ctx context.Context) error {
		return b.Handler.ComStmtExecute(ctx, c, &p, func(*sqltypes.Result) error { return nil })
	}
}
