package proxy

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/shardflake/shardflake/internal/sqllex"
)

// Admin statements are shardflake's own statements over the MySQL
// protocol, spelled as ShardingSphere's DistSQL spells them:
//
//	PREVIEW <statement>
//	SHOW SHARDING TABLE RULES [FROM db]
//	SHOW SHARDING TABLE RULE <table> [FROM db]
//	SHOW SHARDING TABLE NODES [<table>] [FROM db]
//	SHOW SHARDING ALGORITHMS [FROM db]
//	SHOW SHARDING KEY GENERATORS [FROM db]   (also SHOW KEY GENERATORS)
//	SHOW BROADCAST TABLE RULES [FROM db]
//	SHOW STORAGE UNITS [FROM db]
//	SHOW SHARDING BINDING ORPHANS [FROM db]  (binding_check.go)
//	SHOW READWRITE_SPLITTING RULES [FROM db]
//	SHOW READWRITE_SPLITTING STATUS [FROM db]
//	SHOW TRAFFIC RULES, ALTER/ENABLE/DISABLE TRAFFIC RULE (admin_traffic.go)
//	SHOW XA TRANSACTIONS                     (xa_recover.go)
//	SET VARIABLE transaction_type = 'XA'     (xa.go)
//	RELOAD RULES [FORCE], PREVIEW RELOAD (admin_reload.go)
//
// The TiDB parser knows none of them, so they are recognised before
// parsing by their leading keywords (after whitespace and comments). Only
// the leading tokens are read: a string literal can never be mistaken for
// an admin statement, and any statement that does not start with these
// keywords goes to the parser untouched.

// adminKind is which admin statement a query is.
type adminKind int

const (
	adminPreview adminKind = iota + 1
	adminTableRules
	adminTableRule
	adminTableNodes
	adminAlgorithms
	adminKeyGenerators
	adminBroadcastRules
	adminStorageUnits
	adminBindingOrphans
	adminAdoptKeys // admin_keygen.go
	adminReadwriteRules
	adminReadwriteStatus
	adminXATransactions // xa_recover.go
	adminSetVariable    // SET VARIABLE transaction_type = 'XA'
)

// String returns the statement's leading keywords.
func (k adminKind) String() string {
	switch k {
	case adminPreview:
		return "PREVIEW"
	case adminTableRules:
		return "SHOW SHARDING TABLE RULES"
	case adminTableRule:
		return "SHOW SHARDING TABLE RULE"
	case adminTableNodes:
		return "SHOW SHARDING TABLE NODES"
	case adminAlgorithms:
		return "SHOW SHARDING ALGORITHMS"
	case adminKeyGenerators:
		return "SHOW SHARDING KEY GENERATORS"
	case adminBroadcastRules:
		return "SHOW BROADCAST TABLE RULES"
	case adminStorageUnits:
		return "SHOW STORAGE UNITS"
	case adminBindingOrphans:
		return "SHOW SHARDING BINDING ORPHANS"
	case adminAdoptKeys:
		return "ADOPT SHARDING KEY GENERATOR"
	case adminReadwriteRules:
		return "SHOW READWRITE_SPLITTING RULES"
	case adminReadwriteStatus:
		return "SHOW READWRITE_SPLITTING STATUS"
	case adminXATransactions:
		return "SHOW XA TRANSACTIONS"
	case adminSetVariable:
		return "SET VARIABLE"
	}
	return "unknown"
}

// adminStmt is a recognised admin statement.
type adminStmt struct {
	kind  adminKind
	table string // RULE t, NODES t
	db    string // FROM db; "" when absent
	body  string // PREVIEW's statement
}

// adminSyntax lists the admin statements for syntax error messages.
const adminSyntax = "PREVIEW <statement>; SHOW SHARDING TABLE RULES | TABLE RULE <table> | TABLE NODES [<table>] | ALGORITHMS | KEY GENERATORS [FROM db]; SHOW BROADCAST TABLE RULES [FROM db]; SHOW STORAGE UNITS [FROM db]; SHOW SHARDING BINDING ORPHANS [FROM db]; SHOW READWRITE_SPLITTING RULES | STATUS [FROM db]; " + reloadSyntax + "; " + trafficSyntax

// matchAdmin recognises an admin statement. ok is false when sql is not
// one (the parser gets it); err is a syntax error in a statement that is
// one by its leading keywords (SHOW SHARDING ...).
func matchAdmin(sql string) (st adminStmt, ok bool, err error) {
	lx := adminLexer{sql: sql}
	if !lx.skip() {
		return st, false, nil
	}
	first := lx.word()
	if st, ok, err := matchTrafficAdmin(lx, first); ok {
		return st, true, err
	}
	if st, ok, err := matchReloadAdmin(lx, first); ok {
		return st, true, err
	}
	if st, ok, err := matchFleetAdmin(lx, first); ok {
		return st, true, err
	}
	if st, ok, err := matchKeygenAdmin(lx, first); ok {
		return st, true, err
	}
	if strings.EqualFold(first, "SET") {
		// ShardingSphere's SET VARIABLE name = value: shardflake's
		// SET name = value.
		probe := lx
		probe.skip()
		if !strings.EqualFold(probe.word(), "VARIABLE") {
			return st, false, nil
		}
		st.kind, st.body = adminSetVariable, "SET "+strings.TrimSpace(sql[probe.pos:])
		return st, true, nil
	}
	switch {
	case strings.EqualFold(first, "PREVIEW"):
		st.kind, st.body = adminPreview, strings.TrimSpace(sql[lx.pos:])
		if st.body == "" || st.body == ";" {
			return st, true, lx.syntaxError("PREVIEW needs a statement, e.g. PREVIEW SELECT * FROM t_order WHERE user_id = 1")
		}
		return st, true, nil
	case !strings.EqualFold(first, "SHOW"):
		return st, false, nil
	}
	// SHOW STORAGE ENGINES and SHOW KEYS are MySQL's; only the words that
	// begin no MySQL statement make this an admin statement.
	mark := lx
	lx.skip()
	second := lx.word()
	switch {
	case strings.EqualFold(second, "SHARDING"), strings.EqualFold(second, "BROADCAST"), strings.EqualFold(second, "READWRITE_SPLITTING"),
		strings.EqualFold(second, "XA"):
	case strings.EqualFold(second, "STORAGE"), strings.EqualFold(second, "KEY"):
		probe := lx
		probe.skip()
		third := probe.word()
		if !(strings.EqualFold(second, "STORAGE") && strings.EqualFold(third, "UNITS")) &&
			!(strings.EqualFold(second, "KEY") && strings.EqualFold(third, "GENERATORS")) {
			return st, false, nil
		}
	default:
		return st, false, nil
	}
	lx = mark
	st, err = lx.parseShow()
	return st, true, err
}

// parseShow reads the words after SHOW of an admin statement.
func (lx *adminLexer) parseShow() (adminStmt, error) {
	var st adminStmt
	switch {
	case lx.keywords("SHARDING", "TABLE", "RULES"):
		st.kind = adminTableRules
	case lx.keywords("SHARDING", "TABLE", "RULE"):
		st.kind = adminTableRule
		name, ok := lx.ident()
		if !ok {
			return st, lx.syntaxError("SHOW SHARDING TABLE RULE needs a table name")
		}
		st.table = name
	case lx.keywords("SHARDING", "TABLE", "NODES"):
		st.kind = adminTableNodes
		save := *lx
		lx.skip()
		quoted := lx.pos < len(lx.sql) && lx.sql[lx.pos] == '`'
		if name, ok := lx.ident(); ok && (quoted || !strings.EqualFold(name, "FROM")) {
			st.table = name
		} else {
			*lx = save
		}
	case lx.keywords("SHARDING", "BINDING", "ORPHANS"):
		st.kind = adminBindingOrphans
	case lx.keywords("SHARDING", "ALGORITHMS"):
		st.kind = adminAlgorithms
	case lx.keywords("SHARDING", "KEY", "GENERATORS"), lx.keywords("KEY", "GENERATORS"):
		st.kind = adminKeyGenerators
	case lx.keywords("BROADCAST", "TABLE", "RULES"):
		st.kind = adminBroadcastRules
	case lx.keywords("STORAGE", "UNITS"):
		st.kind = adminStorageUnits
	case lx.keywords("READWRITE_SPLITTING", "RULES"):
		st.kind = adminReadwriteRules
	case lx.keywords("READWRITE_SPLITTING", "STATUS"):
		st.kind = adminReadwriteStatus
	case lx.keywords("XA", "TRANSACTIONS"):
		st.kind = adminXATransactions
	default:
		lx.pos = lx.far
		return st, lx.syntaxError("")
	}
	if lx.keywords("FROM") {
		db, ok := lx.ident()
		if !ok {
			return st, lx.syntaxError("FROM needs a database name")
		}
		st.db = db
	}
	lx.skip()
	if lx.pos < len(lx.sql) && lx.sql[lx.pos] == ';' {
		lx.pos++
	}
	if !lx.skip() || lx.pos < len(lx.sql) {
		return st, lx.syntaxError("")
	}
	return st, nil
}

// adminLexer reads the leading tokens of a statement. It never looks
// past the first token it does not understand.
type adminLexer struct {
	sql string
	pos int
	// far is the start of the deepest word a keyword sequence failed on,
	// where a syntax error points.
	far int
}

// skip moves past whitespace and comments. It returns false at a comment
// that does not end, and at an executable comment (/*! ... */, /*M! ...
// */), whose content MySQL runs: such statements are left to the parser.
func (lx *adminLexer) skip() bool {
	next, stop := sqllex.SkipSpace(lx.sql, lx.pos, sqllex.Backslash)
	lx.pos = next
	return stop.Kind == 0
}

// word reads an unquoted word at the current position ("" when there is
// none); the caller skips what comes before.
func (lx *adminLexer) word() string {
	start := lx.pos
	for lx.pos < len(lx.sql) && sqllex.IsWordByte(lx.sql[lx.pos]) {
		lx.pos++
	}
	return lx.sql[start:lx.pos]
}

// keywords consumes the words kws (any case) when they come next, and
// reports whether they did; otherwise it consumes nothing.
func (lx *adminLexer) keywords(kws ...string) bool {
	save := *lx
	for _, kw := range kws {
		ok := lx.skip()
		start := lx.pos
		if !ok || !strings.EqualFold(lx.word(), kw) {
			far := max(save.far, start)
			*lx = save
			lx.far = far
			return false
		}
	}
	return true
}

// ident reads a name: a word or a backquoted name, in which a doubled
// backquote stands for one.
func (lx *adminLexer) ident() (string, bool) {
	if !lx.skip() || lx.pos >= len(lx.sql) {
		return "", false
	}
	if lx.sql[lx.pos] != '`' {
		w := lx.word()
		return w, w != ""
	}
	t := sqllex.At(lx.sql, lx.pos, sqllex.Backslash)
	if t.Unterminated {
		return "", false
	}
	lx.pos = t.End
	name := sqllex.Unquote(lx.sql, t, sqllex.Backslash)
	return name, name != ""
}

// syntaxError is MySQL's 1064 pointing at the current position.
func (lx *adminLexer) syntaxError(hint string) error {
	if hint == "" {
		hint = "shardflake's admin statements are " + adminSyntax
	}
	return syntaxErrorNear(lx.sql[lx.pos:], hint)
}

// syntaxErrorNear is the proxy's own 1064 for a statement it reads
// itself, pointing at near (cut to 80 bytes, as MySQL cuts it), with a
// hint after it unless hint is "". The boundary names MariaDB's manual
// when the proxy announces a MariaDB version (errmap.go).
func syntaxErrorNear(near, hint string) error {
	if len(near) > 80 {
		cut := 80
		for cut > 0 && !utf8.RuneStart(near[cut]) {
			cut--
		}
		near = near[:cut]
	}
	msg := fmt.Sprintf("You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '%s' at line 1", near)
	if hint != "" {
		msg += " (" + hint + ")"
	}
	return &ParseError{Err: errors.New(msg)}
}
