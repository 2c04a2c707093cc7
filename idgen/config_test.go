package idgen

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParsePropsDefaults(t *testing.T) {
	got, err := ParseProps(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Layout:             Layout{TimeBits: 41, DatacenterBits: 5, WorkerBits: 5, SequenceBits: 12, Epoch: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)},
		Source:             WorkerIDStatic,
		MaxTolerate:        10 * time.Millisecond,
		MaxVibrationOffset: 1,
		MaxLead:            10 * time.Millisecond,
		HighWaterReserve:   time.Second,
		Etcd: EtcdConfig{
			Prefix:       "/shardflake/idgen",
			LeaseTTL:     10 * time.Second,
			ClaimTimeout: 10 * time.Second,
			DialTimeout:  5 * time.Second,
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseProps(nil) =\n%+v\nwant\n%+v", got, want)
	}
}

func TestParseProps(t *testing.T) {
	tests := []struct {
		name string
		give map[string]string
		want func(c *Config)
	}{
		{
			name: "ShardingSphere props",
			give: map[string]string{"worker-id": "7", "datacenter-id": "3", "max-tolerate-time-difference-milliseconds": "25", "max-vibration-offset": "255"},
			want: func(c *Config) {
				c.WorkerID, c.DatacenterID, c.MaxTolerate, c.MaxVibrationOffset = 7, 3, 25*time.Millisecond, 255
			},
		},
		{
			name: "layout and epoch",
			give: map[string]string{"epoch": "2020-01-01", "time-bits": "42", "datacenter-bits": "0", "worker-bits": "9", "sequence-bits": "12"},
			want: func(c *Config) {
				c.Layout = Layout{TimeBits: 42, WorkerBits: 9, SequenceBits: 12, Epoch: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}
			},
		},
		{
			name: "RFC 3339 epoch",
			give: map[string]string{"epoch": "2024-06-01T08:00:00+02:00"},
			want: func(c *Config) { c.Layout.Epoch = time.Date(2024, 6, 1, 6, 0, 0, 0, time.UTC) },
		},
		{
			name: "lead, reserve and state file",
			give: map[string]string{"max-lead-milliseconds": "0", "high-water-reserve-milliseconds": "250", "state-file": "/var/lib/shardflake/idgen.json"},
			want: func(c *Config) {
				c.MaxLead, c.HighWaterReserve, c.StateFile = 0, 250*time.Millisecond, "/var/lib/shardflake/idgen.json"
			},
		},
		{
			name: "etcd source",
			give: map[string]string{"worker-id-source": "etcd", "etcd-endpoints": "http://a:2379, http://b:2379", "etcd-prefix": "/x/ids",
				"etcd-lease-ttl-seconds": "5", "etcd-claim-timeout-milliseconds": "0", "etcd-dial-timeout-milliseconds": "750", "worker-id": "40"},
			want: func(c *Config) {
				c.Source, c.WorkerID = WorkerIDEtcd, 40 // worker-id is ignored with etcd, not range-checked
				c.Etcd = EtcdConfig{Endpoints: []string{"http://a:2379", "http://b:2379"}, Prefix: "/x/ids", LeaseTTL: 5 * time.Second,
					DialTimeout: 750 * time.Millisecond}
			},
		},
		{
			name: "etcd source pinned to a datacenter",
			give: map[string]string{"worker-id-source": "ETCD", "etcd-endpoints": "127.0.0.1:2379", "datacenter-id": "2"},
			want: func(c *Config) {
				c.Source, c.DatacenterID = WorkerIDEtcd, 2
				c.Etcd.Endpoints, c.Etcd.PinDatacenter = []string{"127.0.0.1:2379"}, true
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := DefaultConfig()
			tt.want(&want)
			got, err := ParseProps(tt.give)
			if err != nil {
				t.Fatalf("ParseProps() error = %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ParseProps() =\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

func TestParsePropsErrors(t *testing.T) {
	tests := []struct {
		name     string
		give     map[string]string
		wantProp string
		wantText string
	}{
		{name: "unknown prop", give: map[string]string{"worker_id": "1"}, wantProp: "worker_id", wantText: "unknown prop"},
		{name: "not a number", give: map[string]string{"worker-id": "one"}, wantProp: PropWorkerID, wantText: "integer"},
		{name: "worker out of range", give: map[string]string{"worker-id": "32"}, wantProp: PropWorkerID, wantText: "[0, 31]"},
		{name: "datacenter out of range", give: map[string]string{"datacenter-id": "-1"}, wantProp: PropDatacenterID, wantText: "[0, 31]"},
		{name: "worker out of a custom layout", give: map[string]string{"worker-bits": "2", "time-bits": "44", "worker-id": "4"}, wantProp: PropWorkerID, wantText: "[0, 3]"},
		{name: "bits do not add up", give: map[string]string{"sequence-bits": "13"}, wantProp: PropTimeBits, wantText: "64 bits"},
		{name: "bad epoch", give: map[string]string{"epoch": "yesterday"}, wantProp: PropEpoch, wantText: "RFC 3339"},
		{name: "negative tolerance", give: map[string]string{"max-tolerate-time-difference-milliseconds": "-5"}, wantProp: PropMaxTolerate, wantText: "milliseconds"},
		{name: "vibration offset beyond sequence", give: map[string]string{"max-vibration-offset": "4096"}, wantProp: PropMaxVibrationOffset, wantText: "[0, 4095]"},
		{name: "lead too large", give: map[string]string{"max-lead-milliseconds": "60000"}, wantProp: PropMaxLead, wantText: "[0, 10000]"},
		{name: "zero reserve", give: map[string]string{"high-water-reserve-milliseconds": "0"}, wantProp: PropHighWaterReserve, wantText: "[1,"},
		{name: "bad source", give: map[string]string{"worker-id-source": "zookeeper"}, wantProp: PropWorkerIDSource, wantText: "static or etcd"},
		{name: "etcd without endpoints", give: map[string]string{"worker-id-source": "etcd"}, wantProp: PropEtcdEndpoints, wantText: "required"},
		{name: "etcd prop on static source", give: map[string]string{"etcd-prefix": "/a"}, wantProp: PropEtcdPrefix, wantText: "worker-id-source: etcd"},
		{name: "state file with etcd", give: map[string]string{"worker-id-source": "etcd", "etcd-endpoints": "x:1", "state-file": "/tmp/s"},
			wantProp: PropStateFile, wantText: "static"},
		{name: "lease ttl below etcd's minimum", give: map[string]string{"worker-id-source": "etcd", "etcd-endpoints": "x:1", "etcd-lease-ttl-seconds": "1"},
			wantProp: PropEtcdLeaseTTL, wantText: "[2, 3600]"},
		{name: "relative etcd prefix", give: map[string]string{"worker-id-source": "etcd", "etcd-endpoints": "x:1", "etcd-prefix": "ids/"},
			wantProp: PropEtcdPrefix, wantText: "absolute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseProps(tt.give)
			var pe *PropError
			if !errors.As(err, &pe) || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("ParseProps() error = %v, want a *PropError", err)
			}
			if pe.Prop != tt.wantProp || !strings.Contains(err.Error(), tt.wantText) || !strings.Contains(err.Error(), tt.wantProp) {
				t.Errorf("ParseProps() error = %q (prop %q), want prop %q and text %q", err, pe.Prop, tt.wantProp, tt.wantText)
			}
		})
	}
}

func TestPropsAreKebabCase(t *testing.T) {
	for _, p := range Props() {
		if strings.ToLower(p) != p || strings.ContainsAny(p, "_. ") {
			t.Errorf("prop %q is not kebab-case", p)
		}
	}
}
