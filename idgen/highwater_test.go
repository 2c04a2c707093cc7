package idgen

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func stateConfig(t *testing.T) Config {
	t.Helper()
	c := staticConfig(0, 4)
	c.StateFile = filepath.Join(t.TempDir(), "idgen.json")
	return c
}

func readState(t *testing.T, path string) stateFileJSON {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s stateFileJSON
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("state file %s: %v", path, err)
	}
	return s
}

func nextOK(t *testing.T, g *Snowflake) int64 {
	t.Helper()
	id, err := g.Next()
	if err != nil {
		t.Fatalf("Next() error = %v", err)
	}
	return id
}

func TestHighWaterCoversEveryIssuedID(t *testing.T) {
	cfg := stateConfig(t)
	cfg.HighWaterReserve = 100 * time.Millisecond
	clock := newFakeClock(t0)
	g := newTestGen(t, cfg, clock)
	steps := []time.Duration{0, time.Millisecond, 30 * time.Millisecond, 49 * time.Millisecond, 51 * time.Millisecond,
		99 * time.Millisecond, 101 * time.Millisecond, time.Hour, time.Millisecond}
	for _, step := range steps {
		clock.Advance(step)
		for range 3 {
			id := nextOK(t, g)
			issued := mustDecode(t, id).Time.UnixMilli()
			// A write in flight may land later, but the file already holds
			// a mark at or above every id issued.
			if hw := readState(t, cfg.StateFile).HighWaterUnixMs; hw < issued {
				t.Fatalf("after a %s step: issued ms %d above the persisted mark %d", step, issued, hw)
			}
		}
	}
}

func TestHighWaterReservedAhead(t *testing.T) {
	cfg := stateConfig(t)
	cfg.HighWaterReserve = 100 * time.Millisecond
	clock := newFakeClock(t0)
	g := newTestGen(t, cfg, clock)
	nextOK(t, g) // nothing persisted yet: this one waits for the write
	if s := g.Stats(); s.HighWaterWaits != 1 || !s.HighWater.Equal(t0.Add(100*time.Millisecond)) {
		t.Fatalf("after the first id: %d waits, mark %s; want 1 wait, mark t0+100ms", s.HighWaterWaits, s.HighWater)
	}
	// Past half the window the next one is reserved in the background...
	clock.Advance(60 * time.Millisecond)
	nextOK(t, g)
	eventually(t, "background reservation", func() bool { return g.Stats().HighWater.Equal(t0.Add(160 * time.Millisecond)) })
	// ...so crossing the old mark does not wait.
	clock.Advance(50 * time.Millisecond)
	nextOK(t, g)
	if s := g.Stats(); s.HighWaterWaits != 1 {
		t.Errorf("crossing a mark reserved ahead waited: %d waits, want 1", s.HighWaterWaits)
	}
}

// eventually polls cond until it holds, failing after 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRestartFromStateFile(t *testing.T) {
	cfg := stateConfig(t)
	clock := newFakeClock(t0)
	g1 := newTestGen(t, cfg, clock)
	var last int64
	for range 5000 {
		last = nextOK(t, g1)
	}
	if err := g1.Close(); err != nil {
		t.Fatal(err)
	}
	stopped := clock.Now()

	tests := []struct {
		name      string
		give      time.Duration // clock at restart minus clock at the stop
		wantError bool
	}{
		{name: "same clock, mark a reserve ahead", give: 0},
		{name: "clock back 5ms, within tolerance", give: -5 * time.Millisecond},
		{name: "clock back 10s", give: -10 * time.Second, wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := readState(t, cfg.StateFile)
			hw, wall := time.UnixMilli(st.HighWaterUnixMs), time.UnixMilli(st.WallUnixMs)
			clock := newFakeClock(stopped.Add(tt.give))
			g := newTestGen(t, cfg, clock)
			if tt.wantError {
				for range 3 {
					_, err := g.Next()
					var cb *ClockBackwardsError
					if !errors.As(err, &cb) || !cb.HighWater || cb.Drift > -tt.give || cb.Drift < -tt.give-cfg.HighWaterReserve ||
						!cb.ResumeAt.Equal(wall.Add(-cfg.MaxTolerate)) {
						t.Fatalf("Next() error = %v, want the high-water clock error, drift about %s", err, -tt.give)
					}
				}
				clock.Set(wall.Add(-cfg.MaxTolerate))
			}
			first := nextOK(t, g)
			if first <= last {
				t.Fatalf("first id after restart %d is not above the last before %d", first, last)
			}
			if got := mustDecode(t, first).Time; !got.After(hw) {
				t.Errorf("first id after restart at %s, want after the mark %s", got, hw)
			}
			// The restart's lead (up to the reserve) is allowed, and more
			// ids keep coming without a long wait.
			for range 10000 {
				last = nextOK(t, g)
			}
			if _, slept := clock.Sleeps(); slept > 50*time.Millisecond {
				t.Errorf("slept %s after restart, want short waits only", slept)
			}
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
			stopped = clock.Now()
		})
	}
}

func TestRestartLeadRunsDown(t *testing.T) {
	cfg := stateConfig(t)
	clock := newFakeClock(t0)
	g1 := newTestGen(t, cfg, clock)
	nextOK(t, g1)
	g1.Close()
	g := newTestGen(t, cfg, clock)
	nextOK(t, g)
	s := g.Stats()
	if s.Lead < 900*time.Millisecond || s.LeadCap < s.Lead {
		t.Fatalf("restart at the same time: lead %s cap %s, want about the 1s reserve", s.Lead, s.LeadCap)
	}
	// Saturated from here, the generator borrows at the wall clock's pace
	// and the cap ratchets down to max-lead.
	for range 4096 * 1200 / 10 {
		if _, err := g.NextN(10); err != nil {
			t.Fatal(err)
		}
	}
	if s := g.Stats(); s.LeadCap != s.MaxLead || s.Lead > s.MaxLead {
		t.Errorf("after running saturated: lead %s cap %s, want both down to %s", s.Lead, s.LeadCap, s.MaxLead)
	}
}

func TestStateFileProblems(t *testing.T) {
	t.Run("corrupt", func(t *testing.T) {
		cfg := stateConfig(t)
		os.WriteFile(cfg.StateFile, []byte("{not json"), 0o600)
		if _, err := New(t.Context(), cfg); !errors.Is(err, ErrHighWater) {
			t.Errorf("New() error = %v, want ErrHighWater", err)
		}
	})
	t.Run("written for another layout", func(t *testing.T) {
		cfg := stateConfig(t)
		g := newTestGen(t, cfg, newFakeClock(t0))
		nextOK(t, g)
		g.Close()
		cfg.Layout.Epoch = cfg.Layout.Epoch.Add(time.Hour)
		if _, err := New(t.Context(), cfg); !errors.Is(err, ErrHighWater) {
			t.Errorf("New() error = %v, want ErrHighWater naming the layout change", err)
		}
	})
	t.Run("directory missing, then created", func(t *testing.T) {
		cfg := stateConfig(t)
		dir := filepath.Join(filepath.Dir(cfg.StateFile), "sub")
		cfg.StateFile = filepath.Join(dir, "idgen.json")
		clock := newFakeClock(t0)
		g := newTestGen(t, cfg, clock)
		if _, err := g.Next(); !errors.Is(err, ErrHighWater) {
			t.Fatalf("Next() error = %v, want ErrHighWater", err)
		}
		// Until a retry succeeds, calls fail at once rather than each
		// waiting for a write.
		if _, err := g.Next(); !errors.Is(err, ErrHighWater) {
			t.Fatalf("second Next() error = %v, want ErrHighWater", err)
		}
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		eventually(t, "a retried write", func() bool {
			clock.Advance(10 * time.Millisecond)
			_, err := g.Next()
			return err == nil
		})
		if s := readState(t, cfg.StateFile); s.HighWaterUnixMs <= t0.UnixMilli() {
			t.Errorf("mark %d not above t0", s.HighWaterUnixMs)
		}
	})
}
