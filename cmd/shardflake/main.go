// Command shardflake is a MySQL sharding proxy: it speaks the MySQL wire
// protocol, fills in Snowflake keys and routes each statement to the data
// nodes the rules file names.
package main

import (
	"fmt"
	"io"
	"os"
)

// command is one sub-command of the binary.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"serve", "run the proxy on a rules file", runServe},
		{"demo", "run the proxy on rules.example.yaml over embedded backends", runDemo},
		{"explain", "print the plan of one SQL statement without a database", runExplain},
		{"check", "validate a rules file and print its data-node map", runCheck},
		{"id", "generate or decode Snowflake ids", runID},
		{"version", "print the version", runVersion},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "shardflake: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: shardflake <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'shardflake <command> --help' for a command's flags.")
}
