package router

import "github.com/pingcap/tidb/pkg/parser/ast"

// selectMerge is the multi-route form of a SELECT: its SQL and merge.
type selectMerge struct {
	tmpl *sqlTemplate
}

func (a *analysis) prepareMerge(sel *ast.SelectStmt) (*selectMerge, error) {
	t, err := buildTemplate(sel)
	if err != nil {
		return nil, err
	}
	return &selectMerge{tmpl: t}, nil
}

func (m *selectMerge) bind(args []any) (*Merge, int64, error) { return nil, -1, nil }
