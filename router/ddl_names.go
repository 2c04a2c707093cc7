package router

import (
	"fmt"
	"hash/fnv"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Foreign keys and CHECK constraints in CREATE TABLE and ALTER TABLE of a
// sharded table.
//
// InnoDB keeps foreign-key names per database (MySQL 8 its CHECK names
// too), so the one name a migration tool gives a constraint collides on
// the second physical table of a data source (1005 errno 121; 3822 for a
// CHECK on MySQL 8). Each physical table's named foreign keys and CHECK
// constraints are named <name>_<physical table> instead (ShardingSphere's
// spelling), and the proxy strips the suffix where it shows constraints
// (SHOW CREATE TABLE, information_schema). A name too long for the suffix
// is shortened first (fitConstraintName), and shown shortened. An unnamed foreign key gets
// InnoDB's own per-table name (<physical>_ibfk_N). Index names are kept:
// their scope is the table.
//
// What a foreign key references must be on the data source of every
// physical table that references it: a binding table's paired data node,
// a broadcast table (on every data source), or an unsharded table when
// all of them are on the default data source. Anything else is refused
// before any data node changes.

// constraintName is a name hole: the client's constraint name, suffixed
// per route with the physical name of the table of hole table.
type constraintName struct {
	name  string
	table int // the hole of the table the constraint belongs to
	// innoDB is the _ibfk_N of a name in InnoDB's form for an unnamed
	// foreign key, <logical table>_ibfk_N (what the proxy shows for the
	// physical table's <physical table>_ibfk_N): the hole is filled with
	// <physical table>_ibfk_N, not suffixed, so DROP FOREIGN KEY under
	// the name a client read back from information_schema (Sequelize's
	// sync({ alter: true })) finds the constraint.
	innoDB string
}

// innoDBForeignKey returns the _ibfk_N of name when name is
// <table>_ibfk_N, InnoDB's name for table's N-th unnamed foreign key.
func innoDBForeignKey(name, table string) (string, bool) {
	if len(name) <= len(table) || !strings.EqualFold(name[:len(table)], table) {
		return "", false
	}
	rest := name[len(table):]
	const mark = "_ibfk_"
	if len(rest) <= len(mark) || !strings.EqualFold(rest[:len(mark)], mark) {
		return "", false
	}
	for _, c := range rest[len(mark):] {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return rest, true
}

// maxIdentifier is the longest name MariaDB and MySQL accept.
const maxIdentifier = 64

// minShortened is the fewest characters of a name kept when
// fitConstraintName shortens it.
const minShortened = 8

// fitConstraintName returns the name that stands for the client's
// constraint name on physical tables that leave room characters for it:
// name itself when it fits, else its first characters, an underscore and 8
// hex digits of its FNV-1a hash, room characters in all. Migration tools
// write names up to MariaDB's 64 characters that the client cannot choose
// (Django's <table>_<column>_<hash>_fk_<table>_<column>), which the
// <name>_<physical table> suffix would push past 64; the shortened name is
// the same for the same name, so ALTER TABLE ... DROP FOREIGN KEY finds
// it under the client's name and under the one the proxy shows. ok is
// false when the room cannot hold a shortened name.
func fitConstraintName(name string, room int) (fitted string, ok bool) {
	n := utf8.RuneCountInString(name)
	if n <= room {
		return name, true
	}
	keep := room - 9 // "_" and 8 hex digits
	if keep < minShortened {
		return "", false
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	cut := 0
	for i := range name {
		if keep == 0 {
			cut = i
			break
		}
		keep--
	}
	return fmt.Sprintf("%s_%08x", name[:cut], h.Sum32()), true
}

// ConstraintSuffix returns the name the physical table physical gives the
// constraint the client calls name.
func ConstraintSuffix(name, physical string) string { return name + "_" + physical }

// prepareConstraints checks the foreign keys of a CREATE or ALTER TABLE
// and puts name holes where a sharded table's constraint names are.
func (r *Router) prepareConstraints(a *analysis, stmt ast.StmtNode) error {
	var target *ast.TableName
	var adds, checks []*ast.Constraint // checks: ALTER/DROP CHECK
	var drops []*ast.AlterTableSpec
	switch s := stmt.(type) {
	case *ast.CreateTableStmt:
		target = s.Table
		for _, c := range s.Constraints {
			if c.Tp == ast.ConstraintForeignKey || c.Tp == ast.ConstraintCheck {
				adds = append(adds, c)
			}
		}
	case *ast.AlterTableStmt:
		target = s.Table
		for _, spec := range s.Specs {
			switch {
			case spec.Tp == ast.AlterTableAddConstraint && spec.Constraint != nil &&
				(spec.Constraint.Tp == ast.ConstraintForeignKey || spec.Constraint.Tp == ast.ConstraintCheck):
				adds = append(adds, spec.Constraint)
			case spec.Tp == ast.AlterTableDropForeignKey:
				drops = append(drops, spec)
			case (spec.Tp == ast.AlterTableDropCheck || spec.Tp == ast.AlterTableAlterCheck) && spec.Constraint != nil:
				checks = append(checks, spec.Constraint)
			}
		}
	default:
		return nil
	}
	if len(adds) == 0 && len(drops) == 0 && len(checks) == 0 {
		return nil
	}
	owner := a.refOf(target)
	if owner == nil {
		return nil
	}
	for _, c := range adds {
		if c.Refer == nil || c.Refer.Table == nil {
			continue
		}
		if err := r.checkReference(owner, a.refOf(c.Refer.Table)); err != nil {
			return err
		}
	}
	if owner.kind != refSharded {
		return nil
	}
	longest := 0
	for _, dn := range owner.info.rule.DataNodes {
		longest = max(longest, len(dn.Table))
	}
	hole := func(name string) (string, error) {
		if utf8.RuneCountInString(name) > maxIdentifier {
			return "", newError(CodeTooLongIdent, "42000", "Identifier name '%s' is too long", name)
		}
		if suffix, ok := innoDBForeignKey(name, owner.name); ok && longest+len(suffix) <= maxIdentifier {
			a.names = append(a.names, constraintName{name: name, table: owner.hole, innoDB: suffix})
			return marker(holeName, len(a.names)-1), nil
		}
		room := maxIdentifier - longest - 1
		fitted, ok := fitConstraintName(name, room)
		if !ok {
			return "", newError(CodeTooLongIdent, "42000", "Identifier name '%s' is too long: sharded table %s names it %s on its physical tables, %d characters past MariaDB's %d; choose a name of at most %d characters",
				name, owner.orig, ConstraintSuffix(name, "<physical table>"), utf8.RuneCountInString(name)-room, maxIdentifier, room)
		}
		a.names = append(a.names, constraintName{name: fitted, table: owner.hole})
		return marker(holeName, len(a.names)-1), nil
	}
	var err error
	for _, c := range adds {
		if c.Name != "" {
			if c.Name, err = hole(c.Name); err != nil {
				return err
			}
		}
	}
	for _, spec := range drops {
		if spec.Name, err = hole(spec.Name); err != nil {
			return err
		}
	}
	for _, c := range checks {
		if c.Name, err = hole(c.Name); err != nil {
			return err
		}
	}
	return nil
}

// checkReference refuses a foreign key from owner to referenced that a
// data node could not hold: the referenced rows must be on the same
// data source as each referencing physical table.
func (r *Router) checkReference(owner, referenced *tableRef) error {
	if referenced == nil {
		return nil
	}
	switch owner.kind {
	case refSharded:
		switch referenced.kind {
		case refSharded:
			if referenced.name == owner.name {
				return nil // a self-reference stays in each physical table
			}
			if owner.info.group < 0 || owner.info.group != referenced.info.group {
				return errNotSupported("a foreign key from sharded table %s to sharded table %s is not supported: they are not binding tables, so a row's parent may live on another data node; declare them in one bindingTables group, or drop the constraint", owner.orig, referenced.orig)
			}
		case refSingle:
			for _, dn := range owner.info.rule.DataNodes {
				if dn.DataSource != r.defaultDS {
					return errNotSupported("a foreign key from sharded table %s to unsharded table %s is not supported: %s has data nodes on %s, and %s lives on the default data source %s only; make %s a broadcast table, or drop the constraint", owner.orig, referenced.orig, owner.orig, dn.DataSource, referenced.orig, r.defaultDS, referenced.orig)
				}
			}
		}
	case refBroadcast:
		switch referenced.kind {
		case refSharded:
			return errNotSupported("a foreign key from broadcast table %s to sharded table %s is not supported: each data source holds only part of %s; drop the constraint", owner.orig, referenced.orig, referenced.orig)
		case refSingle:
			if len(r.rules.DataSources) > 1 {
				return errNotSupported("a foreign key from broadcast table %s to unsharded table %s is not supported: %s lives on the default data source only; make %s a broadcast table too, or drop the constraint", owner.orig, referenced.orig, referenced.orig, referenced.orig)
			}
		}
	case refSingle:
		if referenced.kind == refSharded {
			return errNotSupported("a foreign key from unsharded table %s to sharded table %s is not supported: the default data source holds only part of %s; drop the constraint", owner.orig, referenced.orig, referenced.orig)
		}
	}
	return nil
}

// refOf returns the reference whose name node is tn, or nil.
func (a *analysis) refOf(tn *ast.TableName) *tableRef {
	for _, ref := range a.refs {
		if ref.tn == tn {
			return ref
		}
	}
	for _, ref := range a.refs {
		if strings.EqualFold(ref.tn.Name.O, tn.Name.O) && strings.EqualFold(ref.tn.Schema.O, tn.Schema.O) {
			return ref
		}
	}
	return nil
}

// fillName writes the physical name of name hole id for the route whose
// data node of each hole is nodes[hole].
func (a *analysis) fillName(b *strings.Builder, id int, nodes []int) {
	n := a.names[id]
	physical := a.sharded[n.table].info.rule.DataNodes[nodes[n.table]].Table
	if n.innoDB != "" {
		writeName(b, physical+n.innoDB)
		return
	}
	writeName(b, ConstraintSuffix(n.name, physical))
}
