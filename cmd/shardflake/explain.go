package main

import (
	"fmt"
	"io"
)

// runExplain is a placeholder until the explain command lands.
func runExplain(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "shardflake explain: not built yet")
	return 1
}
