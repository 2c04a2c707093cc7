package proxy

import (
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/router"
)

// Backend prepared statements for rows the proxy reads as text. MariaDB
// spends less CPU on COM_STMT_EXECUTE of a statement prepared once per
// connection than on COM_QUERY of its SQL: it skips the parse. A data
// source's UNION ALL of its four tables of a sysbench range costs it
// 12-30% less (bench/shapes, medians of 9 rounds on one server: simple
// range 130 -> 95 us, SUM 123 -> 88, ORDER BY 141 -> 124, DISTINCT 179 ->
// 170), a point select 15-20% less (sysbench, both ps-modes in one run:
// 42.8 against 52.1 us over both servers per statement). Two kinds of
// route run prepared so although their rows are read as text:
//
//   - the routes of a joined plan (one UNION per data source, union.go),
//     whose rows the merge reads as text values, from a client's
//     COM_STMT_EXECUTE and from a text query (prepareJoined);
//   - a text query's single route that SELECTs (prepareText), whose rows
//     the client reads as text: they are written row by row instead of
//     forwarded as the backend sent them, which costs the proxy little
//     for a few rows and more for many, so a statement that returned
//     more than manyRows rows runs as text on that connection from then
//     on (backendStmt.manyRows). On a shared connection of
//     server.multiplex the same holds (muxStmt; multiplex.go).
//
// Either way the answer is the text statement's:
//
//   - the arguments mean the same: a client's COM_STMT_EXECUTE passes its
//     own values, as a single route's backend statement takes them; a
//     text query's routes qualify when each has arguments and all are
//     integers (the literals sqlarg.Normalize took out of the client's
//     SQL, which as parameters compare, limit and select exactly as the
//     literals did). A route without arguments stays text: its SQL may
//     come once, and preparing it would cost a round trip.
//   - the rows read the same: the binary rows are decoded into text
//     values (wire.SplitBinaryRow), which is exact for integers, decimals
//     and strings only (textExact). A statement with any other column
//     (floating point, temporal, BIT, ZEROFILL) runs as text, as before.
//     The column definitions of the execution are the ones MariaDB sends
//     for the text query (the select list, where they come from, keeps
//     its literals), and TestTextPreparedLikeMariaDB compares them, the
//     row packets and the warnings byte for byte with MariaDB's own text
//     answer.
//   - the errors read the same: when the backend refuses to prepare a
//     text query's statement, the query runs as text and the client
//     hears the text statement's error (a syntax error quotes the SQL,
//     which has ? where the client wrote the literal).

// manyRows is how many rows a text query's single route may return and
// still run prepared on that connection the next time.
const manyRows = 64

// prepareJoined reports whether the routes of a joined plan may run as
// backend prepared statements under mode (the client's protocol).
func prepareJoined(plan *router.Plan, mode backendMode) bool {
	return mode == backendPrepared || integerArgs(plan)
}

// prepareText reports whether plan, run for a text query (mode
// backendText), is a single route that SELECTs and may run as a backend
// prepared statement.
func prepareText(plan *router.Plan, mode backendMode) bool {
	return mode == backendText && plan.Kind == router.KindSelect && preparable(plan) && integerArgs(plan)
}

// integerArgs reports whether every route of plan has arguments and all
// are integers.
func integerArgs(plan *router.Plan) bool {
	for i := range plan.Routes {
		args := plan.Routes[i].Args
		if len(args) == 0 {
			return false
		}
		for _, a := range args {
			switch a.(type) {
			case int64, uint64:
			default:
				return false
			}
		}
	}
	return true
}

// textExact reports whether every column's binary-protocol values decode
// (wire.SplitBinaryRow) to exactly the text MariaDB sends for them: the
// integer types, DECIMAL and the string types (ENUM and SET come as
// strings), without ZEROFILL (whose text is padded). Floating point
// values are printed by MariaDB's own algorithm, temporal values with
// the column's fractional digits, YEAR(2) in two digits: those columns,
// or none described, answer false.
func textExact(cols []*mysql.Field) bool {
	if len(cols) == 0 {
		return false
	}
	for _, f := range cols {
		if f.Flag&mysql.ZEROFILL_FLAG != 0 {
			return false
		}
		switch f.Type {
		case mysql.MYSQL_TYPE_TINY, mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_INT24,
			mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_LONGLONG,
			mysql.MYSQL_TYPE_DECIMAL, mysql.MYSQL_TYPE_NEWDECIMAL,
			mysql.MYSQL_TYPE_VARCHAR, mysql.MYSQL_TYPE_VAR_STRING, mysql.MYSQL_TYPE_STRING,
			mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB,
			mysql.MYSQL_TYPE_BLOB, mysql.MYSQL_TYPE_NULL:
		default:
			return false
		}
	}
	return true
}
