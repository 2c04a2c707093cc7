package traffic

import (
	"errors"
	"fmt"
)

// LimitError is a statement a traffic rule refused. The proxy answers it
// as MariaDB answers a user over a resource limit: 1226 for a rate or
// quota, 1203 for a concurrency limit, both SQLSTATE 42000.
type LimitError struct {
	Rule string
	User string
	// Err is ErrLimited, ErrQueueFull or ErrQueueTimeout.
	Err error
	// Limit is the rule's limit, for the message: permits per second or
	// per window, or statements in flight.
	Limit float64
}

// MySQL error numbers of a refused statement.
const (
	// CodeUserLimitReached is ER_USER_LIMIT_REACHED.
	CodeUserLimitReached = 1226
	// CodeTooManyUserConnections is ER_TOO_MANY_USER_CONNECTIONS.
	CodeTooManyUserConnections = 1203
)

// Code is the MySQL error number the client gets.
func (e *LimitError) Code() uint16 {
	if errors.Is(e.Err, ErrLimited) {
		return CodeUserLimitReached
	}
	return CodeTooManyUserConnections
}

func (e *LimitError) Error() string {
	switch {
	case errors.Is(e.Err, ErrQueueFull):
		return fmt.Sprintf("User '%s' already has more than '%s' active statements (%g in flight and the queue is full)", e.User, e.Rule, e.Limit)
	case errors.Is(e.Err, ErrQueueTimeout):
		return fmt.Sprintf("User '%s' already has more than '%s' active statements (%g in flight; the statement timed out in the queue)", e.User, e.Rule, e.Limit)
	}
	return fmt.Sprintf("User '%s' has exceeded the '%s' resource (current value: %g)", e.User, e.Rule, e.Limit)
}

func (e *LimitError) Unwrap() error { return e.Err }
