package router

import "fmt"

// Error is a routing or configuration error with the MySQL error number and
// SQLSTATE a client should see. The proxy's error boundary turns it into a
// MySQL error packet unchanged (errors.As, never by parsing the text).
type Error struct {
	Code    uint16 // MySQL error number, e.g. 1235
	State   string // SQLSTATE, e.g. "42000"
	Message string
}

// Error returns the code and message, as the explain and check commands print them.
func (e *Error) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Message) }

// MySQL error numbers the router returns.
const (
	CodeUnknown       uint16 = 1105 // ER_UNKNOWN_ERROR, HY000
	CodeParse         uint16 = 1064 // ER_PARSE_ERROR, 42000
	CodeNoSuchTable   uint16 = 1146 // ER_NO_SUCH_TABLE, 42S02
	CodeBadField      uint16 = 1054 // ER_BAD_FIELD_ERROR, 42S22
	CodeNotSupported  uint16 = 1235 // ER_NOT_SUPPORTED_YET, 42000
	CodeWrongValueCnt uint16 = 1136 // ER_WRONG_VALUE_COUNT_ON_ROW, 21S01
	CodeBadDB         uint16 = 1049 // ER_BAD_DB_ERROR, 42000
	CodeNoDB          uint16 = 1046 // ER_NO_DB_ERROR, 3D000
	CodeWrongArgs     uint16 = 1210 // ER_WRONG_ARGUMENTS, HY000
)

func newError(code uint16, state, format string, args ...any) *Error {
	return &Error{Code: code, State: state, Message: fmt.Sprintf(format, args...)}
}

// errNotSupported is the 1235 error for statements the router cannot route
// correctly; the message says why.
func errNotSupported(format string, args ...any) *Error {
	return newError(CodeNotSupported, "42000", format, args...)
}
