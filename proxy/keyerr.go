package proxy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/router"
)

// erWarnDataOutOfRange is MySQL's "Out of range value for column".
const erWarnDataOutOfRange = 1264

// GeneratedKeyError: a data source refused a key the proxy generated
// (1264, the key column is narrower than a Snowflake key, e.g.
// sysbench's `id INTEGER AUTO_INCREMENT`). The client sees the data
// source's number and SQLSTATE with a message that says why.
type GeneratedKeyError struct {
	Column string
	Err    error
}

func (e *GeneratedKeyError) Error() string {
	msg := e.Err.Error()
	var my *mysql.MyError
	if errors.As(e.Err, &my) {
		msg = my.Message
	}
	return fmt.Sprintf("%s (the value was a key shardflake generated for %s: a 64-bit Snowflake key, which needs a BIGINT column; make %s BIGINT, or give the key in the INSERT)", msg, e.Column, e.Column)
}

func (e *GeneratedKeyError) Unwrap() error { return e.Err }

// keyError explains a write's out-of-range error on the column the router
// filled with generated keys; other errors pass unchanged.
func keyError(plan *router.Plan, err error) error {
	if plan.Keys == nil || plan.Keys.Count == 0 || err == nil {
		return err
	}
	var my *mysql.MyError
	if !errors.As(err, &my) || my.Code != erWarnDataOutOfRange {
		return err
	}
	if !strings.Contains(strings.ToLower(my.Message), "'"+strings.ToLower(plan.Keys.Column)+"'") {
		return err
	}
	return &GeneratedKeyError{Column: plan.Keys.Column, Err: err}
}
