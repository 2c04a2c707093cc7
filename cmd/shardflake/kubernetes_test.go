package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/shardflake/shardflake/config"
)

// k8sObject is the part of a Kubernetes manifest the test reads.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		Replicas *int             `yaml:"replicas"`
		Selector yaml.Node        `yaml:"selector"`
		Ports    []k8sServicePort `yaml:"ports"`
		Template *k8sPodTemplate  `yaml:"template"`
	} `yaml:"spec"`
}

type k8sServicePort struct {
	Name       string    `yaml:"name"`
	Port       int       `yaml:"port"`
	TargetPort yaml.Node `yaml:"targetPort"`
}

type k8sPodTemplate struct {
	Metadata struct {
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Spec struct {
		TerminationGracePeriodSeconds int            `yaml:"terminationGracePeriodSeconds"`
		Containers                    []k8sContainer `yaml:"containers"`
		Volumes                       []struct {
			Name      string `yaml:"name"`
			ConfigMap *struct {
				Name string `yaml:"name"`
			} `yaml:"configMap"`
		} `yaml:"volumes"`
	} `yaml:"spec"`
}

type k8sContainer struct {
	Name    string   `yaml:"name"`
	Image   string   `yaml:"image"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name string `yaml:"name"`
	} `yaml:"env"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	ReadinessProbe *k8sProbe `yaml:"readinessProbe"`
	LivenessProbe  *k8sProbe `yaml:"livenessProbe"`
	VolumeMounts   []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

type k8sProbe struct {
	HTTPGet *struct {
		Path string    `yaml:"path"`
		Port yaml.Node `yaml:"port"`
	} `yaml:"httpGet"`
}

// loadManifests parses every document of every file in
// deploy/kubernetes, by kind/name.
func loadManifests(t *testing.T) map[string]k8sObject {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "deploy", "kubernetes", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in deploy/kubernetes: %v", err)
	}
	out := map[string]k8sObject{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		for {
			var o k8sObject
			err := dec.Decode(&o)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
				t.Fatalf("%s: a document without apiVersion, kind or metadata.name", f)
			}
			out[o.Kind+"/"+o.Metadata.Name] = o
		}
	}
	return out
}

// portOf resolves a probe's or Service's port (a number or a container
// port's name) to a number.
func portOf(t *testing.T, c k8sContainer, n yaml.Node) int {
	t.Helper()
	if p, err := strconv.Atoi(n.Value); err == nil {
		return p
	}
	for _, p := range c.Ports {
		if p.Name == n.Value {
			return p.ContainerPort
		}
	}
	t.Fatalf("container %s has no port %q", c.Name, n.Value)
	return 0
}

func addrPort(t *testing.T, addr string) int {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	return p
}

// TestKubernetesManifests: deploy/kubernetes parses, and the proxy's
// Deployment agrees with the binary and with the rules it mounts: its
// args parse with serve's own flag set (the $(VAR)s it uses are
// container env vars), --config names the ConfigMap's rules.yaml where it
// is mounted, that file loads and serves (on every interface, in cluster
// mode on the etcd Service), the container ports are the rules'
// listen/metricsListen ports, the readiness probe asks /readyz and the
// liveness probe /healthz on the metrics port, the Service reaches the
// MySQL port of the pods it selects, and the grace period outlasts
// --drain.
func TestKubernetesManifests(t *testing.T) {
	objs := loadManifests(t)
	dep, ok := objs["Deployment/shardflake"]
	if !ok || dep.Spec.Template == nil {
		t.Fatalf("no Deployment shardflake with a pod template: %v", keys(objs))
	}
	pod := dep.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("the Deployment runs %d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Fatalf("container args %v: want the serve sub-command first", c.Args)
	}
	env := map[string]bool{}
	for _, e := range c.Env {
		env[e.Name] = true
	}
	args := make([]string, len(c.Args)-1)
	for i, a := range c.Args[1:] {
		args[i] = regexp.MustCompile(`\$\(([A-Z_]+)\)`).ReplaceAllStringFunc(a, func(v string) string {
			name := v[2 : len(v)-1]
			if !env[name] {
				t.Errorf("arg %q uses $(%s), which the container's env does not set", a, name)
			}
			return "10.0.0.7"
		})
	}
	sf := newServeFlags(io.Discard)
	if err := sf.fs.Parse(args); err != nil {
		t.Fatalf("serve's flags refuse the Deployment's args %v: %v", args, err)
	}
	if sf.fs.NArg() > 0 {
		t.Fatalf("args left after the flags: %v", sf.fs.Args())
	}

	// --config is the ConfigMap's rules.yaml, mounted.
	dir, key := filepath.Split(*sf.configFile)
	var cmName string
	for _, m := range c.VolumeMounts {
		if filepath.Clean(m.MountPath) != filepath.Clean(dir) {
			continue
		}
		for _, v := range pod.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil {
				cmName = v.ConfigMap.Name
			}
		}
	}
	if cmName == "" {
		t.Fatalf("--config %s is not in a ConfigMap volume the container mounts", *sf.configFile)
	}
	cm, ok := objs["ConfigMap/"+cmName]
	if !ok || cm.Data[key] == "" {
		t.Fatalf("ConfigMap %s has no %s", cmName, key)
	}
	rules, err := config.Parse([]byte(cm.Data[key]), "ConfigMap "+cmName+" "+key)
	if err == nil {
		err = rules.CheckServe()
	}
	if err != nil {
		t.Fatalf("the ConfigMap's rules: %v", err)
	}
	if *sf.rf.listen != "" {
		rules.Server.Listen = *sf.rf.listen
	}
	if *sf.rf.metricsListen != "" {
		rules.Server.MetricsListen = *sf.rf.metricsListen
	}
	if err := sf.cluster.apply(rules); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{rules.Server.Listen, rules.Server.MetricsListen} {
		if host, _, _ := net.SplitHostPort(a); host != "0.0.0.0" && host != "" && host != "::" {
			t.Errorf("the rules listen on %s: a pod must listen on every interface", a)
		}
	}

	// Ports and probes.
	ports := map[string]int{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if ports["mysql"] != addrPort(t, rules.Server.Listen) {
		t.Errorf("container port mysql %d, the rules listen on %s", ports["mysql"], rules.Server.Listen)
	}
	if ports["http"] != addrPort(t, rules.Server.MetricsListen) {
		t.Errorf("container port http %d, the rules' metricsListen is %s", ports["http"], rules.Server.MetricsListen)
	}
	for _, pr := range []struct {
		name  string
		probe *k8sProbe
		path  string
	}{{"readinessProbe", c.ReadinessProbe, "/readyz"}, {"livenessProbe", c.LivenessProbe, "/healthz"}} {
		if pr.probe == nil || pr.probe.HTTPGet == nil {
			t.Errorf("no %s httpGet", pr.name)
			continue
		}
		if pr.probe.HTTPGet.Path != pr.path || portOf(t, c, pr.probe.HTTPGet.Port) != addrPort(t, rules.Server.MetricsListen) {
			t.Errorf("%s asks %s on port %s, want %s on the metrics port %d", pr.name, pr.probe.HTTPGet.Path, pr.probe.HTTPGet.Port.Value, pr.path, addrPort(t, rules.Server.MetricsListen))
		}
	}
	if got, drain := pod.TerminationGracePeriodSeconds, int(sf.drain.Seconds()); got <= drain {
		t.Errorf("terminationGracePeriodSeconds %d does not outlast --drain %ds", got, drain)
	}

	// The Service.
	svc, ok := objs["Service/shardflake"]
	if !ok {
		t.Fatal("no Service shardflake")
	}
	var sel map[string]string
	if err := svc.Spec.Selector.Decode(&sel); err != nil || len(sel) == 0 {
		t.Fatalf("Service shardflake selector: %v", err)
	}
	for k, v := range sel {
		if dep.Spec.Template.Metadata.Labels[k] != v {
			t.Errorf("Service selector %s=%s does not select the Deployment's pods %v", k, v, dep.Spec.Template.Metadata.Labels)
		}
	}
	mysqlReached := false
	for _, p := range svc.Spec.Ports {
		if portOf(t, c, p.TargetPort) == ports["mysql"] {
			mysqlReached = true
		}
	}
	if !mysqlReached {
		t.Error("Service shardflake has no port to the pods' MySQL port")
	}

	// Cluster mode on the etcd Service.
	cl := rules.Server.Cluster
	if cl == nil {
		t.Fatal("the ConfigMap's rules have no server.cluster")
	}
	for _, ep := range cl.Endpoints {
		u, _ := url.Parse(ep)
		etcd, ok := objs["Service/"+u.Hostname()]
		found := false
		for _, p := range etcd.Spec.Ports {
			found = found || strconv.Itoa(p.Port) == u.Port()
		}
		if !ok || !found {
			t.Errorf("cluster endpoint %s is no Service port in the manifests", ep)
		}
	}
	if cl.Advertise != "10.0.0.7:"+strconv.Itoa(ports["mysql"]) {
		t.Errorf("--advertise gives %s, not the pod's MySQL port %d", cl.Advertise, ports["mysql"])
	}
	if cl.AdvertiseAdmin != "10.0.0.7:"+strconv.Itoa(ports["http"]) {
		t.Errorf("--advertise-admin gives %s, not the pod's metrics port %d", cl.AdvertiseAdmin, ports["http"])
	}
	if _, ok := objs["StatefulSet/etcd"]; !ok {
		t.Error("no etcd StatefulSet")
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestClusterFlagsNeedClusterSection: --advertise on a standalone file is
// refused rather than ignored.
func TestClusterFlagsNeedClusterSection(t *testing.T) {
	sf := newServeFlags(io.Discard)
	if err := sf.fs.Parse([]string{"--advertise", "10.0.0.7:3307"}); err != nil {
		t.Fatal(err)
	}
	rules, err := config.Parse([]byte("databaseName: db\nserver:\n  users: [{user: a, password: b}]\ndataSources:\n  ds_0: {url: \"mysql://127.0.0.1:3306/ds_0\", username: root}\n"), "r.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := sf.cluster.apply(rules); err == nil || !strings.Contains(err.Error(), "need a server.cluster section") {
		t.Fatalf("--advertise without server.cluster: %v", err)
	}
}
