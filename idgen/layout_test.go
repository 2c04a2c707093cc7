package idgen

import (
	"errors"
	"testing"
	"time"
)

func TestLayoutValidate(t *testing.T) {
	def := DefaultLayout()
	tests := []struct {
		name     string
		give     func(l *Layout)
		wantProp string // "" means valid
	}{
		{name: "default", give: func(*Layout) {}},
		{name: "tiny etcd layout", give: func(l *Layout) { l.TimeBits, l.DatacenterBits, l.WorkerBits = 49, 1, 1 }},
		{name: "no datacenter bits", give: func(l *Layout) { l.DatacenterBits, l.WorkerBits = 0, 10 }},
		{name: "bits add up to 64", give: func(l *Layout) { l.TimeBits = 42 }, wantProp: PropTimeBits},
		{name: "bits add up to 62", give: func(l *Layout) { l.SequenceBits = 11 }},
		{name: "53 bits, exact in a JavaScript Number", give: func(l *Layout) { l.DatacenterBits, l.WorkerBits, l.SequenceBits = 0, 4, 8 }},
		{name: "negative worker bits", give: func(l *Layout) { l.WorkerBits = -1; l.SequenceBits = 18 }, wantProp: PropWorkerBits},
		{name: "negative datacenter bits", give: func(l *Layout) { l.DatacenterBits = -1; l.SequenceBits = 18 }, wantProp: PropDatacenterBits},
		{name: "time bits too few", give: func(l *Layout) { l.TimeBits, l.SequenceBits = 19, 34 }, wantProp: PropTimeBits},
		{name: "sequence bits zero", give: func(l *Layout) { l.SequenceBits, l.TimeBits = 0, 53 }, wantProp: PropSequenceBits},
		{name: "epoch before 1970", give: func(l *Layout) { l.Epoch = time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC) }, wantProp: PropEpoch},
		{name: "zero epoch", give: func(l *Layout) { l.Epoch = time.Time{} }, wantProp: PropEpoch},
		{name: "epoch not on a millisecond", give: func(l *Layout) { l.Epoch = l.Epoch.Add(time.Microsecond) }, wantProp: PropEpoch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := def
			tt.give(&l)
			prop, reason := l.problem()
			err := l.Validate()
			if tt.wantProp == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidLayout) || prop != tt.wantProp || reason == "" {
				t.Fatalf("Validate() = %v (prop %q), want ErrInvalidLayout blaming %s", err, prop, tt.wantProp)
			}
		})
	}
}

func TestLayoutHorizon(t *testing.T) {
	tests := []struct {
		name string
		give Layout
		want time.Time
	}{
		{name: "default 41 bits", give: DefaultLayout(), want: time.Date(2093, 9, 6, 15, 47, 35, 551e6, time.UTC)},
		{name: "49 time bits", give: Layout{TimeBits: 49, DatacenterBits: 1, WorkerBits: 1, SequenceBits: 12, Epoch: DefaultEpoch()},
			want: time.UnixMilli(DefaultEpoch().UnixMilli() + 1<<49 - 1).UTC()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.give.Horizon(); !got.Equal(tt.want) {
				t.Errorf("Horizon() = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestDecodeGolden(t *testing.T) {
	tests := []struct {
		give int64
		want Parts
	}{
		{give: 0, want: Parts{Time: DefaultEpoch()}},
		// 1000 ms after the epoch, datacenter 3, worker 17, sequence 4000.
		{give: 1000<<22 | 3<<17 | 17<<12 | 4000,
			want: Parts{Millis: 1000, Time: DefaultEpoch().Add(time.Second), Datacenter: 3, Worker: 17, Sequence: 4000}},
		// The largest id: every field at its maximum.
		{give: 1<<63 - 1,
			want: Parts{Millis: 1<<41 - 1, Time: DefaultLayout().Horizon(), Datacenter: 31, Worker: 31, Sequence: 4095}},
		// 2025-06-01T12:00:00.123Z, datacenter 1, worker 2, sequence 7.
		{give: 187535720964038663,
			want: Parts{Millis: 44712000123, Time: time.Date(2025, 6, 1, 12, 0, 0, 123e6, time.UTC), Datacenter: 1, Worker: 2, Sequence: 7}},
	}
	for _, tt := range tests {
		got, err := Decode(tt.give)
		if err != nil || got != tt.want {
			t.Errorf("Decode(%d) = %+v, %v; want %+v", tt.give, got, err, tt.want)
		}
		back, err := DefaultLayout().Compose(got)
		if err != nil || back != tt.give {
			t.Errorf("Compose(%+v) = %d, %v; want %d", got, back, err, tt.give)
		}
	}
	if _, err := Decode(-1); !errors.Is(err, ErrInvalidID) {
		t.Errorf("Decode(-1) error = %v, want ErrInvalidID", err)
	}
}

func TestComposeRejectsOutOfRange(t *testing.T) {
	l := DefaultLayout()
	tests := []struct {
		name string
		give Parts
	}{
		{name: "millis", give: Parts{Millis: 1 << 41}},
		{name: "negative millis", give: Parts{Millis: -1}},
		{name: "datacenter", give: Parts{Datacenter: 32}},
		{name: "worker", give: Parts{Worker: 32}},
		{name: "sequence", give: Parts{Sequence: 4096}},
	}
	for _, tt := range tests {
		if _, err := l.Compose(tt.give); !errors.Is(err, ErrInvalidID) {
			t.Errorf("%s: Compose(%+v) error = %v, want ErrInvalidID", tt.name, tt.give, err)
		}
	}
}

func TestSpreadRanges(t *testing.T) {
	tests := []struct {
		bits               int
		wantSpread, wantBr int64
	}{
		{bits: 12, wantSpread: 4000, wantBr: 32},
		{bits: 13, wantSpread: 8000, wantBr: 64},
		{bits: 10, wantSpread: 1000, wantBr: 8},
		{bits: 8, wantSpread: 256, wantBr: 2},
		{bits: 4, wantSpread: 16, wantBr: 1},
	}
	for _, tt := range tests {
		l := Layout{SequenceBits: tt.bits}
		spread, br := l.spreadRange(), l.borrowRange()
		if spread != tt.wantSpread || br != tt.wantBr {
			t.Errorf("%d bits: spread %d borrow %d, want %d %d", tt.bits, spread, br, tt.wantSpread, tt.wantBr)
		}
		// The property the spread relies on: a multiple of every modulus
		// it promises to make uniform, and within the sequence.
		for _, m := range []int64{2, 4, 8, 16, 32, 10, 1000} {
			if tt.bits == 12 && spread%m != 0 {
				t.Errorf("spread %d is not a multiple of %d", spread, m)
			}
		}
		if spread > 1<<tt.bits {
			t.Errorf("spread %d exceeds the %d-bit sequence", spread, tt.bits)
		}
	}
}
