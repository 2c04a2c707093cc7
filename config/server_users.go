package config

import (
	"slices"

	"gopkg.in/yaml.v3"
)

// User is one account clients log in with, and what it may do.
type User struct {
	Name     string
	Password string
	Privileges
}

// Privileges say what a proxy user may do. The zero value (apart from
// Schemas, which Load fills in with databaseName) is an application
// account: read and write the logical tables of its schemas, create and
// alter them, nothing else. Each field is a grant on top.
type Privileges struct {
	// Schemas are the logical schemas the user may use (server.users
	// schemas:, default: databaseName). A user may log in without one,
	// but then reaches no table.
	Schemas []string
	// ReadOnly allows only statements that read (access: read-only).
	ReadOnly bool
	// Hints allows routing hints: SHARDINGSPHERE_HINT (sharding values,
	// DATA_SOURCE_NAME) and the shardflake: slice hint, which route a
	// statement somewhere its WHERE clause would not (hints: true).
	Hints bool
	// OtherSchemas allows statements on what lies outside the logical
	// view: mysql.*, performance_schema.*, sys.*, the data sources' own
	// databases, information_schema tables other than the logical ones,
	// CALL, and SHOW statements about the servers (otherSchemas: true).
	OtherSchemas bool
	// Files allows statements that read or write files on the data
	// sources' hosts: SELECT ... INTO OUTFILE/DUMPFILE, LOAD_FILE(),
	// LOAD DATA INFILE without LOCAL (files: true).
	Files bool
	// TrafficAdmin allows changing traffic rules at run time: ALTER,
	// ENABLE and DISABLE TRAFFIC RULE (trafficAdmin: true).
	TrafficAdmin bool
	// RulesAdmin allows reloading the rules at run time: RELOAD RULES
	// and PREVIEW RELOAD (rulesAdmin: true).
	RulesAdmin bool
}

// MayUse reports whether the user may use logical schema name.
func (p *Privileges) MayUse(name string) bool { return slices.Contains(p.Schemas, name) }

// Access levels of server.users access:.
const (
	accessReadWrite = "read-write"
	accessReadOnly  = "read-only"
)

func userKeys() []string {
	return []string{"user", "password", "schemas", "access", "hints", "otherSchemas", "files", "trafficAdmin", "rulesAdmin"}
}

// users decodes server.users. schema is the logical schema, every user's
// default.
func (d *decoder) users(s *Server, f *fieldSet, schema string) {
	n := resolve(f.get("users"))
	if n == nil || isNull(n) || n.Kind == yaml.SequenceNode && len(n.Content) == 0 {
		d.errorf(f.keyNode("users"), "server.users is required: at least one {user, password} clients log in with")
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "server.users must be a list of {user, password}")
		return
	}
	seen := map[string]bool{}
	for _, it := range n.Content {
		u := d.fields(it, "server.users item", userKeys()...)
		if u == nil {
			continue
		}
		name := d.str(u.get("user"), "server.users user")
		if name == "" {
			d.errorf(u.node, "server.users: user is required")
			continue
		}
		if seen[name] {
			d.errorf(u.get("user"), "server.users: user %q appears twice", name)
		}
		seen[name] = true
		user := User{Name: name, Password: d.str(u.get("password"), "server.users password")}
		d.privileges(&user.Privileges, u, name, schema)
		s.Users = append(s.Users, user)
	}
}

// privileges decodes one user's grants; what the entry leaves out is an
// application account's.
func (d *decoder) privileges(p *Privileges, u *fieldSet, name, schema string) {
	p.Schemas = []string{schema}
	if u.has("schemas") {
		schemas, nodes := d.strList(u.get("schemas"), "server.users schemas")
		p.Schemas = []string{}
		for i, sc := range schemas {
			if sc != schema {
				d.errorf(nodes[i], "server.users %q: schemas names %q, which is not a logical schema (this file's databaseName is %q)", name, sc, schema)
				continue
			}
			if !slices.Contains(p.Schemas, sc) {
				p.Schemas = append(p.Schemas, sc)
			}
		}
	}
	switch a := d.str(u.get("access"), "server.users access"); a {
	case "", accessReadWrite:
	case accessReadOnly:
		p.ReadOnly = true
	default:
		d.errorf(u.get("access"), "server.users %q: access %q: want %s or %s", name, a, accessReadWrite, accessReadOnly)
	}
	p.Hints = d.boolean(u.get("hints"), "server.users hints", false)
	p.OtherSchemas = d.boolean(u.get("otherSchemas"), "server.users otherSchemas", false)
	p.Files = d.boolean(u.get("files"), "server.users files", false)
	p.TrafficAdmin = d.boolean(u.get("trafficAdmin"), "server.users trafficAdmin", false)
	p.RulesAdmin = d.boolean(u.get("rulesAdmin"), "server.users rulesAdmin", false)
}
