package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy"
	"github.com/shardflake/shardflake/proxy/keygen"
	"github.com/shardflake/shardflake/proxy/metrics"
)

// defaultDrain is how long SIGTERM waits for statements in flight.
const defaultDrain = 30 * time.Second

// serveFlags are serve's flags; newServeFlags defines them (the
// deployment tests read the same set).
type serveFlags struct {
	fs         *flag.FlagSet
	configFile *string
	rf         runFlags
	cluster    clusterFlags
	drain      *time.Duration
	pprofAddr  *string
}

func newServeFlags(stderr io.Writer) *serveFlags {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &serveFlags{fs: fs}
	f.configFile = fs.String("config", "", "rules file (required)")
	f.rf = addRunFlags(fs)
	f.cluster = addClusterFlags(fs)
	f.drain = fs.Duration("drain", defaultDrain, "how long SIGTERM waits for statements in flight before cutting them")
	f.pprofAddr = fs.String("pprof", "", "serve Go's profiling endpoints (/debug/pprof/) on this address (a port alone or :PORT binds 127.0.0.1 only; name 0.0.0.0:PORT for every interface); off by default")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: shardflake serve --config FILE [--listen ADDR] [flags]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Runs the proxy: MySQL clients connect to server.listen (default 127.0.0.1:3307)")
		fmt.Fprintln(stderr, "and log in as a server.users account; statements are routed to the data")
		fmt.Fprintln(stderr, "sources the rules file names. SIGTERM or SIGINT stops accepting connections,")
		fmt.Fprintln(stderr, "lets statements in flight finish (up to --drain), closes the backends and")
		fmt.Fprintln(stderr, "exits 0. SIGHUP reloads the rules file (see RELOAD RULES in the README); a")
		fmt.Fprintln(stderr, "file that is refused is logged with the reason and the rules in force stay.")
		fmt.Fprintln(stderr, "With server.cluster the rules live in etcd and the proxy joins a fleet")
		fmt.Fprintln(stderr, "(SHOW COMPUTE NODES); SIGHUP and RELOAD RULES then share the file with it.")
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	return f
}

// runServe runs the proxy on a rules file until SIGTERM or SIGINT.
func runServe(args []string, stdout, stderr io.Writer) int {
	sf := newServeFlags(stderr)
	fs, configFile, rf, drain, pprofAddr := sf.fs, sf.configFile, sf.rf, sf.drain, sf.pprofAddr
	if err := fs.Parse(args); err != nil {
		return flagExit(err)
	}
	if *configFile == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	rules, log, code := rf.setup("serve", *configFile, "", stderr)
	if rules == nil {
		return code
	}
	if err := sf.cluster.apply(rules); err != nil {
		fmt.Fprintln(stderr, "shardflake serve:", err)
		return 2
	}
	if err := setCPUScheduling(rules.Server.CPUScheduling); err != nil {
		// The proxy runs as well without it, only dearer per statement.
		log.Warn("server.cpuScheduling not applied", "setting", rules.Server.CPUScheduling.String(), "err", err)
	}
	if *pprofAddr != "" {
		_, stop, err := servePprof(*pprofAddr, log)
		if err != nil {
			fmt.Fprintln(stderr, "shardflake serve: --pprof:", err)
			return 1
		}
		defer stop()
	}
	return serve(rules, serveOptions{log: log, drain: *drain, reload: rf.loader(*configFile), ready: func(addr net.Addr) {
		log.Info("shardflake listening", "addr", addr.String(), "rules", *configFile, "database", rules.DatabaseName)
	}})
}

// serveOptions are what serve needs besides the rules.
type serveOptions struct {
	log   *slog.Logger
	drain time.Duration
	// ready is called once the listener is open.
	ready func(addr net.Addr)
	// checkKeysBeforeReady runs the start-up key column check (which
	// reads information_schema on the data sources) before ready instead
	// of beside serving. The demo's embedded backends write a statement's
	// view of every table it read back when it commits, so that check
	// running while ready's seeding wrote to the same data source undid
	// the writes (all of ds_0's demo rows, about one start in four).
	checkKeysBeforeReady bool
	// stop, when set, also stops the server (the demo's tests).
	stop <-chan struct{}
	// metricsOptional: a metrics address that cannot be listened on is
	// logged, not fatal (the demo, whose example port may be taken).
	metricsOptional bool
	// reload, when set, reads the rules file again on SIGHUP; nil
	// ignores SIGHUP's reloads (the demo's generated file).
	reload proxy.RulesLoader
	// rulesSource is the text of the rules served, for their digest;
	// nil reads rules.File (a fleet's rules come from etcd).
	rulesSource []byte
}

// serve runs a proxy for rules until a signal arrives; it returns the exit
// status.
func serve(rules *config.Rules, o serveOptions) int {
	for _, w := range rules.Warnings {
		o.log.Warn("rules", "warning", w.Error())
	}
	ctx, stopSignals := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stopSignals()
	var fleet *proxy.Fleet
	if rules.Server.Cluster != nil {
		var err error
		if rules, fleet, err = clusterRules(ctx, rules, &o); err != nil {
			o.log.Error("cluster", "err", err)
			return 1
		}
		defer fleet.Close()
	}

	keys, closeKeys, err := keygen.Open(ctx, rules)
	if err != nil {
		o.log.Error("key generators", "err", err)
		return 1
	}
	defer func() {
		if err := closeKeys(); err != nil {
			o.log.Warn("closing key generators", "err", err)
		}
	}()
	obs := metrics.New(rules, metrics.Options{Logger: o.log, RulesSource: o.rulesSource})
	srv, err := proxy.New(proxy.Config{Rules: rules, Keys: keys, Logger: o.log, Observer: obs, RulesSource: o.rulesSource})
	if err != nil {
		o.log.Error("proxy", "err", err)
		return 1
	}
	if o.reload != nil {
		srv.SetRulesLoader(o.reload)
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go reloadOnHangup(ctx, srv, hup, o.log)
	ops, err := proxy.NewOpsServer(srv, obs)
	if err != nil {
		o.log.Error("metrics", "err", err)
		return 1
	}
	adminAddr := ""
	if ml, err := net.Listen("tcp", rules.Server.MetricsListen); err == nil {
		adminAddr = ml.Addr().String()
		go ops.Serve(ml)
		defer ops.Shutdown(context.Background())
		o.log.Info("metrics and health endpoints", "addr", "http://"+ml.Addr().String(), "paths", "/metrics /healthz /readyz")
	} else if o.metricsOptional {
		o.log.Warn("no /metrics, /healthz, /readyz", "err", err)
	} else {
		o.log.Error("metrics listen", "err", err)
		return 1
	}
	l, err := net.Listen("tcp", rules.Server.Listen)
	if err != nil {
		o.log.Error("listen", "err", err)
		return 1
	}
	srv.SetNodeAddrs(l.Addr().String(), adminAddr)
	if fleet != nil {
		if err := joinCluster(fleet, srv, obs, l.Addr().String(), adminAddr); err != nil {
			o.log.Error("cluster", "err", err)
			l.Close()
			return 1
		}
	}
	// A key column too narrow for its generator's keys (a Snowflake
	// generator on an INT column) is said at start, not at the first
	// INSERT's 1264; in the background, so data sources that are slow to
	// answer do not delay serving (unless checkKeysBeforeReady).
	checkKeys := func() {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		for _, w := range srv.KeyColumnWarnings(wctx) {
			o.log.Warn("key generator", "warning", w)
		}
	}
	if o.checkKeysBeforeReady {
		checkKeys()
	}
	if o.ready != nil {
		o.ready(l.Addr())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	if !o.checkKeysBeforeReady {
		go checkKeys()
	}

	select {
	case <-ctx.Done():
		o.log.Info("shutting down: no new connections; waiting for statements in flight", "drain", o.drain)
	case <-o.stop:
		o.log.Info("shutting down")
	case err := <-served:
		o.log.Error("serve", "err", err)
		srv.Close()
		return 1
	}
	stopSignals() // a second signal kills the process the default way
	dctx, cancel := context.WithTimeout(context.Background(), o.drain)
	defer cancel()
	if err := srv.Shutdown(dctx); err != nil {
		o.log.Warn("statements still running were cut", "err", err)
	}
	if err := <-served; err != nil && !errors.Is(err, proxy.ErrServerClosed) {
		o.log.Error("serve", "err", err)
		return 1
	}
	o.log.Info("stopped")
	return 0
}

// reloadOnHangup reloads the rules on every SIGHUP until ctx ends; a
// refused reload is logged with its reason (the rules in force stay).
func reloadOnHangup(ctx context.Context, srv *proxy.Server, hup <-chan os.Signal, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if rep, err := srv.Reload(ctx, false); err == nil {
				log.Info("SIGHUP: rules reloaded", "digest", rep.NewDigest, "previous", rep.OldDigest, "changes", len(rep.Changes))
			} else {
				log.Error("SIGHUP: rules reload refused", "err", err)
			}
		}
	}
}

// loader reads the rules file again for a reload, with the address
// overrides the command line applied at start.
func (f runFlags) loader(configFile string) proxy.RulesLoader {
	return func() (*config.Rules, []byte, error) {
		src, err := os.ReadFile(configFile)
		if err != nil {
			return nil, nil, err
		}
		rules, err := config.Parse(src, configFile)
		if err == nil {
			err = rules.CheckServe()
		}
		if err != nil {
			return nil, nil, err
		}
		if *f.listen != "" {
			rules.Server.Listen = *f.listen
		}
		if *f.metricsListen != "" {
			rules.Server.MetricsListen = *f.metricsListen
		}
		return rules, src, nil
	}
}

// runFlags are the flags serve and demo share: the address overrides and
// logging.
type runFlags struct {
	listen        *string
	metricsListen *string
	log           logFlags
}

func addRunFlags(fs *flag.FlagSet) runFlags {
	return runFlags{
		listen:        fs.String("listen", "", "MySQL protocol address; overrides server.listen"),
		metricsListen: fs.String("metrics-listen", "", "/metrics, /healthz and /readyz address; overrides server.metricsListen"),
		log:           addLogFlags(fs),
	}
}

// setup builds the logger and loads the rules file for serving, with the
// address overrides applied. On failure it has told stderr why and returns
// the exit status (2 for bad flags, 1 for bad rules); notFound, when set,
// is a hint printed when the file does not exist.
func (f runFlags) setup(cmd, configFile, notFound string, stderr io.Writer) (*config.Rules, *slog.Logger, int) {
	log, err := f.log.logger(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "shardflake %s: %v\n", cmd, err)
		return nil, nil, 2
	}
	rules, err := config.Load(configFile)
	if notFound != "" && errors.Is(err, os.ErrNotExist) {
		fmt.Fprintf(stderr, "shardflake %s: %v\n%s\n", cmd, err, notFound)
		return nil, nil, 1
	}
	if err == nil {
		err = rules.CheckServe()
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: invalid rules\n%v\n", configFile, err)
		return nil, nil, 1
	}
	if *f.listen != "" {
		rules.Server.Listen = *f.listen
	}
	if *f.metricsListen != "" {
		rules.Server.MetricsListen = *f.metricsListen
	}
	return rules, log, 0
}

// logFlags are the logging flags serve and demo share.
type logFlags struct {
	level  *string
	format *string
}

func addLogFlags(fs *flag.FlagSet) logFlags {
	return logFlags{
		level:  fs.String("log-level", "info", "log level: debug, info, warn or error"),
		format: fs.String("log-format", "text", "log format: text or json"),
	}
}

// logger builds the slog logger the flags ask for, writing to w.
func (f logFlags) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(*f.level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", *f.level)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(*f.format) {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", *f.format)
}
