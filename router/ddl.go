package router

import "github.com/pingcap/tidb/pkg/parser/ast"

func (r *Router) prepareShow(p *Prepared, a *analysis, s *ast.ShowStmt) error {
	return errNotSupported("SHOW not built yet")
}

func (r *Router) prepareDDL(p *Prepared, a *analysis, s ast.StmtNode, h *hints) error {
	return errNotSupported("DDL not built yet")
}
