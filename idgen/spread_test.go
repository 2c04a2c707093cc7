package idgen

import (
	"fmt"
	"testing"
	"time"
)

// moduli are the shard counts the spread promises to serve evenly: powers
// of two up to 32 and the decimal 10 and 1000.
var moduli = []int64{2, 4, 8, 16, 32, 10, 1000}

// chi2Critical is the chi-square critical value at p = 0.001 by degrees of
// freedom (m − 1).
//
// The spread tests make well over a hundred such checks, so a few uniform
// runs in a thousand would fail one by chance. A check that fails is
// therefore repeated on the same scenario with a second fixed seed and the
// test fails only if it fails again (p = 10⁻⁶ for uniform ids); a real skew,
// like the plain-Snowflake controls below, fails both runs by orders of
// magnitude. Both seeds are fixed, so every result is reproducible.
var chi2Critical = map[int64]float64{1: 10.828, 3: 16.266, 7: 24.322, 9: 27.877, 15: 37.697, 31: 61.098, 999: 1142.848}

// chiSquare is Pearson's statistic of id % m against the uniform
// distribution.
func chiSquare(ids []int64, m int64) float64 {
	counts := make([]float64, m)
	for _, id := range ids {
		counts[id%m]++
	}
	want := float64(len(ids)) / float64(m)
	var stat float64
	for _, c := range counts {
		stat += (c - want) * (c - want) / want
	}
	return stat
}

// uniformity reports, per modulus, whether id % m passes the chi-square test,
// logging the statistic.
func uniformity(t *testing.T, name string, ids []int64, mods []int64) map[int64]bool {
	t.Helper()
	if min := int(5 * mods[len(mods)-1]); len(ids) < min {
		t.Fatalf("%s: %d ids, need %d for expected counts of 5", name, len(ids), min)
	}
	pass := map[int64]bool{}
	for _, m := range mods {
		stat, crit := chiSquare(ids, m), chi2Critical[m-1]
		pass[m] = stat <= crit
		t.Logf("%-44s id %% %-4d  chi2 %9.1f  (critical %7.1f, n %d)", name, m, stat, crit, len(ids))
	}
	return pass
}

// Seeds of the first run and of the confirmation run.
var spreadSeeds = [2][2]uint64{{20240101, 7}, {977, 31337}}

// checkSpread runs the checks that samples(seed) yields (named samples of
// ids, each with its moduli) and fails the test for a check that exceeds
// the critical value with both seeds.
func checkSpread(t *testing.T, samples func(seed [2]uint64) []sample) {
	t.Helper()
	failed := map[string]bool{}
	for _, sm := range samples(spreadSeeds[0]) {
		for m, ok := range uniformity(t, sm.name, sm.ids, sm.mods) {
			if !ok {
				failed[fmt.Sprintf("%s: id %% %d", sm.name, m)] = true
			}
		}
	}
	if len(failed) == 0 {
		return
	}
	t.Logf("confirming %d check(s) above the critical value with seed %v", len(failed), spreadSeeds[1])
	for _, sm := range samples(spreadSeeds[1]) {
		for m, ok := range uniformity(t, sm.name+" (confirmation)", sm.ids, sm.mods) {
			if key := fmt.Sprintf("%s: id %% %d", sm.name, m); failed[key] && !ok {
				t.Errorf("%s is not uniform (p < 0.001 with both seeds)", key)
			}
		}
	}
}

// sample is one named set of ids to check against some moduli.
type sample struct {
	name string
	ids  []int64
	mods []int64
}

// simulate draws ids from a generator whose clock the scenario drives.
type simulate struct {
	clock func() Clock
	// statement returns, for the i-th statement, its table and row count.
	statement func(i int) (table, rows int)
	n         int // statements
}

// run returns, per table, every id issued and the first and last id of
// each statement.
func (s simulate) run(t *testing.T, seed [2]uint64) (ids, firsts, lasts map[int][]int64) {
	t.Helper()
	g := newTestGen(t, staticConfig(1, 6), s.clock(), WithSeed(seed[0], seed[1]))
	ids, firsts, lasts = map[int][]int64{}, map[int][]int64{}, map[int][]int64{}
	for i := range s.n {
		table, rows := s.statement(i)
		first, err := g.NextN(rows)
		if err != nil {
			t.Fatalf("statement %d: NextN(%d) error = %v", i, rows, err)
		}
		firsts[table] = append(firsts[table], first)
		lasts[table] = append(lasts[table], first+int64(rows)-1)
		for r := range int64(rows) {
			ids[table] = append(ids[table], first+r)
		}
	}
	return ids, firsts, lasts
}

// ticks is a clock that advances step every every-th reading.
func ticks(every int64, step time.Duration) func() Clock {
	return func() Clock { return newTickClock(t0, every, step) }
}

// saturated is a clock that moves only when the generator sleeps.
func saturated() Clock { return newFakeClock(t0) }

func oneRow(int) (int, int)           { return 0, 1 }
func alternate(i int) (int, int)      { return i % 2, 1 }
func batchOf(i int) (int, int)        { return 0, 1 + i%20 }
func twoTablesBatch(i int) (int, int) { return i % 2, 1 + i%7 }

// sampling says which ids of a scenario the chi-square test sees.
type sampling int

const (
	// everyID: all ids. Right when each statement is one row, and at
	// saturation, where a table's ids are runs of consecutive values
	// (stratified, so if anything more even than independent draws).
	everyID sampling = iota + 1
	// firstAndLastRows: the first and the last row of each statement, as
	// two samples. Below saturation the rows of one multi-row statement
	// are consecutive, so their residues are not independent draws and
	// Pearson's statistic over all of them is not chi-square distributed;
	// each row position across statements is. Rows in between are
	// first+k, uniform exactly when the first is.
	firstAndLastRows
)

func TestSpreadIsUniform(t *testing.T) {
	tests := []struct {
		name string
		give simulate
		see  sampling
	}{
		{name: "one id per millisecond", see: everyID,
			give: simulate{clock: ticks(1, time.Millisecond), statement: oneRow, n: 40000}},
		{name: "one id per second", see: everyID,
			give: simulate{clock: ticks(1, time.Second), statement: oneRow, n: 40000}},
		{name: "ten ids per millisecond", see: everyID,
			give: simulate{clock: ticks(10, time.Millisecond), statement: oneRow, n: 100000}},
		// The clock moves only when the generator sleeps: demand is far
		// above 4096 per millisecond and the generator borrows.
		{name: "saturation", see: everyID,
			give: simulate{clock: saturated, statement: oneRow, n: 400000}},
		{name: "batches of 1..20 rows, one per millisecond", see: firstAndLastRows,
			give: simulate{clock: ticks(1, time.Millisecond), statement: batchOf, n: 40000}},
		{name: "batches of 1..20 rows, one per second", see: firstAndLastRows,
			give: simulate{clock: ticks(1, time.Second), statement: batchOf, n: 40000}},
		{name: "batches of 1..20 rows at saturation", see: everyID,
			give: simulate{clock: saturated, statement: batchOf, n: 40000}},
		{name: "two tables alternating, one id per millisecond", see: everyID,
			give: simulate{clock: ticks(1, time.Millisecond), statement: alternate, n: 80000}},
		{name: "two tables alternating, one id per second", see: everyID,
			give: simulate{clock: ticks(1, time.Second), statement: alternate, n: 80000}},
		// Both tables get an id in the same millisecond: order then item.
		{name: "two tables, one id each per millisecond", see: everyID,
			give: simulate{clock: ticks(2, time.Millisecond), statement: alternate, n: 80000}},
		{name: "two tables alternating batches of 1..7 rows", see: firstAndLastRows,
			give: simulate{clock: ticks(1, time.Millisecond), statement: twoTablesBatch, n: 80000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkSpread(t, func(seed [2]uint64) []sample {
				ids, firsts, lasts := tt.give.run(t, seed)
				var out []sample
				for table := range len(ids) {
					switch tt.see {
					case everyID:
						out = append(out, sample{fmt.Sprintf("table %d", table), ids[table], moduli})
					case firstAndLastRows:
						out = append(out, sample{fmt.Sprintf("table %d first rows", table), firsts[table], moduli},
							sample{fmt.Sprintf("table %d last rows", table), lasts[table], moduli})
					}
				}
				return out
			})
		})
	}
}

// At saturation a strict alternation gives each table every other id of a
// millisecond, so within one millisecond a table's ids share their parity
// (a consecutive sequence cannot avoid that). What the spread guarantees is
// that this parity, and the residue mod 2..32 of each table's ids, is
// random from one millisecond to the next: the test checks the first id of
// each table in each millisecond, and that over the run each table's ids
// split evenly to within 2%.
func TestSpreadTwoTablesAtSaturation(t *testing.T) {
	sim := simulate{clock: saturated, statement: alternate, n: 1_000_000}
	checkSpread(t, func(seed [2]uint64) []sample {
		ids, _, _ := sim.run(t, seed)
		var out []sample
		for table := range 2 {
			var perMs []int64
			lastMs := int64(-1)
			for _, id := range ids[table] {
				if ms := id >> 22; ms != lastMs {
					perMs, lastMs = append(perMs, id), ms
				}
			}
			out = append(out, sample{fmt.Sprintf("table %d, first id per millisecond", table), perMs, moduli[:5]})
			if seed != spreadSeeds[0] {
				continue
			}
			for _, m := range moduli[:5] {
				counts := make([]int, m)
				for _, id := range ids[table] {
					counts[id%m]++
				}
				want := float64(len(ids[table])) / float64(m)
				for r, c := range counts {
					if dev := (float64(c) - want) / want; dev > 0.02 || dev < -0.02 {
						t.Errorf("table %d: id %% %d == %d holds %d ids, %.1f%% off even", table, m, r, c, 100*dev)
					}
				}
			}
		}
		return out
	})
}

// The checker must reject what a plain Snowflake produces, or passing it
// means nothing.
func TestSpreadCheckerRejectsPlainSnowflake(t *testing.T) {
	l := DefaultLayout()
	compose := func(ms int64, seq int) int64 {
		id, err := l.Compose(Parts{Millis: ms, Datacenter: 1, Worker: 6, Sequence: seq})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	base := t0.UnixMilli() - l.Epoch.UnixMilli()
	var perMs, perSecond, vibrationOrders []int64
	for i := range int64(40000) {
		perMs = append(perMs, compose(base+i, 0)) // sequence always 0
		perSecond = append(perSecond, compose(base+1000*i, 0))
		// ShardingSphere's max-vibration-offset 1 with orders and items
		// alternating, each in a new millisecond: orders always get 0.
		vibrationOrders = append(vibrationOrders, compose(base+2*i, 0))
	}
	tests := []struct {
		name string
		give []int64
	}{
		{name: "plain Snowflake, one id per millisecond", give: perMs},
		{name: "plain Snowflake, one id per second", give: perSecond},
		{name: "vibration offset 1, orders of two alternating tables", give: vibrationOrders},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for m, ok := range uniformity(t, tt.name, tt.give, moduli) {
				if ok {
					t.Errorf("the checker accepted id %% %d of %s", m, tt.name)
				}
			}
		})
	}
}
