package idgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// mark is a persisted high-water mark, in Unix milliseconds. HighWater is
// an upper bound on the time of every id the holder issued; Wall is the
// holder's wall clock when it wrote the mark, a lower bound on where the
// clock was, so a successor whose clock reads much earlier knows the clock
// was set back.
type mark struct {
	HighWater int64
	Wall      int64
}

// markStore persists the mark of one (datacenter, worker) pair. store must
// be durable when it returns nil.
type markStore interface {
	store(ctx context.Context, m mark) error
}

// stateFile is the static source's markStore: a small JSON file replaced
// atomically (write a temporary file, fsync it, rename it over the old one,
// fsync the directory), so a crash leaves either the old or the new mark.
type stateFile struct {
	path   string
	layout Layout
	pair   [2]int
}

// stateFileJSON is the file's format. The layout and epoch are recorded so
// a changed layout is caught instead of silently weakening the guarantee.
type stateFileJSON struct {
	Version         int    `json:"version"`
	HighWaterUnixMs int64  `json:"highWaterUnixMs"`
	WallUnixMs      int64  `json:"wallUnixMs"`
	HighWater       string `json:"highWater"`
	EpochUnixMs     int64  `json:"epochUnixMs"`
	Layout          [4]int `json:"layout"`
	DatacenterID    int    `json:"datacenterId"`
	WorkerID        int    `json:"workerId"`
}

const stateFileVersion = 1

func (f *stateFile) layoutBits() [4]int {
	return [4]int{f.layout.TimeBits, f.layout.DatacenterBits, f.layout.WorkerBits, f.layout.SequenceBits}
}

// load reads the mark; found is false when the file does not exist yet.
func (f *stateFile) load() (m mark, found bool, err error) {
	b, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return mark{}, false, nil
	}
	if err != nil {
		return mark{}, false, fmt.Errorf("%w: reading state file: %w", ErrHighWater, err)
	}
	var s stateFileJSON
	if err := json.Unmarshal(b, &s); err != nil {
		return mark{}, false, fmt.Errorf("%w: state file %s is corrupt (%v); restore it or, only if no ids from it can collide, remove it", ErrHighWater, f.path, err)
	}
	if s.Version != stateFileVersion {
		return mark{}, false, fmt.Errorf("%w: state file %s has version %d, want %d", ErrHighWater, f.path, s.Version, stateFileVersion)
	}
	if s.EpochUnixMs != f.layout.Epoch.UnixMilli() || s.Layout != f.layoutBits() {
		return mark{}, false, fmt.Errorf("%w: state file %s was written for epoch %d layout %v, the config has epoch %d layout %v; "+
			"changing either can reissue ids, remove the file only if that is intended",
			ErrHighWater, f.path, s.EpochUnixMs, s.Layout, f.layout.Epoch.UnixMilli(), f.layoutBits())
	}
	return mark{HighWater: s.HighWaterUnixMs, Wall: s.WallUnixMs}, true, nil
}

func (f *stateFile) store(_ context.Context, m mark) error {
	b, err := json.MarshalIndent(stateFileJSON{
		Version:         stateFileVersion,
		HighWaterUnixMs: m.HighWater,
		WallUnixMs:      m.Wall,
		HighWater:       time.UnixMilli(m.HighWater).UTC().Format(timeFormat),
		EpochUnixMs:     f.layout.Epoch.UnixMilli(),
		Layout:          f.layoutBits(),
		DatacenterID:    f.pair[0],
		WorkerID:        f.pair[1],
	}, "", "  ")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrHighWater, err)
	}
	if err := writeFileAtomic(f.path, append(b, '\n')); err != nil {
		return fmt.Errorf("%w: writing state file: %w", ErrHighWater, err)
	}
	return nil
}

// writeFileAtomic replaces path with data so that after a crash the file
// holds either the old or the new content, and after it returns the new
// content survives a power loss.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	cleanup := func() { _ = os.Remove(tmp.Name()) }
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		cleanup()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		cleanup()
		return err
	}
	if err := tmp.Close(); err != nil {
		cleanup()
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		cleanup()
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
