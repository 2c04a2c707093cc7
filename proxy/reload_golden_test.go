package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// reloadCase is one rules file edit and what a reload statement answers
// to it, in testdata/reload_cases.json.
type reloadCase struct {
	Comment string      `json:"comment,omitempty"`
	Edits   []string    `json:"edits,omitempty"` // old, new pairs on the test rules
	Query   string      `json:"query"`
	Columns []string    `json:"columns,omitempty"`
	Rows    [][]*string `json:"rows,omitempty"`
	Error   string      `json:"error,omitempty"`
}

var (
	digestText = regexp.MustCompile(`\b[0-9a-f]{16}\b`)
	tempFile   = regexp.MustCompile(`/tmp/\S+/rules\.yaml`)
)

// maskReload replaces what differs from run to run: digests, the
// servers' ports, the temporary file's path.
func maskReload(ports []string, s string) string {
	s = digestText.ReplaceAllString(s, "<digest>")
	s = tempFile.ReplaceAllString(s, "<file>")
	for i, p := range ports {
		s = strings.ReplaceAll(s, ":"+p+"/", fmt.Sprintf(":<port %d>/", i))
	}
	return s
}

// TestReloadGolden runs the edits of testdata/reload_cases.json against
// a proxy whose t_order holds rows, and compares what PREVIEW RELOAD and
// RELOAD RULES answer; -update rewrites the file. Every refused reload
// must leave the digest in force as it was. Then a forced reload of a
// refused change applies.
func TestReloadGolden(t *testing.T) {
	path := filepath.Join("testdata", "reload_cases.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases []reloadCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	e := startReloadEnv(t, "rlg", false, envOptions{})
	e.createOrderTables(t)
	c := e.conn(t)
	execAll(t, c, "INSERT INTO t_order (order_id, user_id, status) VALUES (1, 1, 'a'), (2, 2, 'b')")
	var ports []string
	for _, b := range e.backends {
		ports = append(ports, strconv.Itoa(b.Port()))
	}
	ctx := context.Background()
	execAll(t, c, "RELOAD RULES") // the file's digest from now on
	digest := e.srv.RulesDigest()
	var got []reloadCase
	for _, tc := range cases {
		e.write(t, e.yaml("", "", tc.Edits...))
		res := reloadCase{Comment: tc.Comment, Edits: tc.Edits, Query: tc.Query}
		cols, rows, err := adminQuery(c, tc.Query)
		if err != nil {
			res.Error = maskReload(ports, fmt.Sprintf("%d: %s", errCode(err), mysqlMessage(err)))
		} else if len(cols) > 0 {
			res.Columns = cols
			for _, r := range rows {
				for _, v := range r {
					if v != nil {
						*v = maskReload(ports, *v)
					}
				}
			}
			res.Rows = rows
		}
		if d := e.srv.RulesDigest(); d != digest {
			t.Fatalf("%s: the digest in force changed from %s to %s", tc.Query, digest, d)
		}
		if err := c.PingContext(ctx); err != nil {
			t.Fatalf("after %s the connection is unusable: %v", tc.Query, err)
		}
		if !*update && !sameJSON(t, res, tc) {
			want, _ := json.MarshalIndent(tc, "", "  ")
			have, _ := json.MarshalIndent(res, "", "  ")
			t.Errorf("%s:\nwant %s\n got %s", tc.Query, want, have)
		}
		got = append(got, res)
	}
	if *update {
		var out bytes.Buffer
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(got); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// FORCE applies a change that moves rows: the row of user 1 is then
	// looked for on ds_0, where it is not; a statement prepared before
	// the reload is planned again by the new rules.
	ps, err := c.PrepareContext(ctx, "SELECT COUNT(*) FROM t_order WHERE user_id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	var n int
	if err := ps.QueryRowContext(ctx, 1).Scan(&n); err != nil || n != 1 {
		t.Fatalf("user 1 before the forced change: %d rows, %v", n, err)
	}
	e.write(t, e.yaml("", "", `"ds_${user_id % 2}"`, `"ds_${(user_id + 1) % 2}"`))
	execAll(t, c, "RELOAD RULES FORCE")
	if e.srv.RulesDigest() == digest {
		t.Fatal("RELOAD RULES FORCE left the digest")
	}
	if err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM t_order WHERE user_id = 1").Scan(&n); err != nil || n != 0 {
		t.Fatalf("user 1 after the forced algorithm change: %d rows, %v; want 0 (the row stayed on ds_1)", n, err)
	}
	if err := ps.QueryRowContext(ctx, 1).Scan(&n); err != nil || n != 0 {
		t.Fatalf("user 1 by the statement prepared before the forced change: %d rows, %v; want 0", n, err)
	}
}

func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	return string(x) == string(y)
}
