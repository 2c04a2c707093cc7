package algorithm

import "fmt"

// RouteError is a sharding algorithm's refusal to route: a value it cannot
// place, or a range it may not scan. The router turns it into its 1235
// error (ER_NOT_SUPPORTED_YET) with the same message; any other error from
// an algorithm becomes 1105.
type RouteError struct {
	Message string
}

// Error writes the message as the router reports it, with its 1235 code,
// so a caller that prints it unwrapped (the check command's simulation)
// shows what a client would see.
func (e *RouteError) Error() string { return "1235: " + e.Message }

// errNotSupported is the RouteError with a formatted message.
func errNotSupported(format string, args ...any) *RouteError {
	return &RouteError{Message: fmt.Sprintf(format, args...)}
}
