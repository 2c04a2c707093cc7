package proxy

import (
	"strconv"
	"strings"

	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

// combineOK makes the one OK packet the client sees for a write that ran
// as several routes, as MariaDB would answer the logical statement:
//
//   - a write to a broadcast table changed every copy alike, and the
//     client changed one table: it gets one copy's counts (the first data
//     source's). When the copies disagree, copies returns each one's
//     affected rows, for the session to log: the copies have drifted;
//   - otherwise affected rows and warnings add up; the insert id is the
//     first generated key, else the first non-zero one a data source
//     reported (AUTO_INCREMENT); the info string (UPDATE's "Rows matched:
//     N  Changed: M  Warnings: W", a multi-row INSERT's or INSERT ...
//     SELECT's "Records: N  Duplicates: M  Warnings: W") is summed.
func combineOK(plan *router.Plan, oks []wire.OK) (ok wire.OK, copies []uint64) {
	ok.InsertID = firstKey(plan)
	if len(oks) == 1 {
		if ok.InsertID == 0 {
			ok.InsertID = oks[0].InsertID
		}
		ok.AffectedRows, ok.Warnings, ok.Info = oks[0].AffectedRows, oks[0].Warnings, oks[0].Info
		return ok, nil
	}
	if plan.Type == router.RouteBroadcast && isWrite(plan.Kind) && len(oks) > 0 {
		first := oks[0]
		if ok.InsertID == 0 {
			ok.InsertID = first.InsertID
		}
		ok.AffectedRows, ok.Warnings, ok.Info = first.AffectedRows, first.Warnings, first.Info
		for _, o := range oks[1:] {
			if o.AffectedRows != first.AffectedRows {
				for _, o := range oks {
					copies = append(copies, o.AffectedRows)
				}
				break
			}
		}
		return ok, copies
	}
	for _, o := range oks {
		ok.AffectedRows += o.AffectedRows
		ok.Warnings += o.Warnings
		if ok.InsertID == 0 {
			ok.InsertID = o.InsertID
		}
	}
	ok.Info = sumInfo(plan.Kind, plan.Duplicates, oks)
	return ok, nil
}

func isWrite(k router.StatementKind) bool {
	return k == router.KindInsert || k == router.KindUpdate || k == router.KindDelete
}

// infoCounts is an info string read as its labels and numbers, e.g.
// ["Records" "Duplicates" "Warnings"] and [3 0 0].
type infoCounts struct {
	labels []string
	values []uint64
}

// parseInfo reads "Label: N  Label: N ..."; ok is false for anything
// else.
func parseInfo(s string) (c infoCounts, ok bool) {
	for _, part := range strings.Split(s, "  ") {
		label, num, found := strings.Cut(strings.TrimSpace(part), ": ")
		if !found || label == "" {
			return c, false
		}
		n, err := strconv.ParseUint(num, 10, 64)
		if err != nil {
			return c, false
		}
		c.labels = append(c.labels, label)
		c.values = append(c.values, n)
	}
	return c, len(c.labels) > 0
}

func (c infoCounts) String() string {
	var b strings.Builder
	for i, l := range c.labels {
		if i > 0 {
			b.WriteString("  ")
		}
		b.WriteString(l)
		b.WriteString(": ")
		b.WriteString(strconv.FormatUint(c.values[i], 10))
	}
	return b.String()
}

// sumInfo adds up the routes' info strings when they have the same form.
// A single-row INSERT reports none, where the statement as a whole (a
// multi-row INSERT split by data node) reports Records: its route counts
// one record, and its duplicates as MariaDB counts them (singleDuplicates).
// "" when there is nothing to report or the forms differ.
func sumInfo(kind router.StatementKind, dup router.Duplicates, oks []wire.OK) string {
	var sum infoCounts
	have := false
	for _, o := range oks {
		c, ok := parseInfo(o.Info)
		switch {
		case ok:
		case o.Info == "" && kind == router.KindInsert:
			c = infoCounts{labels: []string{"Records", "Duplicates", "Warnings"}, values: []uint64{1, singleDuplicates(dup, o.AffectedRows), uint64(o.Warnings)}}
		default:
			return ""
		}
		if !have {
			sum = infoCounts{labels: c.labels, values: make([]uint64, len(c.values))}
			have = true
		}
		if strings.Join(c.labels, ",") != strings.Join(sum.labels, ",") {
			return ""
		}
		for i, v := range c.values {
			sum.values[i] += v
		}
	}
	if !have {
		return ""
	}
	return sum.String()
}

// singleDuplicates is what MariaDB's "Duplicates: M" counts of one row
// that affected rows: INSERT IGNORE a row it skipped (0); REPLACE the
// rows it deleted (beyond the one inserted); ON DUPLICATE KEY UPDATE a
// row it changed (2), not one it left as it was (0, or 1 under
// CLIENT_FOUND_ROWS); INSERT IGNORE ... ON DUPLICATE KEY UPDATE a row it
// left as it was (0), not one it changed.
func singleDuplicates(dup router.Duplicates, affected uint64) uint64 {
	switch dup {
	case router.DuplicatesSkipped, router.DuplicatesSkippedOrUpdated:
		if affected == 0 {
			return 1
		}
	case router.DuplicatesReplaced:
		if affected > 1 {
			return affected - 1
		}
	case router.DuplicatesUpdated:
		if affected == 2 {
			return 1
		}
	}
	return 0
}
