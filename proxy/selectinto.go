package proxy

import (
	"context"
	"encoding/hex"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/proxy/internal/sqlarg"
	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// SELECT ... INTO @var[, @var ...], which the SQL parser does not read:
// classify cuts the clause off (sqlarg.SplitInto) and the SELECT passes
// the door as any other, so sharded tables, merging, read/write splitting
// and traffic rules apply; only its result is not written. Where writeRows
// would send the rows, storeInto assigns them, as MariaDB's
// select_dumpvar does: exactly one row sets the variables, on the
// session's record and every backend connection it uses (as SET @v = ...
// does); zero rows leave them unchanged with warning 1329; a second row
// is error 1172, after the first row's values were assigned; a column
// count other than the variables' is error 1222. The client gets an OK
// packet whose affected rows are the rows stored.

// selectInto is a SELECT's INTO @var clause.
type selectInto struct {
	vars []string
	// last: the clause came after FROM, which MariaDB deprecates.
	last bool
	// ctx is the statement's, which the door sets: storeInto runs where
	// results are written, which takes none.
	ctx context.Context
}

// parseSelectInto parses a SELECT ... INTO @var: the SELECT without the
// clause, its tree and the clause. ok is false when sql is not one.
func (s *Session) parseSelectInto(sql string) (base string, node ast.StmtNode, into *selectInto, ok bool) {
	base, vars, last, ok := sqlarg.SplitInto(sql)
	if !ok {
		return "", nil, nil, false
	}
	stmts, err := s.parse(base)
	if err != nil || len(stmts) != 1 || !isQuery(stmts[0]) {
		return "", nil, nil, false
	}
	return base, stmts[0], &selectInto{vars: vars, last: last}, true
}

// warnIntoLast raises MariaDB's warning 1287 for an INTO after FROM,
// returning the number of warnings raised.
func (s *Session) warnIntoLast(into *selectInto) uint16 {
	if !into.last {
		return 0
	}
	s.diag.add([]Row{rowOf("Warning", uint64(mysql.ER_WARN_DEPRECATED_SYNTAX), intoLastWarning)})
	return 1
}

// isQuery reports whether stmt may take an INTO @var clause.
func isQuery(stmt ast.StmtNode) bool {
	switch stmt.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt:
		return true
	}
	return false
}

// storeInto assigns the one row of rows to the user variables out.into
// and answers OK.
func (s *Session) storeInto(rows RowStream, out output) error {
	defer rows.Close()
	cols, err := streamColumns(rows)
	if err != nil {
		return err
	}
	warnings := s.warnIntoLast(out.into)
	if len(cols) != len(out.into.vars) {
		return mysql.NewDefaultError(mysql.ER_WRONG_NUMBER_OF_COLUMNS_IN_SELECT)
	}
	row, err := rows.Next()
	if errors.Is(err, io.EOF) {
		m := mysql.NewDefaultError(mysql.ER_SP_FETCH_NO_DATA)
		s.diag.add([]Row{rowOf("Warning", uint64(m.Code), m.Message)})
		return s.writeOK(wire.OK{Warnings: warnings + 1}, out.more)
	}
	if err != nil {
		return err
	}
	vals := make([]string, len(cols))
	for i, c := range cols {
		if vals[i], err = userVarLiteral(c, row[i]); err != nil {
			return err
		}
	}
	// MariaDB assigns the first row before it sees a second.
	_, next := rows.Next()
	ctx := out.into.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	p := &setPlan{next: s.vars.clone()}
	for i, name := range out.into.vars {
		p.assignUser(name, vals[i])
	}
	if err := p.apply(ctx, s); err != nil {
		return err
	}
	switch {
	case next == nil:
		return mysql.NewDefaultError(mysql.ER_TOO_MANY_ROWS)
	case !errors.Is(next, io.EOF):
		return next
	}
	return s.writeOK(wire.OK{AffectedRows: 1, Warnings: warnings}, out.more)
}

// intoLastWarning is MariaDB's warning 1287 for INTO after FROM.
const intoLastWarning = "'<select expression> INTO <destination>;' is deprecated and will be removed in a future release. Please use 'SELECT <select list> INTO <destination> FROM...' instead"

// binaryCharset is the binary character set's number in a column
// definition.
const binaryCharset = 63

// userVarLiteral writes a column's text value as a literal of the type a
// user variable keeps for it, as MariaDB's assignment from the column
// would: integer, decimal (with the column's scale) and double, string
// (temporal types too, as in MariaDB), each also for a NULL.
func userVarLiteral(c *mysql.Field, v []byte) (string, error) {
	text := string(v)
	unsigned := c.Flag&mysql.UNSIGNED_FLAG != 0
	switch {
	case c.Type == mysql.MYSQL_TYPE_NULL:
		return "NULL", nil
	case c.Type == mysql.MYSQL_TYPE_DECIMAL || c.Type == mysql.MYSQL_TYPE_NEWDECIMAL:
		switch {
		case v == nil:
			return "CAST(NULL AS DECIMAL(65, " + strconv.Itoa(int(min(c.Decimal, 30))) + "))", nil
		case strings.Contains(text, "."):
			return text, nil // a decimal literal, of the value's scale
		}
		// Without a point the literal would be an integer.
		return "CAST(" + text + " AS DECIMAL(65, 0))", nil
	case c.Type == mysql.MYSQL_TYPE_FLOAT || c.Type == mysql.MYSQL_TYPE_DOUBLE:
		if v == nil {
			return "CAST(NULL AS DOUBLE)", nil
		}
		if !strings.ContainsAny(text, "eE") {
			text += "E0"
		}
		return text, nil
	case isNumeric(c.Type) && v == nil && unsigned:
		return "CAST(NULL AS UNSIGNED)", nil
	case isNumeric(c.Type) && v == nil:
		return "CAST(NULL AS SIGNED)", nil
	case isNumeric(c.Type):
		return text, nil
	case v == nil:
		return "CAST(NULL AS CHAR)", nil
	case c.Charset == binaryCharset && isStringType(c.Type):
		// Bytes, not text in the connection's character set.
		return "X'" + hex.EncodeToString(v) + "'", nil
	}
	lit, err := sqlarg.AppendLiteral(nil, text, sqlarg.Backslash)
	return string(lit), err
}

// isStringType reports whether columns of type tp hold strings (the
// temporal types are binary in a column definition too).
func isStringType(tp byte) bool {
	switch tp {
	case mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_STRING,
		mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB, mysql.MYSQL_TYPE_BLOB:
		return true
	}
	return false
}
