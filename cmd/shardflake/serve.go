package main

import (
	"fmt"
	"io"
)

// runServe is a placeholder until the serve command lands.
func runServe(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "shardflake serve: not built yet")
	return 1
}
