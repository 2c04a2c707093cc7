package proxy

import (
	"context"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// Transaction variables go by two names: MySQL 5.7.20 added
// transaction_isolation and transaction_read_only and MySQL 8.0 dropped
// tx_isolation and tx_read_only; MariaDB before 11.1 knows only the tx_
// names. Drivers pick the name from the server version the proxy
// announces (Connector/J asks @@transaction_isolation from any 5.7.20 or
// later), so the proxy writes whichever name the data sources know:
// reading (SELECT @@session.transaction_isolation, any number of
// variables, keeping the column names the client asked for) and setting
// (SET SESSION transaction_isolation = ...).

// backendVarName returns the name of system variable name (lower case)
// that a data source of the given flavour knows.
func backendVarName(name string, mariaDB bool) string {
	if mariaDB {
		switch name {
		case "transaction_isolation":
			return "tx_isolation"
		case "transaction_read_only":
			return "tx_read_only"
		}
		return name
	}
	switch name {
	case "tx_isolation":
		return "transaction_isolation"
	case "tx_read_only":
		return "transaction_read_only"
	}
	return name
}

// isMariaDB reports whether a server version string is MariaDB's.
func isMariaDB(version string) bool {
	return strings.Contains(strings.ToLower(version), "mariadb")
}

// mariaDBBackend reports whether data source ds is MariaDB, from the
// version its server announced; a connection is opened first when the
// pool has not connected yet.
func (srv sessionServer) mariaDBBackend(ctx context.Context, ds string) (bool, error) {
	p, err := srv.pool(ds, false)
	if err != nil {
		return false, err
	}
	if v := p.serverVersion(); v != "" {
		return isMariaDB(v), nil
	}
	bcs, err := p.get(ctx, 1)
	if err != nil {
		return false, err
	}
	p.put(bcs...)
	return isMariaDB(p.serverVersion()), nil
}

// renameVars rewrites the transaction variables of a statement for the
// default data source and reports whether it changed it (the caller
// restores the statement with keepFieldNames, so columns keep the names
// the client wrote).
func (srv sessionServer) renameVars(ctx context.Context, n ast.Node) (bool, error) {
	f := &varFinder{}
	n.Accept(f)
	if !f.found {
		return false, nil
	}
	mariaDB, err := srv.mariaDBBackend(ctx, srv.rules.DefaultDataSource)
	if err != nil {
		return false, err
	}
	r := &varRenamer{mariaDB: mariaDB}
	n.Accept(r)
	return r.changed, nil
}

// setVarName returns the name SET writes for system variable name (lower
// case): the one the default data source knows.
func (srv sessionServer) setVarName(ctx context.Context, name string) (string, error) {
	if backendVarName(name, true) == name && backendVarName(name, false) == name {
		return name, nil
	}
	mariaDB, err := srv.mariaDBBackend(ctx, srv.rules.DefaultDataSource)
	if err != nil {
		return "", err
	}
	return backendVarName(name, mariaDB), nil
}

// keepFieldNames gives every select field without an alias its text as
// written for alias, so that a statement the proxy restores from its tree
// returns the column names the client's text would (the restored form
// quotes names: @@`tx_isolation`). String literals and NULL keep none:
// MariaDB labels them by their value (_utf8mb4'x' is x, null is
// NULL), and so does the backend the restored literal. A column keeps
// none either: MariaDB names it by its name as written, without the
// table that qualifies it (o.id is id), as the restored column is.
func keepFieldNames(sel *ast.SelectStmt) {
	if sel.Fields == nil {
		return
	}
	for _, f := range sel.Fields.Fields {
		if f.WildCard != nil || f.AsName.O != "" {
			continue
		}
		if _, column := f.Expr.(*ast.ColumnNameExpr); column {
			continue
		}
		if v, ok := f.Expr.(ast.ValueExpr); ok {
			switch v.GetValue().(type) {
			case string, nil:
				continue
			}
		}
		f.AsName = ast.NewCIStr(fieldName(f))
	}
}

// varFinder looks for a transaction variable under either name.
type varFinder struct{ found bool }

func (f *varFinder) Enter(n ast.Node) (ast.Node, bool) {
	if v, ok := n.(*ast.VariableExpr); ok && v.IsSystem {
		name := strings.ToLower(v.Name)
		if backendVarName(name, true) != name || backendVarName(name, false) != name {
			f.found = true
		}
	}
	return n, f.found
}

func (f *varFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

type varRenamer struct {
	mariaDB bool
	changed bool
}

func (r *varRenamer) Enter(n ast.Node) (ast.Node, bool) { return n, false }

func (r *varRenamer) Leave(n ast.Node) (ast.Node, bool) {
	if v, ok := n.(*ast.VariableExpr); ok && v.IsSystem {
		if name := r.renamed(v); name != "" {
			v.Name = name
			r.changed = true
		}
	}
	return n, true
}

// renamed returns the name v must have on the backend, "" when it keeps
// its own.
func (r *varRenamer) renamed(v *ast.VariableExpr) string {
	name := strings.ToLower(v.Name)
	if to := backendVarName(name, r.mariaDB); to != name {
		return to
	}
	return ""
}
