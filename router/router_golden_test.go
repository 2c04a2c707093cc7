package router

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/idgen"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata with the router's current plans")

// goldenCase is one entry of a testdata/*_cases.json file.
type goldenCase struct {
	Comment string          `json:"comment"`
	Query   string          `json:"query"`
	DB      string          `json:"db,omitempty"`
	Args    json.RawMessage `json:"args,omitempty"`
	Plan    json.RawMessage `json:"plan,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// fakeKeys issues consecutive keys from a fixed start, so generated keys
// (and where their rows land) are the same on every run.
type fakeKeys struct {
	next  int64
	batch int
	calls int
}

func (f *fakeKeys) NextN(n int) (int64, error) {
	if n < 1 || n > f.batch {
		return 0, fmt.Errorf("fakeKeys: NextN(%d) outside 1..%d", n, f.batch)
	}
	f.calls++
	first := f.next
	f.next += int64(n)
	return first, nil
}

func (f *fakeKeys) MaxBatch() int { return f.batch }

const goldenRules = "testdata/golden_rules.yaml"

func loadGoldenRules(t testing.TB) *config.Rules {
	t.Helper()
	rules, err := config.Load(goldenRules)
	if err != nil {
		t.Fatalf("load %s: %v", goldenRules, err)
	}
	return rules
}

// newGoldenRouter returns a router over the golden rules whose key
// generator starts at 1000 and issues at most 4 keys per call.
func newGoldenRouter(t testing.TB, rules *config.Rules) (*Router, *fakeKeys) {
	t.Helper()
	keys := &fakeKeys{next: 1000, batch: 4}
	r, err := New(rules, map[string]idgen.KeyGenerator{"snowflake": keys})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r, keys
}

// decodeArgs reads a JSON array of arguments: integers become int64,
// other numbers float64.
func decodeArgs(raw json.RawMessage) ([]any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var in []any
	if err := dec.Decode(&in); err != nil {
		return nil, err
	}
	for i, v := range in {
		if n, ok := v.(json.Number); ok {
			if x, err := n.Int64(); err == nil {
				in[i] = x
			} else if f, err := n.Float64(); err == nil {
				in[i] = f
			}
		}
	}
	return in, nil
}

// planFor runs one query through Prepare and Bind.
func planFor(r *Router, query, db string, args []any) (*Plan, error) {
	stmt, err := ParseOne(query)
	if err != nil {
		return nil, err
	}
	switch db {
	case "":
		db = "sharding_db"
	case "(none)":
		db = ""
	}
	p, err := r.Prepare(stmt, query, db)
	if err != nil {
		return nil, err
	}
	return p.Bind(args)
}

func marshalPlan(p *Plan) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("    ", "  ")
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSpace(buf.Bytes())), nil
}

func goldenFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/*_cases.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files in testdata: %v", err)
	}
	return files
}

func readCases(t testing.TB, file string) []goldenCase {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return cases
}

// TestGolden plans every query of testdata/*_cases.json and compares the
// plan (routes with their rewritten SQL, merge, keys) or the error with the
// file. Run with -update to rewrite the files, then read the diff.
func TestGolden(t *testing.T) {
	rules := loadGoldenRules(t)
	total := 0
	for _, file := range goldenFiles(t) {
		cases := readCases(t, file)
		total += len(cases)
		changed := false
		for i := range cases {
			tt := &cases[i]
			t.Run(filepath.Base(file)+"/"+tt.Comment, func(t *testing.T) {
				r, _ := newGoldenRouter(t, rules)
				args, err := decodeArgs(tt.Args)
				if err != nil {
					t.Fatalf("args: %v", err)
				}
				plan, err := planFor(r, tt.Query, tt.DB, args)
				var gotPlan json.RawMessage
				var gotErr string
				if err != nil {
					var re *Error
					if !errors.As(err, &re) {
						t.Fatalf("error %v is not a *router.Error", err)
					}
					gotErr = err.Error()
				} else {
					if gotPlan, err = marshalPlan(plan); err != nil {
						t.Fatal(err)
					}
					if err := reparseRoutes(plan); err != nil {
						t.Error(err)
					}
				}
				if *update {
					if gotErr != tt.Error || !jsonEqual(gotPlan, tt.Plan) {
						changed = true
					}
					tt.Error, tt.Plan = gotErr, gotPlan
					return
				}
				if gotErr != tt.Error {
					t.Fatalf("query %s\nerror: got %q, want %q", tt.Query, gotErr, tt.Error)
				}
				if !jsonEqual(gotPlan, tt.Plan) {
					t.Fatalf("query %s\nplan:\n got %s\nwant %s", tt.Query, gotPlan, tt.Plan)
				}
			})
		}
		if *update && changed {
			writeCases(t, file, cases)
		}
	}
	if total < 120 {
		t.Errorf("golden files hold %d cases, want at least 120", total)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func writeCases(t testing.TB, file string, cases []goldenCase) {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString("[\n")
	for i, c := range cases {
		buf.WriteString("  {\n")
		field := func(name string, v any, last bool) {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			b = bytes.ReplaceAll(b, []byte(`\u003c`), []byte("<"))
			b = bytes.ReplaceAll(b, []byte(`\u003e`), []byte(">"))
			b = bytes.ReplaceAll(b, []byte(`\u0026`), []byte("&"))
			fmt.Fprintf(&buf, "    %q: %s", name, b)
			if !last {
				buf.WriteString(",")
			}
			buf.WriteString("\n")
		}
		field("comment", c.Comment, false)
		field("query", c.Query, false)
		if c.DB != "" {
			field("db", c.DB, false)
		}
		if len(c.Args) > 0 {
			fmt.Fprintf(&buf, "    \"args\": %s,\n", c.Args)
		}
		if c.Error != "" {
			field("error", c.Error, true)
		} else {
			fmt.Fprintf(&buf, "    \"plan\": %s\n", c.Plan)
		}
		buf.WriteString("  }")
		if i < len(cases)-1 {
			buf.WriteString(",")
		}
		buf.WriteString("\n")
	}
	buf.WriteString("]\n")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// reparseRoutes checks that every rewritten SQL is valid SQL again.
func reparseRoutes(p *Plan) error {
	for _, rt := range p.Routes {
		if _, err := ParseOne(rt.SQL); err != nil {
			return fmt.Errorf("route SQL does not parse: %s: %v", rt.SQL, err)
		}
		if strings.Contains(rt.SQL, markerPrefix) {
			return fmt.Errorf("route SQL keeps a marker: %q", rt.SQL)
		}
	}
	return nil
}
