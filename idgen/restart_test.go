package idgen

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestKill9Restart kills a process that issues ids from a state file with
// SIGKILL, restarts it from the same file with its clock set back, and
// checks the first new id is above every earlier one; then a set-back far
// beyond the tolerance gets the clock error until the clock catches up.
func TestKill9Restart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "idgen.json")
	seen := map[int64]bool{}
	var maxID int64 = -1
	start := t0

	// run starts a helper whose clock begins at clockStart, reads at least
	// want ids, kills it with SIGKILL and returns the time of its last id.
	run := func(clockStart time.Time, want int) time.Time {
		t.Helper()
		h := startHelper(t, "issue", "IDGEN_STATE_FILE="+state, "IDGEN_CLOCK_START_MS="+strconv.FormatInt(clockStart.UnixMilli(), 10))
		var n int
		var last int64
		killed := false
		for {
			line, ok := h.next(t, 30*time.Second)
			if !ok {
				break
			}
			id := parseID(t, line)
			if n == 0 && id <= maxID {
				t.Fatalf("first id after restart %d is not above the earlier max %d", id, maxID)
			}
			if seen[id] {
				t.Fatalf("id %d issued twice", id)
			}
			seen[id], last, n = true, id, n+1
			if n >= want && !killed {
				if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				killed = true // read what it wrote before dying, to EOF
			}
		}
		if err := h.cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
			t.Fatalf("helper exit = %v, want killed", err)
		}
		if last <= maxID {
			t.Fatalf("last id %d not above the earlier max %d", last, maxID)
		}
		maxID = last
		t.Logf("clock start %s: %d ids, last at %s", clockStart.Format(timeFormat), n, mustDecode(t, last).Time.Format(timeFormat))
		return mustDecode(t, last).Time
	}

	last := run(start, 20000)
	// Set back by 5 ms, then 9 ms: within the 10 ms tolerance, so the
	// generator starts at once, above the persisted mark.
	last = run(last.Add(-5*time.Millisecond), 20000)
	last = run(last.Add(-9*time.Millisecond), 20000)
	// A leap forward and a kill right after it.
	last = run(last.Add(time.Hour), 5000)

	// Set back 10 s: the helper refuses to issue.
	h := startHelper(t, "issue", "IDGEN_STATE_FILE="+state, "IDGEN_CLOCK_START_MS="+strconv.FormatInt(last.Add(-10*time.Second).UnixMilli(), 10))
	line, _ := h.next(t, 30*time.Second)
	if !strings.HasPrefix(line, "err snowflake: clock is behind the persisted high-water mark") {
		t.Fatalf("helper with the clock 10 s back printed %q, want the high-water clock error", line)
	}

	// The same in-process, stepping the clock forward: the error lasts
	// until the clock reaches ResumeAt, then ids resume above every earlier
	// one.
	cfg := DefaultConfig()
	cfg.WorkerID, cfg.StateFile = 9, state
	clock := newFakeClock(last.Add(-10 * time.Second))
	g := newTestGen(t, cfg, clock)
	_, err := g.Next()
	var cb *ClockBackwardsError
	if !errors.As(err, &cb) || !cb.HighWater || cb.Drift < 9*time.Second {
		t.Fatalf("Next() error = %v, want a high-water clock error of about 10 s", err)
	}
	clock.Set(cb.ResumeAt.Add(-time.Millisecond))
	if _, err := g.Next(); !errors.Is(err, ErrClockMovedBackwards) {
		t.Fatalf("Next() 1 ms before ResumeAt error = %v, want ErrClockMovedBackwards", err)
	}
	clock.Set(cb.ResumeAt)
	id, err := g.Next()
	if err != nil || id <= maxID {
		t.Fatalf("Next() at ResumeAt = %d, %v; want an id above %d", id, err, maxID)
	}
	if s := g.Stats(); s.ClockBackSteps != 1 {
		t.Errorf("ClockBackSteps = %d, want 1", s.ClockBackSteps)
	}
}
