package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: shardflake version")
		fmt.Fprintln(stderr, "Prints the shardflake version and the Go version it was built with.")
	}
	if err := fs.Parse(args); err != nil {
		return flagExit(err)
	}
	v := version
	if info, ok := debug.ReadBuildInfo(); ok && v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	fmt.Fprintf(stdout, "shardflake %s (%s)\n", v, runtime.Version())
	return 0
}

// flagExit turns a flag parsing error into an exit code: 0 for --help, 2 otherwise.
func flagExit(err error) int {
	if err == flag.ErrHelp {
		return 0
	}
	return 2
}
