package merge

import (
	"fmt"
	"math"

	"github.com/shardflake/shardflake/proxy/internal/sqlvalue"
	"github.com/shardflake/shardflake/proxy/rows"
	"github.com/shardflake/shardflake/router"
)

// varianceSpec resolves the partial COUNT, SUM and VAR_POP columns of a
// VAR_POP, VAR_SAMP, STDDEV_POP or STDDEV_SAMP.
func (p *pipeline) varianceSpec(s *aggSpec, a router.Aggregate) error {
	if !a.Func.Variance() {
		return &InternalError{Msg: fmt.Sprintf("%s with a partial VAR_POP column", a.Func)}
	}
	var err error
	if s.cnt, err = p.column(a.Count); err != nil {
		return err
	}
	if s.sum, err = p.column(a.Sum); err != nil {
		return err
	}
	if s.varPop, err = p.column(a.VarPop); err != nil {
		return err
	}
	return nil
}

// addVariance folds one route's partial (count, mean = SUM/COUNT,
// VAR_POP*count) into st with the parallel-variance update (Chan, Golub
// and LeVeque): the squared deviations combine without subtracting large
// sums of squares, so the result keeps the precision MariaDB's own
// running (Welford) computation has.
func (s *aggSpec) addVariance(st *aggState, row rows.Row) error {
	nb, err := parseCount(row[s.cnt])
	if err != nil || nb == 0 {
		return err
	}
	// SUM of a string column is a DOUBLE of its numeric prefixes, as
	// MariaDB reads them for VAR_POP too.
	sum, _ := sqlvalue.ParseDouble(row[s.sum])
	varPop, ok := sqlvalue.ParseDouble(row[s.varPop])
	if !ok {
		return &InternalError{Msg: fmt.Sprintf("partial VAR_POP %q of %s is not a number", row[s.varPop], s.fn)}
	}
	meanB, m2B := sum/float64(nb), varPop*float64(nb)
	if st.n == 0 {
		st.n, st.float, st.m2 = nb, meanB, m2B
		return nil
	}
	n := st.n + nb
	delta := meanB - st.float
	st.float += delta * float64(nb) / float64(n)
	st.m2 += m2B + delta*delta*(float64(st.n)*float64(nb)/float64(n))
	st.n = n
	return nil
}

// varianceResult appends the merged variance or standard deviation, a
// DOUBLE printed with the column's decimals; NULL over no rows, and over
// one row for the _SAMP forms, as MariaDB answers.
func (s *aggSpec) varianceResult(st *aggState, dst []byte) ([]byte, bool) {
	var v float64
	switch s.fn {
	case router.AggVarPop, router.AggStddevPop:
		if st.n == 0 {
			return dst, false
		}
		v = st.m2 / float64(st.n)
	default:
		if st.n <= 1 {
			return dst, false
		}
		v = st.m2 / float64(st.n-1)
	}
	if s.fn == router.AggStddevPop || s.fn == router.AggStddevSamp {
		v = math.Sqrt(v)
	}
	return sqlvalue.AppendDouble(dst, v, s.out.Decimals), true
}
