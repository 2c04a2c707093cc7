package config

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// decoder walks a rules file's YAML nodes strictly, collecting every
// problem with its line instead of stopping at the first.
type decoder struct {
	file  string
	errs  Errors
	warns []*Error
}

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	d.errs = append(d.errs, d.at(n, format, args...))
}

func (d *decoder) warnf(n *yaml.Node, format string, args ...any) {
	d.warns = append(d.warns, d.at(n, format, args...))
}

func (d *decoder) at(n *yaml.Node, format string, args ...any) *Error {
	e := &Error{File: d.file, Message: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	return e
}

// sorted returns the errors in file order (a problem found while
// validating may sit above one found while decoding).
func sortedErrors(es []*Error) []*Error {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Line != es[j].Line {
			return es[i].Line < es[j].Line
		}
		return es[i].Column < es[j].Column
	})
	return es
}

// resolve follows aliases (*anchor) to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// fieldSet is a decoded mapping: value and key nodes by key, in order.
type fieldSet struct {
	node  *yaml.Node
	vals  map[string]*yaml.Node
	keys  map[string]*yaml.Node
	order []string
}

func (f *fieldSet) get(k string) *yaml.Node {
	if f == nil {
		return nil
	}
	return f.vals[k]
}

func (f *fieldSet) has(k string) bool { return f != nil && f.vals[k] != nil }

// line returns the line of key k, or of the mapping when k is absent.
func (f *fieldSet) keyNode(k string) *yaml.Node {
	if f == nil {
		return nil
	}
	if n := f.keys[k]; n != nil {
		return n
	}
	return f.node
}

// fields decodes a mapping whose keys must be among known; what names the
// mapping in errors. A nil known accepts any key (a map of names). It
// returns nil when n is not a mapping (after reporting it).
func (d *decoder) fields(n *yaml.Node, what string, known ...string) *fieldSet {
	n = resolve(n)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		if isNull(n) {
			return &fieldSet{node: n, vals: map[string]*yaml.Node{}, keys: map[string]*yaml.Node{}}
		}
		d.errorf(n, "%s must be a mapping", what)
		return nil
	}
	f := &fieldSet{node: n, vals: map[string]*yaml.Node{}, keys: map[string]*yaml.Node{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, "%s: keys must be plain names", what)
			continue
		}
		if k.Value == "<<" {
			d.errorf(k, "%s: merge keys (<<) are not supported", what)
			continue
		}
		if known != nil && !slices.Contains(known, k.Value) {
			d.errorf(k, "unknown key %q in %s%s", k.Value, what, suggest(k.Value, known))
			continue
		}
		if f.vals[k.Value] != nil {
			d.errorf(k, "key %q appears twice in %s", k.Value, what)
			continue
		}
		f.vals[k.Value] = v
		f.keys[k.Value] = k
		f.order = append(f.order, k.Value)
	}
	return f
}

// suggest returns " (did you mean X?)" for the known key closest to s, or
// the list of known keys when none is close.
func suggest(s string, known []string) string {
	best, bestDist := "", 4
	for _, k := range known {
		if dist := editDistance(strings.ToLower(s), strings.ToLower(k)); dist < bestDist {
			best, bestDist = k, dist
		}
	}
	if best != "" {
		return fmt.Sprintf(" (did you mean %s?)", best)
	}
	return fmt.Sprintf(" (known keys: %s)", strings.Join(known, ", "))
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// str reads a scalar as text; null is "".
func (d *decoder) str(n *yaml.Node, what string) string {
	n = resolve(n)
	if n == nil || isNull(n) {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, "%s must be a single value", what)
		return ""
	}
	return n.Value
}

// integer reads a scalar integer; def when absent or null.
func (d *decoder) integer(n *yaml.Node, what string, def int64) int64 {
	n = resolve(n)
	if n == nil || isNull(n) {
		return def
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(d.str(n, what), "_", ""), 0, 64)
	if err != nil {
		d.errorf(n, "%s must be an integer, got %q", what, n.Value)
		return def
	}
	return v
}

// boolean reads true or false; def when absent.
func (d *decoder) boolean(n *yaml.Node, what string, def bool) bool {
	n = resolve(n)
	if n == nil || isNull(n) {
		return def
	}
	switch strings.ToLower(d.str(n, what)) {
	case "true":
		return true
	case "false":
		return false
	}
	d.errorf(n, "%s must be true or false, got %q", what, n.Value)
	return def
}

// duration reads a Go duration string such as "10s" or "500ms".
func (d *decoder) duration(n *yaml.Node, what string, def time.Duration) time.Duration {
	n = resolve(n)
	if n == nil || isNull(n) {
		return def
	}
	s := d.str(n, what)
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		d.errorf(n, "%s must be a duration such as 10s or 500ms, got %q", what, s)
		return def
	}
	return v
}

// bytesize reads a size in bytes: an integer or a number with a KiB, MiB
// or GiB (also KB, MB, GB as powers of 1024) suffix.
func (d *decoder) bytesize(n *yaml.Node, what string, def int64) int64 {
	n = resolve(n)
	if n == nil || isNull(n) {
		return def
	}
	s := strings.TrimSpace(d.str(n, what))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 || v > (1<<62)/mult {
		d.errorf(n, "%s must be a size such as 67108864 or 64MiB, got %q", what, n.Value)
		return def
	}
	return v * mult
}

// strList reads a sequence of scalars; a single scalar is a list of one.
func (d *decoder) strList(n *yaml.Node, what string) ([]string, []*yaml.Node) {
	n = resolve(n)
	if n == nil || isNull(n) {
		return nil, nil
	}
	if n.Kind == yaml.ScalarNode {
		return []string{n.Value}, []*yaml.Node{n}
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "%s must be a list", what)
		return nil, nil
	}
	var out []string
	var nodes []*yaml.Node
	for _, it := range n.Content {
		it = resolve(it)
		if it.Kind != yaml.ScalarNode {
			d.errorf(it, "%s: each item must be a single value", what)
			continue
		}
		out = append(out, it.Value)
		nodes = append(nodes, it)
	}
	return out, nodes
}

// props reads a props mapping (ShardingSphere's java.util.Properties):
// scalar keys and values, kept as text; lines has each prop's line.
func (d *decoder) props(n *yaml.Node, what string) (map[string]string, map[string]*yaml.Node) {
	f := d.fields(n, what)
	props := map[string]string{}
	lines := map[string]*yaml.Node{}
	if f == nil {
		return props, lines
	}
	for _, k := range f.order {
		v := resolve(f.vals[k])
		if v.Kind != yaml.ScalarNode {
			d.errorf(v, "%s: %s must be a single value", what, k)
			continue
		}
		if !isNull(v) {
			props[k] = v.Value
		}
		lines[k] = f.keys[k]
	}
	return props, lines
}

func parseRules(data []byte, file string) (*Rules, error) {
	d := &decoder{file: file}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, Errors{yamlError(file, err, data)}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, Errors{{File: file, Message: "empty rules file"}}
	}
	root := resolve(doc.Content[0])
	topKeys := []string{"databaseName", "schemaName", "dataSources", "rules", "server"}
	// ShardingSphere server.yaml keys get an error that says where
	// shardflake's settings go.
	serverYAMLKeys := []string{"props", "mode", "authority", "authentication"}
	top := d.fields(root, "the rules file", append(topKeys, serverYAMLKeys...)...)
	if top == nil {
		return nil, d.errs
	}
	for _, k := range serverYAMLKeys {
		if top.has(k) {
			d.errorf(top.keyNode(k), "%s belongs to ShardingSphere's server.yaml; shardflake reads its settings from the server: section", k)
		}
	}
	r := &Rules{File: file}
	r.DatabaseName = d.str(top.get("databaseName"), "databaseName")
	if schema := d.str(top.get("schemaName"), "schemaName"); schema != "" {
		if r.DatabaseName != "" && r.DatabaseName != schema {
			d.errorf(top.keyNode("schemaName"), "schemaName %q differs from databaseName %q; schemaName is ShardingSphere 5.0's name for databaseName", schema, r.DatabaseName)
		}
		if r.DatabaseName == "" {
			r.DatabaseName = schema
		}
	}
	if r.DatabaseName == "" {
		d.errorf(root, "databaseName is required: the logical schema clients USE")
	}
	d.dataSources(r, top.get("dataSources"), top.keyNode("dataSources"))
	sh := d.rules(r, top.get("rules"))
	d.readwrite(r, sh.readwrite)
	d.server(r, top.get("server"), root)
	if len(d.errs) == 0 {
		d.build(r, sh)
		d.trafficScopes(r)
	}
	if len(d.errs) == 0 {
		d.validate(r, sh)
	}
	if len(d.errs) > 0 {
		return nil, Errors(sortedErrors(d.errs))
	}
	r.Warnings = sortedErrors(d.warns)
	return r, nil
}

// yamlError turns a yaml.v3 syntax error ("yaml: line 3: ...") into a
// Error with the line. An unquoted inline expression inside a flow
// collection ({ key: ds_${0..1} }) is the usual cause of a flow error,
// which YAML reports far from it: the message then names its line and
// says to quote it.
func yamlError(file string, err error, data []byte) *Error {
	e := yamlSyntaxError(file, err)
	if strings.Contains(e.Message, "did not find expected ','") || strings.Contains(e.Message, "flow") {
		if line, expr := unquotedFlowExpression(data); line > 0 {
			e.Message = fmt.Sprintf("inline expression %s unquoted inside { } or [ ], where YAML reads its braces and commas (YAML says: %s, at line %d): quote the value (\"...\")", expr, e.Message, e.Line)
			e.Line = line
		}
	}
	return e
}

// unquotedFlowExpression finds the first line with a ${...} or $->{...}
// outside quotes after an opening { or [ on the same line: an inline
// expression in a flow collection that YAML splits at its braces.
func unquotedFlowExpression(data []byte) (int, string) {
	for i, line := range strings.Split(string(data), "\n") {
		var quote byte
		flow := false
		for j := 0; j < len(line); j++ {
			c := line[j]
			switch {
			case quote != 0:
				if c == quote {
					quote = 0
				}
			case c == '\'' || c == '"':
				quote = c
			case c == '#' && (j == 0 || line[j-1] == ' '):
				j = len(line)
			case c == '$' && (strings.HasPrefix(line[j:], "${") || strings.HasPrefix(line[j:], "$->{")):
				end := strings.IndexByte(line[j:], '}')
				if end < 0 {
					end = len(line) - j - 1
				}
				if flow {
					return i + 1, line[j : j+end+1]
				}
				j += end
			case c == '{' || c == '[':
				flow = true
			}
		}
	}
	return 0, ""
}

func yamlSyntaxError(file string, err error) *Error {
	msg := err.Error()
	e := &Error{File: file, Message: msg}
	rest := strings.TrimPrefix(msg, "yaml: ")
	if strings.HasPrefix(rest, "line ") {
		rest = rest[5:]
		if i := strings.Index(rest, ":"); i > 0 {
			if n, err := strconv.Atoi(rest[:i]); err == nil {
				e.Line = n
				e.Message = strings.TrimSpace(rest[i+1:])
			}
		}
	}
	if ue, ok := err.(*yaml.TypeError); ok && len(ue.Errors) > 0 {
		e.Message = strings.Join(ue.Errors, "; ")
	}
	return e
}
