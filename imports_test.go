package shardflake_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The import graph, as the packages' doc.go files and the README's code
// map describe it. Each of our packages sits on a layer; an import goes to
// a lower layer, or within a family that the table says may import itself
// (router's, config's and algorithm's own sub-packages, the internal helpers). The
// proxy's sub-packages are rooms of their own: none imports another one on
// its layer, or the proxy.
//
//	cmd/..., bench/...       everything (commands)
//	proxy                    the session, command loop, executor, server
//	proxy/<sub>              merge, traffic, ...: one subsystem each
//	proxy/rows               the rows that travel between them
//	proxy/internal/...       wire (packet layouts), sqlarg, sqlvalue, ...
//	router/...               the planner
//	config/...               the rules file and the server's settings
//	algorithm/...            sharding algorithms, strategies, inline expressions
//	idgen/...                key generators
//	internal/...             shared helpers (lexer, test servers)
type layer struct {
	prefix   string // import path below the module, "" for none
	rank     int
	withinOK bool // packages of this family may import each other
}

var layers = []layer{
	{"cmd/", 90, true},
	{"bench/", 90, true},  // benchmark tools (bench/relay imports nothing of ours)
	{"deploy", 90, false}, // Compose files and their tests, no code
	{"proxy", 80, false},
	{"proxy/rows", 60, false},
	{"proxy/internal/", 50, true},
	{"proxy/", 70, false}, // any other sub-package of the proxy
	{"router", 40, true},
	{"config", 30, true},
	{"algorithm", 25, true},
	{"idgen", 20, true},
	{"internal/", 10, true},
}

// layerOf finds rel's layer: an exact prefix match first, then the
// longest family prefix.
func layerOf(rel string) (layer, bool) {
	best, found := layer{}, false
	for _, l := range layers {
		exact := rel == strings.TrimSuffix(l.prefix, "/")
		family := strings.HasSuffix(l.prefix, "/") && strings.HasPrefix(rel, l.prefix) ||
			!strings.HasSuffix(l.prefix, "/") && l.prefix != "proxy" && strings.HasPrefix(rel, l.prefix+"/")
		if exact {
			return l, true
		}
		if family && len(l.prefix) > len(best.prefix) {
			best, found = l, true
		}
	}
	return best, found
}

// family is the group a package belongs to for withinOK: its layer's
// prefix.
func family(rel string) string {
	l, _ := layerOf(rel)
	return l.prefix
}

type listedPackage struct {
	ImportPath string
	Dir        string
	Imports    []string
	GoFiles    []string
	Module     *struct{ Path string }
}

// ourPackages lists the module's packages with their non-test imports.
func ourPackages(t *testing.T) (module string, pkgs []listedPackage) {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if p.Module != nil {
			module = p.Module.Path
		}
		pkgs = append(pkgs, p)
	}
	if module == "" || len(pkgs) < 5 {
		t.Fatalf("go list found %d packages of module %q", len(pkgs), module)
	}
	return module, pkgs
}

// TestImportDirection holds every import between our packages to the
// layers above, and checks that the graph has no cycle.
func TestImportDirection(t *testing.T) {
	module, pkgs := ourPackages(t)
	rel := func(path string) (string, bool) {
		if path == module {
			return "", true
		}
		r, ok := strings.CutPrefix(path, module+"/")
		return r, ok
	}
	graph := map[string][]string{}
	for _, p := range pkgs {
		from, _ := rel(p.ImportPath)
		if len(p.GoFiles) == 0 {
			continue // tests only (this package)
		}
		fl, ok := layerOf(from)
		if !ok {
			t.Errorf("package %s is on no layer: add it to the table in imports_test.go and say where it sits in its doc.go", from)
			continue
		}
		for _, imp := range p.Imports {
			to, ours := rel(imp)
			if !ours {
				continue
			}
			graph[from] = append(graph[from], to)
			tl, ok := layerOf(to)
			switch {
			case !ok:
				// Reported as the importing side of its own entry.
			case tl.rank < fl.rank:
			case tl.rank == fl.rank && fl.withinOK && family(from) == family(to):
			case tl.rank == fl.rank:
				t.Errorf("%s imports %s: the packages of layer %q are rooms of their own and do not import each other", from, to, fl.prefix)
			default:
				t.Errorf("%s imports %s: the imports go from %s (layer %d) down, never up to %s (layer %d)", from, to, fl.prefix, fl.rank, tl.prefix, tl.rank)
			}
		}
	}
	// Go refuses import cycles; this says which one if a vendored or
	// generated layout ever slipped one past the build.
	state := map[string]int{} // 1 visiting, 2 done
	var stack []string
	var visit func(string)
	visit = func(n string) {
		switch state[n] {
		case 1:
			i := slices.Index(stack, n)
			t.Errorf("import cycle: %s -> %s", strings.Join(stack[i:], " -> "), n)
			return
		case 2:
			return
		}
		state[n] = 1
		stack = append(stack, n)
		for _, m := range graph[n] {
			visit(m)
		}
		stack = stack[:len(stack)-1]
		state[n] = 2
	}
	for n := range graph {
		visit(n)
	}
	// The direction the test holds is the one it finds: the proxy's
	// sub-packages exist and are imported by the proxy.
	for _, want := range []string{"proxy/keygen", "proxy/merge", "proxy/metrics", "proxy/rows"} {
		if !slices.Contains(graph["proxy"], want) {
			t.Errorf("proxy does not import %s; update the layer table and the code map", want)
		}
	}
}

// TestDocumentedImports holds each package whose doc.go says "Imports (of
// this module): a, b." to exactly that list (none for "none"), so the
// narrow API a doc.go promises is the one the code has.
func TestDocumentedImports(t *testing.T) {
	module, pkgs := ourPackages(t)
	const marker = "Imports (of this module):"
	checked := 0
	for _, p := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, "doc.go"), nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil || f.Doc == nil {
			continue // no doc.go, or one that cannot say
		}
		doc := strings.Join(strings.Fields(f.Doc.Text()), " ")
		_, list, ok := strings.Cut(doc, marker)
		if !ok {
			continue
		}
		list, _, _ = strings.Cut(list, ".")
		var want []string
		for _, name := range strings.Split(list, ",") {
			if name = strings.TrimSpace(name); name != "" && name != "none" {
				want = append(want, name)
			}
		}
		var got []string
		for _, imp := range p.Imports {
			if r, ours := strings.CutPrefix(imp, module+"/"); ours {
				got = append(got, r)
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s imports %v of this module; its doc.go says %v", rel, got, want)
		}
		checked++
	}
	if checked < 4 {
		t.Errorf("only %d doc.go files state their imports; rows, merge, metrics and keygen do", checked)
	}
}

// packetFiles are the files outside proxy/internal/wire that still read or
// build packet bytes themselves (headers, little-endian fields): the debt
// this test keeps from growing. Moving such code into wire removes its
// line here; code that only moved between files moves its line.
var packetFiles = []string{
	"proxy/greeting.go",
}

// notPackets are files of the proxy's packages that use encoding/binary
// for something else than packets.
var notPackets = map[string]string{
	"proxy/plancache.go": "the plan cache's key holds the sql_mode as 8 bytes",
}

// TestOnlyWireKnowsPackets checks that no package outside
// proxy/internal/wire imports go-mysql's packet package, that only the
// proxy itself uses go-mysql's server (the handshake), and that no file of
// the proxy's packages outside wire reads packet headers (wire.Header*)
// or little-endian fields (encoding/binary) except those in packetFiles;
// proxy/internal/sqlvalue uses encoding/binary for collation weights and
// the files in notPackets for what they say, not packets.
func TestOnlyWireKnowsPackets(t *testing.T) {
	module, pkgs := ourPackages(t)
	const (
		packetPkg = "github.com/go-mysql-org/go-mysql/packet"
		serverPkg = "github.com/go-mysql-org/go-mysql/server"
	)
	var found []string
	for _, p := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		for _, imp := range p.Imports {
			if imp == packetPkg && rel != "proxy/internal/wire" {
				t.Errorf("%s imports %s: packet layouts belong in proxy/internal/wire", rel, packetPkg)
			}
			if imp == serverPkg && rel != "proxy" && rel != "proxy/internal/wire" {
				t.Errorf("%s imports %s: only the proxy runs the handshake", rel, serverPkg)
			}
		}
		if rel != "proxy" && !strings.HasPrefix(rel, "proxy/") || rel == "proxy/internal/wire" || rel == "proxy/internal/sqlvalue" {
			continue
		}
		for _, name := range p.GoFiles {
			file := filepath.Join(p.Dir, name)
			what, err := packetCode(file)
			if err != nil {
				t.Fatal(err)
			}
			path := rel + "/" + name
			if _, ok := notPackets[path]; ok && what == "imports encoding/binary" {
				continue
			}
			switch {
			case what != "" && !slices.Contains(packetFiles, path):
				t.Errorf("%s %s: packet layouts belong in proxy/internal/wire", path, what)
			case what != "":
				found = append(found, path)
			}
		}
	}
	for _, f := range packetFiles {
		if !slices.Contains(found, f) {
			t.Errorf("%s is in packetFiles but no longer reads packets (or moved): take it off the list", f)
		}
	}
}

// packetCode says how file handles packet bytes itself, or "" if it
// does not.
func packetCode(file string) (string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		return "", err
	}
	for _, imp := range f.Imports {
		if imp.Path.Value == `"encoding/binary"` {
			return "imports encoding/binary", nil
		}
	}
	what := ""
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || what != "" {
			return what == ""
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == "wire" && strings.HasPrefix(sel.Sel.Name, "Header") {
			what = fmt.Sprintf("compares packet headers (wire.%s at %s)", sel.Sel.Name, fset.Position(sel.Pos()))
		}
		return true
	})
	return what, nil
}
