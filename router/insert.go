package router

import "github.com/pingcap/tidb/pkg/parser/ast"

func (r *Router) prepareInsert(p *Prepared, a *analysis, s *ast.InsertStmt, h *hints) error {
	return errNotSupported("INSERT not built yet")
}
