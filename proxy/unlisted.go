package proxy

import (
	"errors"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/router"
)

// unlistedError is the error a client sees for err, a merged SELECT's
// failure: a route's MariaDB resolves the hidden columns the router added
// for ORDER BY, GROUP BY or HAVING with the select list, so an unknown
// name there comes back as 1054 "Unknown column 'x' in 'SELECT'" (in
// 'field list' from older releases), where one server given the client's
// statement names the clause the client wrote it in.
// The plan lists those names (router.UnlistedColumn); any other error is
// returned as it is. A prepare's error is mapped where the statement's
// columns are described (routedColumns).
func (srv *Server) unlistedError(plan *router.Plan, err error) error {
	var my *mysql.MyError
	if plan.Merge == nil || plan.Merge.Unlisted == nil || !errors.As(err, &my) {
		return err
	}
	if m := srv.unlisted(*plan.Merge.Unlisted, my); m != nil {
		return m
	}
	return err
}

// unlisted is my in the clause of the unlisted name it reports in the
// select list; nil when it reports none of them.
func (srv *Server) unlisted(names []router.UnlistedColumn, my *mysql.MyError) *mysql.MyError {
	const prefix = "Unknown column '"
	if my.Code != mysql.ER_BAD_FIELD_ERROR {
		return nil
	}
	rest, ok := strings.CutPrefix(my.Message, prefix)
	if !ok {
		return nil
	}
	// The data source's wording of the select list says which wording
	// it uses for the other clauses.
	name, current := strings.CutSuffix(rest, "' in 'SELECT'")
	if !current {
		if name, ok = strings.CutSuffix(rest, "' in 'field list'"); !ok {
			return nil
		}
	}
	logical := srv.logicalNames(name)
	for _, u := range names {
		if u.Name != logical {
			continue
		}
		clause := u.Clause.String()
		if !current {
			clause = olderClauseName(u.Clause)
		}
		return &mysql.MyError{Code: my.Code, State: my.State, Message: prefix + name + "' in '" + clause + "'"}
	}
	return nil
}

// olderClauseName is how older MariaDB releases, and MySQL, which say
// 'field list' for the select list, name a clause in 1054.
func olderClauseName(c router.Clause) string {
	switch c {
	case router.ClauseWhere:
		return "where clause"
	case router.ClauseOrderBy:
		return "order clause"
	case router.ClauseGroupBy:
		return "group statement"
	case router.ClauseHaving:
		return "having clause"
	}
	return c.String()
}
