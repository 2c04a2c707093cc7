//go:build !demo

package main

import (
	"fmt"
	"io"
)

// demoBuilt says this binary has the demo (demo.go). Without -tags demo it
// does not: the demo's embedded backends (go-mysql-server) would cost
// every proxy ~28 MB of resident memory and ~0.8 s at start-up, for an
// in-process WebAssembly regex engine that only the backends use.
const demoBuilt = false

// runDemo in a binary built without the demo says how to get one.
func runDemo(args []string, stdout, stderr io.Writer) int {
	w, code := stderr, 2
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		w, code = stdout, 0
	}
	fmt.Fprintln(w, "shardflake demo: this binary is built without the demo, whose embedded")
	fmt.Fprintln(w, "in-memory backends (go-mysql-server) would cost every proxy ~28 MB of")
	fmt.Fprintln(w, "memory and ~0.8 s at start-up. Run it from the repository root with")
	fmt.Fprintln(w, "  make demo")
	fmt.Fprintln(w, "(go run -tags demo ./cmd/shardflake demo), or build a binary that has it")
	fmt.Fprintln(w, "with go build -tags demo ./cmd/shardflake.")
	return code
}
