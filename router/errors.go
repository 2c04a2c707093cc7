package router

import (
	"errors"
	"fmt"

	"github.com/shardflake/shardflake/algorithm"
)

// Error is a routing or configuration error with the MySQL error number and
// SQLSTATE a client should see. The proxy's error boundary turns it into a
// MySQL error packet unchanged (errors.As, never by parsing the text).
//
// Every error Router.Prepare and Prepared.Bind return is an *Error (wrapped
// or not) with one of the Code constants below. Err, when set, is the cause
// (for example the key generator's error), so errors.Is still finds it.
type Error struct {
	Code    uint16 // MySQL error number, e.g. 1235
	State   string // SQLSTATE, e.g. "42000"
	Message string
	Err     error
}

// Error returns the code and message, as the explain and check commands print them.
func (e *Error) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Message) }

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// MySQL error numbers the router returns.
const (
	CodeUnknown        uint16 = 1105 // ER_UNKNOWN_ERROR, HY000
	CodeParse          uint16 = 1064 // ER_PARSE_ERROR, 42000
	CodeNoSuchTable    uint16 = 1146 // ER_NO_SUCH_TABLE, 42S02
	CodeBadField       uint16 = 1054 // ER_BAD_FIELD_ERROR, 42S22
	CodeNotSupported   uint16 = 1235 // ER_NOT_SUPPORTED_YET, 42000
	CodeWrongValueCnt  uint16 = 1136 // ER_WRONG_VALUE_COUNT_ON_ROW, 21S01
	CodeBadDB          uint16 = 1049 // ER_BAD_DB_ERROR, 42000
	CodeNoDB           uint16 = 1046 // ER_NO_DB_ERROR, 3D000
	CodeWrongArgs      uint16 = 1210 // ER_WRONG_ARGUMENTS, HY000
	CodeFieldTwice     uint16 = 1110 // ER_FIELD_SPECIFIED_TWICE, 42000
	CodeNonUniqTable   uint16 = 1066 // ER_NONUNIQ_TABLE, 42000
	CodeBadNull        uint16 = 1048 // ER_BAD_NULL_ERROR, 23000
	CodeTooLongIdent   uint16 = 1059 // ER_TOO_LONG_IDENT, 42000
	CodeWrongFieldSpec uint16 = 1063 // ER_WRONG_FIELD_SPEC, 42000
	CodeWrongUsage     uint16 = 1221 // ER_WRONG_USAGE, HY000
	CodeTableNotHere   uint16 = 1250 // ER_TABLENAME_NOT_ALLOWED_HERE, 42000
)

// StateOf returns the SQLSTATE of a code in the router's catalog, and
// false for a code the router never returns. The fuzz test checks every
// error against it.
func StateOf(code uint16) (string, bool) {
	switch code {
	case CodeUnknown, CodeWrongArgs, CodeWrongUsage:
		return "HY000", true
	case CodeParse, CodeNotSupported, CodeBadDB, CodeFieldTwice, CodeNonUniqTable, CodeTooLongIdent, CodeWrongFieldSpec, CodeTableNotHere:
		return "42000", true
	case CodeNoSuchTable:
		return "42S02", true
	case CodeBadField:
		return "42S22", true
	case CodeWrongValueCnt:
		return "21S01", true
	case CodeNoDB:
		return "3D000", true
	case CodeBadNull:
		return "23000", true
	}
	return "", false
}

// ErrProxyStatement is wrapped by the error Bind returns for a statement of
// KindOther: SET, USE, SHOW TABLES, BEGIN, KILL and the like are the
// proxy's to answer, not the router's to route.
var ErrProxyStatement = errors.New("statement is handled by the proxy, not routed")

func newError(code uint16, state, format string, args ...any) *Error {
	return &Error{Code: code, State: state, Message: fmt.Sprintf(format, args...)}
}

// errNotSupported is the 1235 error for statements the router cannot route
// correctly; the message says why.
func errNotSupported(format string, args ...any) *Error {
	return newError(CodeNotSupported, "42000", format, args...)
}

// errSyntax is the 1064 error for text the router itself parses (hints).
func errSyntax(format string, args ...any) *Error {
	return newError(CodeParse, "42000", format, args...)
}

// errRouting wraps an error from a sharding algorithm: an *Error passes
// through, an algorithm's refusal (*algorithm.RouteError) becomes 1235 with its
// message, anything else becomes 1105 with the cause kept.
func errRouting(table string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	var re *algorithm.RouteError
	if errors.As(err, &re) {
		return errNotSupported("%s", re.Message)
	}
	return &Error{Code: CodeUnknown, State: "HY000", Message: fmt.Sprintf("routing %s: %v", table, err), Err: err}
}
