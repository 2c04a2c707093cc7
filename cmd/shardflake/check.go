package main

import (
	"fmt"
	"io"
)

// runCheck is a placeholder until the check command lands.
func runCheck(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "shardflake check: not built yet")
	return 1
}
