package proxy

import (
	"regexp"
	"slices"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// Savepoints.
//
// SAVEPOINT, ROLLBACK TO [SAVEPOINT] and RELEASE SAVEPOINT run on every
// data source the transaction has touched, and the session keeps the
// transaction's savepoint names in the order they were set. A data source
// the transaction first touches later gets every savepoint of the list
// set right after its START TRANSACTION (txnSource.acquire: joinSavepoints),
// before any of the transaction's work there: rolling back to a savepoint
// set before it joined undoes all its work, as on one server, where that
// work came after the savepoint too.
//
// Names are matched without regard to case, as MariaDB does. A name the
// list does not hold gets 1305 "SAVEPOINT x does not exist" from the
// proxy, whatever the backends would say (one that never joined knows no
// savepoint at all).

// handleSavepoint runs SAVEPOINT name. Outside a transaction MariaDB
// accepts it and keeps nothing; so does the proxy.
func (s *Session) handleSavepoint(name string, more bool) error {
	if strings.EqualFold(name, stmtSavepoint) {
		return &NotSupportedError{What: "a savepoint named " + stmtSavepoint + " (the proxy uses that name for its own statement savepoints)"}
	}
	if !s.inTransaction() {
		return s.writeOK(wire.OK{}, more)
	}
	if !s.txn.active {
		// autocommit=0: the savepoint belongs to the transaction that is
		// implicitly open.
		s.startTxn("START TRANSACTION")
	}
	if err := s.onTxnSources("SAVEPOINT " + quoteSavepoint(name)); err != nil {
		return err
	}
	if i := s.txn.savepointIndex(name); i >= 0 {
		s.txn.savepoints = slices.Delete(s.txn.savepoints, i, i+1)
	}
	s.txn.savepoints = append(s.txn.savepoints, name)
	return s.writeOK(wire.OK{}, more)
}

// handleRollbackTo runs ROLLBACK TO SAVEPOINT name: every data source of
// the transaction goes back to it, and the savepoints set after it are
// gone (the named one stays).
func (s *Session) handleRollbackTo(name string, more bool) error {
	i := s.txn.savepointIndex(name)
	if !s.txn.active || i < 0 {
		return savepointNotFound(name)
	}
	if err := s.onTxnSources("ROLLBACK TO SAVEPOINT " + quoteSavepoint(s.txn.savepoints[i])); err != nil {
		return err
	}
	s.txn.savepoints = s.txn.savepoints[:i+1]
	return s.writeOK(wire.OK{}, more)
}

// handleReleaseSavepoint runs RELEASE SAVEPOINT name: it and the
// savepoints set after it are gone; the work stays.
func (s *Session) handleReleaseSavepoint(name string, more bool) error {
	i := s.txn.savepointIndex(name)
	if !s.txn.active || i < 0 {
		return savepointNotFound(name)
	}
	if err := s.onTxnSources("RELEASE SAVEPOINT " + quoteSavepoint(s.txn.savepoints[i])); err != nil {
		return err
	}
	s.txn.savepoints = s.txn.savepoints[:i]
	return s.writeOK(wire.OK{}, more)
}

// onTxnSources runs sql on every data source the transaction touched, in
// the order they joined. A failure on one leaves the transaction unable
// to go on consistently (some data sources ran it, some did not): the
// client hears the error, and afterTxnStatement ends the transaction if
// the connection broke.
func (s *Session) onTxnSources(sql string) error {
	for _, ds := range s.txn.order {
		bc := s.txn.conns[ds]
		if _, err := bc.exec(sql); err != nil {
			s.afterTxnStatement(err)
			return err
		}
	}
	return nil
}

// joinSavepoints sets the transaction's savepoints on a connection that
// joins it, right after its START TRANSACTION.
func (s *Session) joinSavepoints(bc *backendConn) error {
	for _, name := range s.txn.savepoints {
		if _, err := bc.exec("SAVEPOINT " + quoteSavepoint(name)); err != nil {
			return err
		}
	}
	return nil
}

// savepointIndex returns the position of name in the list, -1 if absent.
func (t *txnState) savepointIndex(name string) int {
	return slices.IndexFunc(t.savepoints, func(n string) bool { return strings.EqualFold(n, name) })
}

func savepointNotFound(name string) error {
	return mysql.NewDefaultError(mysql.ER_SP_DOES_NOT_EXIST, "SAVEPOINT", name)
}

func quoteSavepoint(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// workKeyword matches BEGIN WORK, COMMIT WORK and ROLLBACK WORK (with
// whatever follows: TO SAVEPOINT x, AND NO CHAIN), which MariaDB accepts
// and the TiDB parser does not.
var workKeyword = regexp.MustCompile(`(?is)^(\s*(?:BEGIN|COMMIT|ROLLBACK))\s+WORK\b`)

// lowPriorityWrite matches LOCK TABLES' LOW_PRIORITY WRITE, which MariaDB
// accepts (and ignores) and the TiDB parser does not.
var lowPriorityWrite = regexp.MustCompile(`(?is)\bLOW_PRIORITY\s+(WRITE)\b`)

var lockStatement = regexp.MustCompile(`(?is)^\s*LOCK\s+TABLES?\b`)

// withoutOptionalWords returns sql without the optional words the parser
// does not know (LOCK TABLES' aliases among them: lockAliases), for a
// statement it refused (and LOAD DATA's IGNORE n
// ROWS as IGNORE n LINES); ok is false when it has none.
func withoutOptionalWords(sql string) (string, bool) {
	if loc := workKeyword.FindStringSubmatchIndex(sql); loc != nil {
		return sql[:loc[3]] + sql[loc[1]:], true
	}
	if lockStatement.MatchString(sql) {
		changed := false
		if plain, _, ok := lockAliases(sql); ok {
			sql, changed = plain, true
		}
		if lowPriorityWrite.MatchString(sql) {
			sql, changed = lowPriorityWrite.ReplaceAllString(sql, "$1"), true
		}
		return sql, changed
	}
	return sqlarg.LoadIgnoreRows(sql)
}
