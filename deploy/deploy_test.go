package deploy_test

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// root is the repository root, relative to this package.
const root = ".."

// compose is the part of docker-compose.yml the tests read.
type compose struct {
	Services map[string]service `yaml:"services"`
	Volumes  map[string]any     `yaml:"volumes"`
}

type service struct {
	Image       string            `yaml:"image"`
	Build       build             `yaml:"build"`
	Command     []string          `yaml:"command"`
	Volumes     []string          `yaml:"volumes"`
	Ports       []string          `yaml:"ports"`
	Environment map[string]string `yaml:"environment"`
	DependsOn   yaml.Node         `yaml:"depends_on"`
}

type build struct {
	Context    string `yaml:"context"`
	Dockerfile string `yaml:"dockerfile"`
}

func loadCompose(t *testing.T) compose {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var c compose
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return c
}

// mount is one bind mount of a service: a repository path at a path in
// the container.
type mount struct{ host, container string }

// mounts returns a service's bind mounts (named volumes are skipped) and
// checks that each repository path exists.
func (s service) mounts(t *testing.T, name string) []mount {
	t.Helper()
	var out []mount
	for _, v := range s.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) < 2 || !strings.HasPrefix(parts[0], "./") {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, parts[0])); err != nil {
			t.Errorf("service %s mounts %s, which is not in the repository: %v", name, parts[0], err)
		}
		out = append(out, mount{host: parts[0], container: parts[1]})
	}
	return out
}

// mountOf returns where the service mounts repository path host.
func (s service) mountOf(t *testing.T, name, host string) string {
	t.Helper()
	for _, m := range s.mounts(t, name) {
		if m.host == host {
			return m.container
		}
	}
	t.Fatalf("service %s does not mount %s", name, host)
	return ""
}

// containerPorts returns the container side of a service's port mappings.
func (s service) containerPorts() []string {
	var out []string
	for _, p := range s.Ports {
		parts := strings.Split(p, ":")
		out = append(out, strings.TrimSuffix(parts[len(parts)-1], "/tcp"))
	}
	return out
}

// flagValue returns the value of --name in args ("--name=v" or "--name v").
func flagValue(args []string, name string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// dockerfile is the instructions of the top-level Dockerfile, in order,
// as (INSTRUCTION, arguments) with continuation lines joined.
func dockerfile(t *testing.T) [][2]string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][2]string
	var cur string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if cur == "" && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if l, ok := strings.CutSuffix(line, "\\"); ok {
			cur += l + " "
			continue
		}
		cur += line
		ins, args, _ := strings.Cut(cur, " ")
		out = append(out, [2]string{strings.ToUpper(ins), strings.TrimSpace(args)})
		cur = ""
	}
	return out
}

// jsonArgs reads an exec-form argument list: ["a", "b"].
func jsonArgs(t *testing.T, s string) []string {
	t.Helper()
	var out []string
	if err := yaml.Unmarshal([]byte(s), &out); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return out
}

// TestComposeProxyMatchesTheRules checks the proxy service against the
// rules file it serves: the file is mounted where the command reads it,
// loads and can be served, and its listeners are the published ports.
func TestComposeProxyMatchesTheRules(t *testing.T) {
	c := loadCompose(t)
	proxy, ok := c.Services["proxy"]
	if !ok {
		t.Fatal("docker-compose.yml has no proxy service")
	}
	if proxy.Build.Context != "." || proxy.Build.Dockerfile != "Dockerfile" {
		t.Errorf("proxy builds %+v, want context . and the top-level Dockerfile", proxy.Build)
	}
	if _, err := os.Stat(filepath.Join(root, proxy.Build.Context, proxy.Build.Dockerfile)); err != nil {
		t.Error(err)
	}
	config := flagValue(proxy.Command, "--config")
	if proxy.Command[0] != "serve" || config == "" {
		t.Fatalf("proxy command %v, want serve --config FILE", proxy.Command)
	}
	if got := proxy.mountOf(t, "proxy", "./deploy/rules.compose.yaml"); got != config {
		t.Errorf("deploy/rules.compose.yaml is mounted at %s but the proxy reads %s", got, config)
	}
	rules := loadRules(t)
	ports := proxy.containerPorts()
	for _, addr := range []string{rules.Server.Listen, rules.Server.MetricsListen} {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		if host != "0.0.0.0" {
			t.Errorf("%s listens on %s: unreachable from outside the container", addr, host)
		}
		if !slices.Contains(ports, port) {
			t.Errorf("the rules listen on port %s, which the proxy service does not publish (%v)", port, proxy.Ports)
		}
	}
	// The image's default command reads the same file.
	for _, ins := range dockerfile(t) {
		if ins[0] == "CMD" {
			if got := flagValue(jsonArgs(t, ins[1]), "--config"); got != config {
				t.Errorf("the Dockerfile's CMD reads %s, compose mounts the rules at %s", got, config)
			}
		}
		if ins[0] == "EXPOSE" {
			for _, addr := range []string{rules.Server.Listen, rules.Server.MetricsListen} {
				_, port, _ := net.SplitHostPort(addr)
				if !slices.Contains(strings.Fields(ins[1]), port) {
					t.Errorf("the Dockerfile does not EXPOSE %s", port)
				}
			}
		}
	}
}

func loadRules(t *testing.T) *config.Rules {
	t.Helper()
	rules, err := config.Load(filepath.Join(root, "deploy", "rules.compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := rules.CheckServe(); err != nil {
		t.Fatal(err)
	}
	if len(rules.Warnings) > 0 {
		t.Errorf("deploy/rules.compose.yaml warnings: %v", rules.Warnings)
	}
	return rules
}

// TestComposeDataSourcesExist checks every data source against the MySQL
// service its host names: a MySQL 8 image, port 3306, and an init SQL
// file that creates the database, every physical table the rules put
// there, and the account the proxy logs in with.
func TestComposeDataSourcesExist(t *testing.T) {
	c := loadCompose(t)
	rules := loadRules(t)
	var names []string
	for _, ds := range rules.DataSources {
		names = append(names, ds.Name)
	}
	if want := []string{"ds_0", "ds_1", "ds_2", "ds_3"}; !slices.Equal(names, want) {
		t.Errorf("data sources %v, want %v", names, want)
	}
	mysqlServices := map[string]bool{}
	for _, ds := range rules.DataSources {
		svc, ok := c.Services[ds.Host]
		if !ok {
			t.Errorf("data source %s names host %s, which is no compose service", ds.Name, ds.Host)
			continue
		}
		mysqlServices[ds.Host] = true
		if !strings.HasPrefix(svc.Image, "mysql:8") {
			t.Errorf("service %s runs %s, want a MySQL 8 image", ds.Host, svc.Image)
		}
		if ds.Port != 3306 {
			t.Errorf("data source %s: port %d, MySQL listens on 3306", ds.Name, ds.Port)
		}
		sql := initSQL(t, ds.Host, svc)
		if !regexp.MustCompile(`(?i)CREATE DATABASE IF NOT EXISTS ` + regexp.QuoteMeta(ds.Database) + `\b`).MatchString(sql) {
			t.Errorf("%s's init SQL does not create database %s (data source %s)", ds.Host, ds.Database, ds.Name)
		}
		user := regexp.MustCompile(`(?i)CREATE USER IF NOT EXISTS '` + regexp.QuoteMeta(ds.User) + `'@'%' IDENTIFIED BY '` + regexp.QuoteMeta(ds.Password) + `'`)
		if !user.MatchString(sql) {
			t.Errorf("%s's init SQL does not create user %s with the rules' password", ds.Host, ds.User)
		}
		// The least-privilege account of the README's Security section:
		// what the proxy needs on its databases, nothing global.
		if !regexp.MustCompile(`(?i)GRANT ` + regexp.QuoteMeta(backendGrants) + ` ON ` + regexp.QuoteMeta(ds.Database) + `\.\* TO '` + regexp.QuoteMeta(ds.User) + `'`).MatchString(sql) {
			t.Errorf("%s's init SQL does not grant %s %s on %s", ds.Host, ds.User, backendGrants, ds.Database)
		}
		if m := regexp.MustCompile(`(?i)GRANT[^;]*(ALL PRIVILEGES|FILE|PROCESS|SUPER|ON \*\.\*|ON mysql\.)`).FindString(sql); m != "" {
			t.Errorf("%s's init SQL grants more than the proxy needs: %s", ds.Host, m)
		}
		var tables []string
		for _, tr := range rules.Tables {
			tables = append(tables, tr.Tables(ds.Name)...)
		}
		tables = append(tables, rules.BroadcastTables...)
		for _, table := range tables {
			if !regexp.MustCompile(`(?i)CREATE TABLE IF NOT EXISTS ` + regexp.QuoteMeta(ds.Database+"."+table) + ` `).MatchString(sql) {
				t.Errorf("%s's init SQL does not create %s.%s", ds.Host, ds.Database, table)
			}
		}
	}
	if len(mysqlServices) != 2 {
		t.Errorf("the data sources are on %d MySQL services, want 2", len(mysqlServices))
	}
	proxy := c.Services["proxy"]
	for host := range mysqlServices {
		if !dependsOn(proxy, host) {
			t.Errorf("the proxy service does not depend on %s", host)
		}
	}
}

// backendGrants are the privileges the proxy's account needs on each
// data source's database: DML, the DDL the proxy routes, temporary
// tables and LOCK TABLES that pin a connection, views.
const backendGrants = "SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, INDEX, ALTER, CREATE TEMPORARY TABLES, LOCK TABLES, CREATE VIEW, SHOW VIEW"

// initSQL returns the SQL files a MySQL service runs on its first start.
func initSQL(t *testing.T, name string, svc service) string {
	t.Helper()
	var b strings.Builder
	for _, m := range svc.mounts(t, name) {
		if strings.HasPrefix(m.container, "/docker-entrypoint-initdb.d/") && strings.HasSuffix(m.host, ".sql") {
			raw, err := os.ReadFile(filepath.Join(root, m.host))
			if err != nil {
				t.Fatal(err)
			}
			b.Write(raw)
		}
	}
	if b.Len() == 0 {
		t.Fatalf("service %s mounts no init SQL into /docker-entrypoint-initdb.d", name)
	}
	return b.String()
}

func dependsOn(s service, name string) bool {
	n := &s.DependsOn
	switch n.Kind {
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if c.Value == name {
				return true
			}
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == name {
				return true
			}
		}
	}
	return false
}

// TestComposeRulesAdaptTheExample checks that the compose rules shard the
// same tables as rules.example.yaml, by the same columns, with the same
// key columns, only over more data sources.
func TestComposeRulesAdaptTheExample(t *testing.T) {
	example, err := config.Load(filepath.Join(root, "rules.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rules := loadRules(t)
	if rules.DatabaseName != example.DatabaseName {
		t.Errorf("database %s, example %s", rules.DatabaseName, example.DatabaseName)
	}
	if !slices.Equal(rules.BroadcastTables, example.BroadcastTables) {
		t.Errorf("broadcast tables %v, example %v", rules.BroadcastTables, example.BroadcastTables)
	}
	if len(rules.Tables) != len(example.Tables) {
		t.Errorf("%d sharded tables, example %d", len(rules.Tables), len(example.Tables))
	}
	for name, want := range example.Tables {
		got := rules.Table(name)
		if got == nil {
			t.Errorf("table %s of the example is not sharded", name)
			continue
		}
		if got.KeyColumn != want.KeyColumn || !slices.Equal(got.DatabaseStrategy.Columns, want.DatabaseStrategy.Columns) ||
			!slices.Equal(got.TableStrategy.Columns, want.TableStrategy.Columns) {
			t.Errorf("table %s shards differently from the example", name)
		}
	}
	if len(rules.BindingGroups) != len(example.BindingGroups) {
		t.Errorf("binding groups %v, example %v", rules.BindingGroups, example.BindingGroups)
	}
}

// TestComposePrometheusAndGrafana checks the monitoring services:
// Prometheus reads the mounted config, which scrapes the proxy service on
// the rules' metrics port; Grafana's provisioning points at that
// Prometheus and at the directory the dashboard is mounted in.
func TestComposePrometheusAndGrafana(t *testing.T) {
	c := loadCompose(t)
	rules := loadRules(t)
	prom, ok := c.Services["prometheus"]
	if !ok {
		t.Fatal("no prometheus service")
	}
	if got, want := flagValue(prom.Command, "--config.file"), prom.mountOf(t, "prometheus", "./deploy/prometheus/prometheus.yml"); got != want {
		t.Errorf("prometheus reads %s, deploy/prometheus/prometheus.yml is mounted at %s", got, want)
	}
	var cfg struct {
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	raw, err := os.ReadFile(filepath.Join(root, "deploy", "prometheus", "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	_, metricsPort, _ := net.SplitHostPort(rules.Server.MetricsListen)
	want := net.JoinHostPort("proxy", metricsPort)
	found := false
	for _, sc := range cfg.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			found = found || slices.Contains(st.Targets, want)
		}
	}
	if !found {
		t.Errorf("prometheus.yml does not scrape %s: %+v", want, cfg.ScrapeConfigs)
	}

	grafana, ok := c.Services["grafana"]
	if !ok {
		t.Fatal("no grafana service")
	}
	if got := grafana.mountOf(t, "grafana", "./deploy/grafana/provisioning"); got != "/etc/grafana/provisioning" {
		t.Errorf("provisioning mounted at %s, Grafana reads /etc/grafana/provisioning", got)
	}
	dashboard := grafana.mountOf(t, "grafana", "./deploy/grafana/shardflake.json")
	var providers struct {
		Providers []struct {
			Type    string `yaml:"type"`
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	readYAML(t, filepath.Join(root, "deploy", "grafana", "provisioning", "dashboards", "shardflake.yml"), &providers)
	if len(providers.Providers) != 1 || providers.Providers[0].Type != "file" || filepath.Dir(dashboard) != providers.Providers[0].Options.Path {
		t.Errorf("the dashboard is mounted at %s, the provider reads %+v", dashboard, providers.Providers)
	}
	var sources struct {
		Datasources []struct {
			Type string `yaml:"type"`
			URL  string `yaml:"url"`
		} `yaml:"datasources"`
	}
	readYAML(t, filepath.Join(root, "deploy", "grafana", "provisioning", "datasources", "prometheus.yml"), &sources)
	promPorts := prom.containerPorts()
	if len(sources.Datasources) != 1 || sources.Datasources[0].Type != "prometheus" || len(promPorts) == 0 ||
		sources.Datasources[0].URL != "http://prometheus:"+promPorts[0] {
		t.Errorf("Grafana data sources %+v, want the prometheus service on %v", sources.Datasources, promPorts)
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestDockerfileBuildsTheProxy checks the Dockerfile against the
// repository: the Go version of go.mod, the module files and command it
// builds, and the binary it runs.
func TestDockerfileBuildsTheProxy(t *testing.T) {
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+)\.(\d+)`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	goVersion := string(m[1]) + "." + string(m[2])
	var froms []string
	var built, copied, entry string
	copiesModules := false
	for _, ins := range dockerfile(t) {
		switch ins[0] {
		case "FROM":
			froms = append(froms, ins[1])
		case "COPY":
			f := strings.Fields(ins[1])
			if slices.Contains(f, "go.mod") && slices.Contains(f, "go.sum") {
				copiesModules = true
			}
			if strings.HasPrefix(f[0], "--from=") {
				copied = f[len(f)-1]
			}
		case "RUN":
			if strings.Contains(ins[1], "go build") {
				f := strings.Fields(ins[1])
				built = f[len(f)-1]
				if o := slices.Index(f, "-o"); o >= 0 {
					built = f[o+1] + " " + built
				}
			}
		case "ENTRYPOINT":
			entry = jsonArgs(t, ins[1])[0]
		}
	}
	if len(froms) != 2 {
		t.Fatalf("FROM %v, want a build stage and a runtime stage", froms)
	}
	if !strings.HasPrefix(froms[0], "golang:"+goVersion) {
		t.Errorf("build stage %s, go.mod wants Go %s", froms[0], goVersion)
	}
	if !copiesModules {
		t.Error("the Dockerfile does not copy go.mod and go.sum before the sources (module cache layer)")
	}
	out, pkg, _ := strings.Cut(built, " ")
	if pkg != "./cmd/shardflake" {
		t.Errorf("the Dockerfile builds %q, want ./cmd/shardflake", pkg)
	}
	if _, err := os.Stat(filepath.Join(root, pkg)); err != nil {
		t.Error(err)
	}
	if copied == "" || entry != copied {
		t.Errorf("the runtime stage copies the binary to %q but runs %q (built at %s)", copied, entry, out)
	}
}

// TestPromtoolCheckConfig validates the compose Prometheus configuration
// with promtool, as Prometheus would at startup.
func TestPromtoolCheckConfig(t *testing.T) {
	promtool := mariadbtest.RequireBinary(t, "promtool")
	out, err := exec.Command(promtool, "check", "config", filepath.Join(root, "deploy", "prometheus", "prometheus.yml")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SUCCESS") {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
}

// TestComposePublishesWhatTheREADMEPromises checks the host ports the
// compose file's header comment tells users to open.
func TestComposePublishesWhatTheREADMEPromises(t *testing.T) {
	c := loadCompose(t)
	want := map[string]string{"proxy": "3307", "prometheus": "9090", "grafana": "3000"}
	for svc, port := range want {
		found := false
		for _, p := range c.Services[svc].Ports {
			parts := strings.Split(p, ":")
			if len(parts) >= 2 && parts[len(parts)-2] == port {
				found = true
			}
		}
		if !found {
			t.Errorf("service %s does not publish host port %s (%v)", svc, port, c.Services[svc].Ports)
		}
	}
}
