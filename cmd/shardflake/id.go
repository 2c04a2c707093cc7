package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/shardflake/shardflake/idgen"
)

// runID is `shardflake id`: decode ids or issue new ones from a static
// worker.
func runID(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		idUsage(stderr)
		return 2
	}
	switch args[0] {
	case "decode":
		return runIDDecode(args[1:], stdout, stderr)
	case "new":
		return runIDNew(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		idUsage(stdout)
		return 0
	}
	fmt.Fprintf(stderr, "shardflake id: unknown sub-command %q\n\n", args[0])
	idUsage(stderr)
	return 2
}

func idUsage(w io.Writer) {
	fmt.Fprint(w, `Usage:
  shardflake id decode [layout flags] ID...
  shardflake id new [-n N] [--worker-id W] [--datacenter-id D] [--state-file FILE] [layout flags]

decode prints each id's time (UTC, milliseconds), datacenter, worker and
sequence. new prints N new ids, one per line, from a static worker.
Run 'shardflake id decode --help' or 'shardflake id new --help' for the flags.
`)
}

// layoutFlags are the flags that mirror the rules file's layout props; only
// the ones given are passed to idgen.ParseProps, which validates them and
// names the bad one.
var layoutFlags = []struct{ prop, usage string }{
	{idgen.PropEpoch, "epoch, RFC 3339 or a date (default 2024-01-01T00:00:00Z)"},
	{idgen.PropTimeBits, "bits of milliseconds since the epoch (default 41)"},
	{idgen.PropDatacenterBits, "datacenter bits (default 5)"},
	{idgen.PropWorkerBits, "worker bits (default 5)"},
	{idgen.PropSequenceBits, "sequence bits (default 12)"},
}

// propFlags registers string flags named after props and returns a function
// that collects the ones set on the command line.
func propFlags(fs *flag.FlagSet, extra ...struct{ prop, usage string }) func() map[string]string {
	values := map[string]*string{}
	for _, f := range append(layoutFlags, extra...) {
		values[f.prop] = fs.String(f.prop, "", f.usage)
	}
	return func() map[string]string {
		props := map[string]string{}
		fs.Visit(func(f *flag.Flag) {
			if v, ok := values[f.Name]; ok {
				props[f.Name] = *v
			}
		})
		return props
	}
}

// parseFlags parses args, printing usage on stdout for --help (exit 0) and
// the error plus usage on stderr otherwise (exit 2); ok means go on.
func parseFlags(fs *flag.FlagSet, args []string, usage string, stdout, stderr io.Writer) (code int, ok bool) {
	fs.SetOutput(io.Discard)
	printUsage := func(w io.Writer) {
		fmt.Fprintln(w, usage)
		fmt.Fprintln(w, "\nFlags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printUsage(stdout)
		return 0, false
	case err != nil:
		fmt.Fprintf(stderr, "shardflake id: %v\n\n", err)
		printUsage(stderr)
		return 2, false
	}
	return 0, true
}

func runIDDecode(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("decode", flag.ContinueOnError)
	props := propFlags(fs)
	if code, ok := parseFlags(fs, args, "Usage: shardflake id decode [layout flags] ID...", stdout, stderr); !ok {
		return code
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "shardflake id decode: no id given")
		return 2
	}
	cfg, err := idgen.ParseProps(props())
	if err != nil {
		fmt.Fprintf(stderr, "shardflake id decode: %v\n", err)
		return 2
	}
	for i, arg := range fs.Args() {
		id, err := strconv.ParseInt(strings.TrimSpace(arg), 10, 64)
		if err != nil {
			fmt.Fprintf(stderr, "shardflake id decode: %q is not a 64-bit integer id\n", arg)
			return 2
		}
		p, err := cfg.Layout.Decode(id)
		if err != nil {
			fmt.Fprintf(stderr, "shardflake id decode: %v\n", err)
			return 2
		}
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "id          %d\ntime        %s\ndatacenter  %d\nworker      %d\nsequence    %d\n",
			id, p.Time.UTC().Format("2006-01-02T15:04:05.000Z07:00"), p.Datacenter, p.Worker, p.Sequence)
	}
	return 0
}

// maxNew bounds `id new -n`, so a typo cannot print for minutes.
const maxNew = 10_000_000

func runIDNew(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("new", flag.ContinueOnError)
	n := fs.Int("n", 1, "how many ids to print")
	props := propFlags(fs,
		struct{ prop, usage string }{idgen.PropWorkerID, "worker id (default 0)"},
		struct{ prop, usage string }{idgen.PropDatacenterID, "datacenter id (default 0)"},
		struct{ prop, usage string }{idgen.PropStateFile, "state file holding the high-water mark, so a rerun never repeats an id even with the clock set back"},
	)
	if code, ok := parseFlags(fs, args, "Usage: shardflake id new [-n N] [--worker-id W] [--datacenter-id D] [--state-file FILE] [layout flags]", stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "shardflake id new: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if *n < 1 || *n > maxNew {
		fmt.Fprintf(stderr, "shardflake id new: -n %d outside [1, %d]\n", *n, maxNew)
		return 2
	}
	cfg, err := idgen.ParseProps(props())
	if err != nil {
		fmt.Fprintf(stderr, "shardflake id new: %v\n", err)
		return 2
	}
	g, err := idgen.New(context.Background(), cfg)
	if err != nil {
		fmt.Fprintf(stderr, "shardflake id new: %v\n", err)
		return 1
	}
	out := bufio.NewWriter(stdout)
	for range *n {
		id, err := g.Next()
		if err != nil {
			out.Flush()
			g.Close()
			fmt.Fprintf(stderr, "shardflake id new: %v\n", err)
			return 1
		}
		out.WriteString(strconv.FormatInt(id, 10))
		out.WriteByte('\n')
	}
	if err := out.Flush(); err != nil {
		g.Close()
		fmt.Fprintf(stderr, "shardflake id new: %v\n", err)
		return 1
	}
	if err := g.Close(); err != nil {
		fmt.Fprintf(stderr, "shardflake id new: %v\n", err)
		return 1
	}
	return 0
}
