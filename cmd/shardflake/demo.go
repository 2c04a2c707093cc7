package main

import (
	"fmt"
	"io"
)

// runDemo is a placeholder until the demo command lands.
func runDemo(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "shardflake demo: not built yet")
	return 1
}
