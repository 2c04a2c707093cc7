package main

import (
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/idgen"
)

func runIDCmd(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(append([]string{"id"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestIDDecode(t *testing.T) {
	tests := []struct {
		name     string
		give     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{
			name: "default layout",
			give: []string{"decode", "187535720964038663"},
			wantOut: "id          187535720964038663\ntime        2025-06-01T12:00:00.123Z\n" +
				"datacenter  1\nworker      2\nsequence    7\n",
		},
		{
			name: "two ids",
			give: []string{"decode", "0", "4194304"},
			wantOut: "id          0\ntime        2024-01-01T00:00:00.000Z\ndatacenter  0\nworker      0\nsequence    0\n\n" +
				"id          4194304\ntime        2024-01-01T00:00:00.001Z\ndatacenter  0\nworker      0\nsequence    0\n",
		},
		{
			name:    "custom layout and epoch",
			give:    []string{"decode", "--epoch", "2020-01-01", "--datacenter-bits", "0", "--worker-bits", "10", "--time-bits", "41", "8193"},
			wantOut: "id          8193\ntime        2020-01-01T00:00:00.000Z\ndatacenter  0\nworker      2\nsequence    1\n",
		},
		{name: "not a number", give: []string{"decode", "12ab"}, wantCode: 2, wantErr: `"12ab" is not a 64-bit integer id`},
		{name: "negative", give: []string{"decode", "--", "-5"}, wantCode: 2, wantErr: "negative"},
		{name: "no id", give: []string{"decode"}, wantCode: 2, wantErr: "no id given"},
		{name: "bad layout", give: []string{"decode", "--sequence-bits", "13", "1"}, wantCode: 2, wantErr: "snowflake prop time-bits"},
		{name: "help", give: []string{"decode", "--help"}, wantOut: "Usage: shardflake id decode"},
		{name: "unknown sub-command", give: []string{"explode"}, wantCode: 2, wantErr: `unknown sub-command "explode"`},
		{name: "id help", give: []string{"--help"}, wantOut: "shardflake id new [-n N]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runIDCmd(tt.give...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tt.wantCode, errOut)
			}
			exact := strings.HasPrefix(tt.wantOut, "id ")
			if exact && out != tt.wantOut || !exact && !strings.Contains(out, tt.wantOut) {
				t.Errorf("stdout =\n%s\nwant\n%s", out, tt.wantOut)
			}
			if !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("stderr = %q, want it to contain %q", errOut, tt.wantErr)
			}
		})
	}
}

func TestIDNew(t *testing.T) {
	state := filepath.Join(t.TempDir(), "ids.json")
	var prev int64 = -1
	for run := range 2 {
		code, out, errOut := runIDCmd("new", "-n", "5000", "--worker-id", "7", "--datacenter-id", "3", "--state-file", state)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		lines := strings.Fields(out)
		if len(lines) != 5000 {
			t.Fatalf("run %d printed %d ids, want 5000", run, len(lines))
		}
		for _, l := range lines {
			id, err := strconv.ParseInt(l, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if id <= prev {
				t.Fatalf("run %d: id %d not above %d", run, id, prev)
			}
			p, err := idgen.Decode(id)
			if err != nil || p.Datacenter != 3 || p.Worker != 7 {
				t.Fatalf("id %d decodes to %+v, %v; want datacenter 3 worker 7", id, p, err)
			}
			prev = id
		}
	}
}

func TestIDNewErrors(t *testing.T) {
	tests := []struct {
		name    string
		give    []string
		wantErr string
	}{
		{name: "worker out of range", give: []string{"new", "--worker-id", "32"}, wantErr: "snowflake prop worker-id: \"32\": outside [0, 31]"},
		{name: "zero count", give: []string{"new", "-n", "0"}, wantErr: "-n 0 outside"},
		{name: "unknown flag", give: []string{"new", "--worker", "1"}, wantErr: "flag provided but not defined: -worker"},
		{name: "stray argument", give: []string{"new", "5"}, wantErr: `unexpected argument "5"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runIDCmd(tt.give...)
			if code != 2 || !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("exit %d stderr %q, want 2 and %q", code, errOut, tt.wantErr)
			}
		})
	}
	code, out, _ := runIDCmd("new", "--help")
	if code != 0 || !strings.Contains(out, "-worker-id") || !strings.Contains(out, "-state-file") {
		t.Errorf("new --help: exit %d, stdout %q", code, out)
	}
}
