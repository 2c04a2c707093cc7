package main

import (
	"fmt"
	"io"
)

// runID is a placeholder until the id command lands.
func runID(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "shardflake id: not built yet")
	return 1
}
