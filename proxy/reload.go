package proxy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/algorithm"
	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/metrics"
)

// Reloading the rules.
//
// A reload (SIGHUP, RELOAD RULES) reads the rules file again, validates
// it, compares it with the rules in force, opens and probes the pools of
// the data sources that are new or changed, and only then publishes the
// new snapshot (snapshot.go). Anything wrong on the way refuses the
// reload with the reason, and the snapshot in force stays as it was.
//
// What cannot change while the proxy runs (the listener's address and
// TLS, the metrics address, the traffic rules, the limits, the key
// generators) refuses the reload as needing a restart. What would move
// existing rows (a table's sharding algorithm or actualDataNodes, the
// rule of a table removed, the default data source) is refused while the
// tables affected hold rows, unless forced: the rows would stay where the
// old rules put them, where the new ones do not look.

// DefaultReloadGrace is how long the pools of a replaced snapshot stay
// open for the sessions that still use them.
const DefaultReloadGrace = 5 * time.Minute

// Applies says whether a change of the rules can take effect live.
type Applies string

// The ways a change applies.
const (
	AppliesLive    Applies = "live"
	AppliesRestart Applies = "needs restart"
	AppliesMoves   Applies = "refused: moves rows"
	AppliesForced  Applies = "forced: moves rows"
)

// RulesChange is one difference between the rules in force and a new
// rules file.
type RulesChange struct {
	Kind    string // table, data source, algorithm, user, setting, ...
	Name    string
	Old     string // "" when added
	New     string // "" when removed
	Applies Applies
	// Note says why a change needs a restart or moves rows.
	Note string
}

// ReloadReport is what a reload found and did.
type ReloadReport struct {
	OldDigest, NewDigest string
	Changes              []RulesChange
	// Applied: the new snapshot is in force.
	Applied bool
	// Note is what went wrong after the switch: the rules could not be
	// written to the fleet's etcd.
	Note string
}

// ReloadError is a reload that was refused; the rules in force did not
// change.
type ReloadError struct {
	Reason string
	Digest string // the digest still in force
}

func (e *ReloadError) Error() string {
	return fmt.Sprintf("rules reload refused: %s; the rules in force are unchanged (digest %s)", e.Reason, e.Digest)
}

// RulesLoader reads the rules file for a reload: its decoded rules and
// its text (for the digest).
type RulesLoader func() (*config.Rules, []byte, error)

// SetRulesLoader sets how reloads read the rules; the command line's
// applies its --listen overrides. The default reads Rules.File again.
func (srv *Server) SetRulesLoader(l RulesLoader) { srv.loader = l }

// SetReloadGrace sets how long a replaced snapshot's pools stay open for
// the sessions still using them (DefaultReloadGrace when unset).
func (srv *Server) SetReloadGrace(d time.Duration) { srv.grace = d }

// RulesDigest returns the digest of the rules in force.
func (srv *Server) RulesDigest() string { return srv.current().digest }

// Reloads returns how many reloads were applied and refused.
func (srv *Server) Reloads() (applied, refused int64) {
	return srv.reloads.applied.Load(), srv.reloads.refused.Load()
}

func (srv *Server) loadRules() (*config.Rules, []byte, error) {
	if srv.loader != nil {
		return srv.loader()
	}
	// The file the proxy started on: in a fleet the rules in force may
	// have come from etcd since.
	file := srv.rulesFile
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	rules, err := config.Parse(src, file)
	if err == nil {
		err = rules.CheckServe()
	}
	return rules, src, err
}

// rulesObserver is told about reloads (Metrics).
type rulesObserver interface {
	RulesReloaded(rules *config.Rules, digest string)
	ReloadRefused()
}

// Reload reads the rules file again and, when nothing refuses it, makes
// it the rules in force. force applies changes that move rows. A refusal
// is a *ReloadError.
//
// In a fleet (server.cluster) the file applied here is then written to
// etcd, where the other proxies pick it up (fleet.go); rep.Note says when
// that failed.
func (srv *Server) Reload(ctx context.Context, force bool) (ReloadReport, error) {
	var src []byte
	load := func() (*config.Rules, []byte, error) {
		rules, b, err := srv.loadRules()
		src = b
		return rules, b, err
	}
	rep, err := srv.reloadCounted(ctx, force, load, "file")
	if err == nil && srv.fleet() != nil {
		if perr := srv.fleet().publish(ctx, src, force); perr != nil {
			rep.Note = perr.Error()
			srv.log.Error("rules reloaded here but not shared with the fleet", "err", perr)
		}
	}
	return rep, err
}

// reloadCounted is a reload of the rules load returns (from the file or
// from etcd, source), counted and logged when refused.
func (srv *Server) reloadCounted(ctx context.Context, force bool, load RulesLoader, source string) (ReloadReport, error) {
	rep, err := srv.reload(ctx, force, false, load)
	if err != nil {
		srv.reloads.refused.Add(1)
		if o, ok := srv.obs.(rulesObserver); ok {
			o.ReloadRefused()
		}
		srv.log.Warn("rules reload refused", "source", source, "err", err)
	}
	return rep, err
}

// PreviewReload reports what Reload would change, without changing it.
func (srv *Server) PreviewReload(ctx context.Context) (ReloadReport, error) {
	return srv.reload(ctx, false, true, srv.loadRules)
}

func (srv *Server) reload(ctx context.Context, force, preview bool, load RulesLoader) (ReloadReport, error) {
	srv.reloadMu.Lock()
	defer srv.reloadMu.Unlock()
	old := srv.current()
	rep := ReloadReport{OldDigest: old.digest}
	refuse := func(format string, args ...any) (ReloadReport, error) {
		return rep, &ReloadError{Reason: fmt.Sprintf(format, args...), Digest: old.digest}
	}
	rules, src, err := load()
	if err != nil {
		return refuse("the rules file is invalid: %s", oneLine(err.Error()))
	}
	rep.NewDigest = metrics.RulesDigest(rules, src)
	rep.Changes = srv.diffRules(ctx, old, rules, force)
	if preview {
		return rep, nil
	}
	var restart, moves []string
	for _, c := range rep.Changes {
		switch c.Applies {
		case AppliesRestart:
			restart = append(restart, c.describe())
		case AppliesMoves:
			moves = append(moves, c.describe())
		}
	}
	if len(restart) > 0 {
		return refuse("%s cannot change while the proxy runs (restart it with the new file)", strings.Join(restart, "; "))
	}
	if len(moves) > 0 {
		return refuse("%s; reshard first (copy the rows to where the new rules put them, then reload), or RELOAD RULES FORCE to apply the rules anyway", strings.Join(moves, "; "))
	}
	sn, err := srv.newSnapshot(rules, rep.NewDigest, old)
	if err != nil {
		return refuse("%s", oneLine(err.Error()))
	}
	if err := sn.probeNew(ctx, old); err != nil {
		sn.users.Store(0)
		sn.die("")
		return refuse("%s", oneLine(err.Error()))
	}
	srv.auth.setUsers(rules.Server.Users)
	srv.live.add(sn)
	srv.snap.Store(sn)
	rep.Applied = true
	srv.reloads.applied.Add(1)
	if o, ok := srv.obs.(rulesObserver); ok {
		o.RulesReloaded(rules, sn.digest)
	}
	grace := srv.grace
	if grace <= 0 {
		grace = DefaultReloadGrace
	}
	old.graceTimer(grace)
	old.release()
	srv.log.Info("rules reloaded", "digest", sn.digest, "previous", old.digest, "changes", len(rep.Changes))
	return rep, nil
}

// probeNew logs in once to every data source whose pool is new in sn:
// a reload to a data source that does not answer is refused.
func (sn *snapshot) probeNew(ctx context.Context, old *snapshot) error {
	for _, ds := range sn.rules.DataSources {
		p := sn.pools[ds.Name]
		if old.pools[ds.Name] == p {
			continue
		}
		pctx, cancel := context.WithTimeout(ctx, p.connectTimeout)
		bcs, err := p.get(pctx, 1)
		cancel()
		if err != nil {
			return fmt.Errorf("data source %s (%s) does not answer: %v", ds.Name, dsAddr(ds), err)
		}
		p.put(bcs...)
	}
	return nil
}

func (c RulesChange) describe() string {
	s := c.Kind + " " + c.Name
	switch {
	case c.Old == "":
		s += " added"
	case c.New == "":
		s += " removed"
	default:
		s += fmt.Sprintf(" %s -> %s", c.Old, c.New)
	}
	if c.Note != "" {
		s += " (" + c.Note + ")"
	}
	return s
}

// restartOnly are the server: settings read once at start.
var restartOnly = map[string]string{
	"Listen":        "the listener is open on the old address",
	"MetricsListen": "the metrics listener is open on the old address",
	"TLSCert":       "the listener's TLS is set at start",
	"TLSKey":        "the listener's TLS is set at start",
	"AuthPlugin":    "the handshake's plugin is set at start",
	"Traffic":       "traffic rules change live with ALTER TRAFFIC RULE",
	"Limits":        "the limits are set at start",
	"Cluster":       "the fleet's etcd is joined at start",
	"CPUScheduling": "the threads' scheduling policy is set at start",
}

// diffRules lists what differs between the snapshot in force and rules.
func (srv *Server) diffRules(ctx context.Context, old *snapshot, rules *config.Rules, force bool) []RulesChange {
	d := &rulesDiff{srv: srv, force: force}
	o := old.rules
	if o.DatabaseName != rules.DatabaseName {
		d.add(RulesChange{Kind: "database", Name: "databaseName", Old: o.DatabaseName, New: rules.DatabaseName, Applies: AppliesRestart, Note: "sessions use the old schema name"})
	}
	d.settings(o, rules)
	d.users(o, rules)
	d.dataSources(o, rules)
	d.tables(ctx, old, rules)
	d.algorithmsAndGroups(o, rules)
	return d.out
}

// rulesDiff collects the changes diffRules finds.
type rulesDiff struct {
	srv   *Server
	force bool // the reload is forced: changes that move rows apply anyway
	out   []RulesChange
}

// add records c, which applies live unless it says otherwise.
func (d *rulesDiff) add(c RulesChange) {
	if c.Applies == "" {
		c.Applies = AppliesLive
	}
	d.out = append(d.out, c)
}

// moves records c, a change that would strand rows when holds (the
// table holds rows): it applies live when nothing is held, else only
// when forced.
func (d *rulesDiff) moves(c RulesChange, holds bool) {
	switch {
	case !holds:
		c.Applies = AppliesLive
	case d.force:
		c.Applies = AppliesForced
	default:
		c.Applies = AppliesMoves
	}
	d.add(c)
}

// settings compares the server: settings, field by field.
func (d *rulesDiff) settings(o, rules *config.Rules) {
	ov, nv := reflect.ValueOf(o.Server), reflect.ValueOf(rules.Server)
	for i := 0; i < ov.NumField(); i++ {
		f := ov.Type().Field(i)
		if f.Name == "Users" || reflect.DeepEqual(ov.Field(i).Interface(), nv.Field(i).Interface()) {
			continue
		}
		c := RulesChange{Kind: "setting", Name: "server." + lowerFirst(f.Name), Old: settingText(ov.Field(i)), New: settingText(nv.Field(i))}
		if note, ok := restartOnly[f.Name]; ok {
			c.Applies, c.Note = AppliesRestart, note
		}
		d.add(c)
	}
}

// users compares the users by name.
func (d *rulesDiff) users(o, rules *config.Rules) {
	ou, nu := usersByName(o.Server.Users), usersByName(rules.Server.Users)
	for _, name := range unionKeys(ou, nu) {
		a, b := ou[name], nu[name]
		switch {
		case a == nil:
			d.add(RulesChange{Kind: "user", Name: name, New: "added"})
		case b == nil:
			d.add(RulesChange{Kind: "user", Name: name, Old: "present", Note: "its sessions stay; new logins are refused"})
		case a.Password != b.Password:
			d.add(RulesChange{Kind: "user", Name: name, Old: "password", New: "new password"})
		case !reflect.DeepEqual(a.Privileges, b.Privileges):
			d.add(RulesChange{Kind: "user", Name: name, Old: fmt.Sprintf("%+v", a.Privileges), New: fmt.Sprintf("%+v", b.Privileges)})
		}
	}
}

// dataSources compares the data sources by name and the default one.
func (d *rulesDiff) dataSources(o, rules *config.Rules) {
	ods, nds := dataSourcesByName(o.DataSources), dataSourcesByName(rules.DataSources)
	for _, name := range unionKeys(ods, nds) {
		a, b := ods[name], nds[name]
		switch {
		case a == nil:
			d.add(RulesChange{Kind: "data source", Name: name, New: dsAddr(*b) + "/" + b.Database, Note: "probed before the switch"})
		case b == nil:
			d.add(RulesChange{Kind: "data source", Name: name, Old: dsAddr(*a) + "/" + a.Database, Note: "its pool closes when no session uses it"})
		case !reflect.DeepEqual(*a, *b):
			d.add(RulesChange{Kind: "data source", Name: name, Old: dsAddr(*a) + "/" + a.Database, New: dsAddr(*b) + "/" + b.Database + " (new pool)", Note: "probed before the switch"})
		}
	}
	if o.DefaultDataSource != rules.DefaultDataSource {
		d.moves(RulesChange{Kind: "data source", Name: "defaultDataSource", Old: o.DefaultDataSource, New: rules.DefaultDataSource, Note: "tables without rules would be looked for on another data source"}, true)
	}
}

// tables compares the sharded tables by name; a change that would move
// rows asks the snapshot in force (old) whether the table holds any.
func (d *rulesDiff) tables(ctx context.Context, old *snapshot, rules *config.Rules) {
	o := old.rules
	for _, name := range unionKeys(o.Tables, rules.Tables) {
		a, b := o.Tables[name], rules.Tables[name]
		switch {
		case a == nil:
			d.add(RulesChange{Kind: "table", Name: name, New: nodesText(b)})
		case b == nil:
			d.moves(RulesChange{Kind: "table", Name: name, Old: nodesText(a), Note: "its rows stay on its data nodes, which the new rules do not read"}, d.srv.holdsRows(ctx, old, a))
		default:
			if nodesText(a) != nodesText(b) {
				d.moves(RulesChange{Kind: "table", Name: name + " actualDataNodes", Old: nodesText(a), New: nodesText(b), Note: "its rows stay where the old data nodes put them"}, d.srv.holdsRows(ctx, old, a))
			}
			if sa, sb := strategyText(a.DatabaseStrategy), strategyText(b.DatabaseStrategy); sa != sb {
				d.moves(RulesChange{Kind: "table", Name: name + " databaseStrategy", Old: sa, New: sb, Note: "rows would be looked for on other data sources"}, d.srv.holdsRows(ctx, old, a))
			}
			if sa, sb := strategyText(a.TableStrategy), strategyText(b.TableStrategy); sa != sb {
				d.moves(RulesChange{Kind: "table", Name: name + " tableStrategy", Old: sa, New: sb, Note: "rows would be looked for in other tables"}, d.srv.holdsRows(ctx, old, a))
			}
			if a.KeyColumn != b.KeyColumn || a.KeyGenerator != b.KeyGenerator {
				d.add(RulesChange{Kind: "table", Name: name + " keyGenerateStrategy", Old: a.KeyColumn + " " + a.KeyGenerator, New: b.KeyColumn + " " + b.KeyGenerator})
			}
		}
	}
}

// algorithmsAndGroups compares the algorithms and key generators by
// name, the broadcast tables, binding groups and read/write splitting
// groups.
func (d *rulesDiff) algorithmsAndGroups(o, rules *config.Rules) {
	for _, name := range unionKeys(o.Algorithms, rules.Algorithms) {
		a, b := algorithmText(o.Algorithms[name]), algorithmText(rules.Algorithms[name])
		if a != b {
			d.add(RulesChange{Kind: "algorithm", Name: name, Old: a, New: b, Note: "see the tables that use it"})
		}
	}
	if !reflect.DeepEqual(o.KeyGenerators, rules.KeyGenerators) {
		d.add(RulesChange{Kind: "key generators", Name: "keyGenerators", Old: fmt.Sprint(len(o.KeyGenerators)), New: fmt.Sprint(len(rules.KeyGenerators)), Applies: AppliesRestart, Note: "worker ids and leases are taken at start"})
	}
	for _, t := range rules.BroadcastTables {
		if !slices.Contains(o.BroadcastTables, t) {
			d.add(RulesChange{Kind: "broadcast table", Name: t, New: "every data source"})
		}
	}
	for _, t := range o.BroadcastTables {
		if !slices.Contains(rules.BroadcastTables, t) {
			d.add(RulesChange{Kind: "broadcast table", Name: t, Old: "every data source"})
		}
	}
	if !reflect.DeepEqual(o.BindingGroups, rules.BindingGroups) {
		d.add(RulesChange{Kind: "binding tables", Name: "bindingTables", Old: fmt.Sprint(o.BindingGroups), New: fmt.Sprint(rules.BindingGroups)})
	}
	if !reflect.DeepEqual(o.ReadwriteGroups, rules.ReadwriteGroups) {
		d.add(RulesChange{Kind: "readwrite splitting", Name: "!READWRITE_SPLITTING", Old: fmt.Sprint(len(o.ReadwriteGroups)), New: fmt.Sprint(len(rules.ReadwriteGroups)), Note: "replica pools and monitors start anew"})
	}
}

// holdsRows reports whether table t holds a row on one of its data nodes
// in the snapshot sn. A data node whose table does not exist holds none;
// one that cannot be read counts as holding rows (the reload must not
// guess).
func (srv *Server) holdsRows(ctx context.Context, sn *snapshot, t *config.TableRule) bool {
	for _, n := range t.DataNodes {
		p, err := sn.pool(n.DataSource, false)
		if err != nil {
			return true
		}
		qctx, cancel := context.WithTimeout(ctx, p.connectTimeout)
		rows, err := queryPool(qctx, p, "SELECT 1 FROM `"+strings.ReplaceAll(n.Table, "`", "``")+"` LIMIT 1")
		cancel()
		var me *mysql.MyError
		if errors.As(err, &me) && me.Code == mysql.ER_NO_SUCH_TABLE {
			continue
		}
		if err != nil || len(rows) > 0 {
			return true
		}
	}
	return false
}

func dsAddr(ds config.DataSource) string { return fmt.Sprintf("%s:%d", ds.Host, ds.Port) }

func usersByName(us []config.User) map[string]*config.User {
	m := map[string]*config.User{}
	for i := range us {
		m[us[i].Name] = &us[i]
	}
	return m
}

func dataSourcesByName(ds []config.DataSource) map[string]*config.DataSource {
	m := map[string]*config.DataSource{}
	for i := range ds {
		m[ds[i].Name] = &ds[i]
	}
	return m
}

// unionKeys returns the keys of a and b, sorted.
func unionKeys[V any](a, b map[string]V) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func nodesText(t *config.TableRule) string {
	parts := make([]string, len(t.DataNodes))
	for i, n := range t.DataNodes {
		parts[i] = n.DataSource + "." + n.Table
	}
	return strings.Join(parts, ",")
}

func strategyText(s *algorithm.Strategy) string {
	if s == nil {
		return "none"
	}
	return fmt.Sprintf("%v(%s) %s", s.Kind, strings.Join(s.Columns, ","), placementText(s.Algorithm))
}

// algorithmText is an algorithm's type and every prop.
func algorithmText(a algorithm.Algorithm) string {
	return propsText(a, func(string) bool { return true })
}

// placementText is an algorithm's type and the props that decide where
// a row lives: a change of another prop (allowing range scans) moves no
// row, so the tables' strategies compare by this text.
func placementText(a algorithm.Algorithm) string {
	return propsText(a, algorithm.PlacementProp)
}

func propsText(a algorithm.Algorithm, keep func(string) bool) string {
	if a == nil || reflect.ValueOf(a).IsNil() {
		return ""
	}
	props := a.Props()
	keys := make([]string, 0, len(props))
	for k := range props {
		if keep(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(a.Type())
	for i, k := range keys {
		if i == 0 {
			b.WriteString(" ")
		} else {
			b.WriteString(",")
		}
		b.WriteString(k + "=" + props[k])
	}
	return b.String()
}

func settingText(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case string:
		return x
	case fmt.Stringer:
		return x.String()
	}
	if v.Kind() == reflect.Slice || v.Kind() == reflect.Struct {
		return fmt.Sprintf("%+v", v.Interface())
	}
	return fmt.Sprint(v.Interface())
}

func lowerFirst(s string) string {
	switch {
	case strings.HasPrefix(s, "TLS"):
		return "tls" + s[3:]
	case s == "":
		return s
	}
	r := []rune(s)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

// oneLine joins a multi-line error (a rules file's findings) into one.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}
