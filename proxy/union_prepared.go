package proxy

import (
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/router"
)

// Joined routes as backend prepared statements. A data source's UNION ALL
// of its four tables of a sysbench range costs MariaDB 12-30% less CPU as
// COM_STMT_EXECUTE of a statement prepared once per connection than as
// COM_QUERY of its ~1.5 KB of SQL (bench/shapes: simple range 130 -> 95
// us, SUM 123 -> 88, ORDER BY 141 -> 124, DISTINCT 179 -> 170, medians of
// 9 rounds on one server), so a joined plan's routes run prepared where
// that answers exactly as the text statement does:
//
//   - the arguments mean the same: a client's COM_STMT_EXECUTE passes its
//     own values, as a single route's backend statement takes them; a
//     text query's routes qualify when each has arguments and all are
//     integers (the literals sqlarg.Normalize took out of the client's
//     SQL, which as parameters compare, limit and select exactly as the
//     literals did). A route without arguments stays text: its SQL may
//     come once, and preparing it would cost a round trip.
//   - the rows read the same: the merge reads text values, and the
//     binary rows are decoded into them (wire.SplitBinaryRow), which is
//     exact for integers, decimals and strings only (textExact). A
//     statement with any other column (floating point, temporal, BIT,
//     ZEROFILL) runs as text, as before.

// prepareJoined reports whether the routes of a joined plan may run as
// backend prepared statements under mode (the client's protocol).
func prepareJoined(plan *router.Plan, mode backendMode) bool {
	if mode == backendPrepared {
		return true
	}
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
