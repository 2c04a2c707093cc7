package proxy

import (
	"errors"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
)

// The differential queries once more, as prepared statements
// (COM_STMT_PREPARE and COM_STMT_EXECUTE, the binary protocol): the
// merged rows of a multi-route SELECT go to the client converted into
// binary rows (AppendBinaryRow), which must be the rows MariaDB sends for
// the same statement prepared. Each query runs twice, the second time
// with its routes joined per data source (union.go), and both runs must
// give what the reference gives.

// runPrepared prepares q on c, executes it with args and returns its
// columns and rows as the binary protocol delivered them.
func (e *diffEnv) runPrepared(c *client.Conn, q string, args ...any) diffResult {
	var r diffResult
	fail := func(err error) diffResult {
		r.err = err
		var me *mysql.MyError
		if errors.As(err, &me) {
			r.errCode = me.Code
		}
		return r
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	st, err := c.Prepare(q)
	if err != nil {
		return fail(err)
	}
	defer st.Close()
	res, err := st.Execute(args...)
	if err != nil {
		return fail(err)
	}
	defer res.Close()
	if res.Resultset == nil {
		return r
	}
	r.keepFields(res.Fields)
	for _, vals := range res.Values {
		row := make([]*string, 0, len(vals))
		for i := range vals {
			v := &vals[i]
			var s string
			switch v.Type {
			case mysql.FieldValueTypeNull:
				row = append(row, nil)
				continue
			case mysql.FieldValueTypeString:
				s = string(v.AsString())
			default:
				s = v.String()
			}
			row = append(row, &s)
		}
		r.rows = append(r.rows, row)
	}
	return r
}

func TestMergeDifferentialPrepared(t *testing.T) {
	e := diffEnvironment(t)
	joins := e.srv.current().joins
	joined := 0
	for _, tc := range diffQueries {
		for run := range 2 {
			before := joins.joined.Load()
			got := e.runPrepared(e.proxyRaw, tc.sql)
			if run == 1 && joins.joined.Load() > before {
				joined++
			}
			want := e.runPrepared(e.refRaw, tc.sql)
			if d := compareResults(tc, got, want); d != "" {
				t.Errorf("%s (prepared, run %d)\n%s", tc.sql, run+1, d)
				break
			}
		}
	}
	t.Logf("%d of %d queries ran joined", joined, len(diffQueries))
	if joined < len(diffQueries)/3 {
		t.Errorf("only %d of %d queries ran joined: the prepared differential does not exercise the UNION", joined, len(diffQueries))
	}
}
