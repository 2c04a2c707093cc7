//go:build !demo

package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestServeBinaryHasNoDemo checks that the binary built without -tags demo
// links none of the demo's embedded backends (go-mysql-server and what it
// brings: go-icu-regex compiles a WebAssembly module at start-up, ~28 MB
// of resident memory and ~0.8 s in every process that links it), and that
// its demo command says how to run the demo instead.
func TestServeBinaryHasNoDemo(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/dolthub/") || strings.HasPrefix(pkg, "github.com/tetratelabs/wazero") {
			t.Errorf("the proxy binary links %s, which only the demo needs (build it with -tags demo)", pkg)
		}
	}
	out, err = exec.Command(binary(t), "demo").CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "make demo") || !strings.Contains(string(out), "-tags demo") {
		t.Errorf("demo in a binary without it: exit %d, printed:\n%s\nwant exit 2 and how to run the demo", code, out)
	}
}
