package proxy

import (
	"context"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"

	"github.com/shardflake/shardflake/internal/sqllex"
	"github.com/shardflake/shardflake/router"
)

// explain answers EXPLAIN (or DESCRIBE) of a statement, as
// ShardingSphere-Proxy does: the statement is planned as it would run,
// without running it, each of its routes' SQL is explained by its data
// source, and the rows of those EXPLAINs come back one after another, in
// the routes' order, under MariaDB's own columns. The table column is
// what each route's SQL calls the table: a SELECT's alias, by default the
// logical name; a write's physical table.
// PREVIEW says which data node each route reads. EXPLAIN FORMAT=JSON
// answers one document, so it is refused for a statement of several
// routes; so are the statements that run in steps (an UPDATE that may
// move rows, an IN subquery evaluated first). EXPLAIN PARTITIONS or
// EXTENDED, in sql (the statement's text), explains each route so.
func (s *Session) explain(ctx context.Context, n *ast.ExplainStmt, sql string, out output) error {
	if n.Stmt == nil {
		return &NotSupportedError{What: "this EXPLAIN"}
	}
	_, word := explainWord(sql, s.lexMode())
	var b strings.Builder
	if err := n.Stmt.Restore(format.NewRestoreCtx(restoreFlags, &b)); err != nil {
		return &InternalError{Msg: "restore EXPLAIN's statement: " + err.Error()}
	}
	sql = b.String()
	stmts, err := s.parse(sql)
	if err != nil || len(stmts) != 1 {
		return &InternalError{Msg: "EXPLAIN's statement does not parse again"}
	}
	// The user needs what running the statement needs.
	if err := s.access().authorize(stmts[0], sql); err != nil {
		return err
	}
	if err := s.srv.tempTableError(stmts[0]); err != nil {
		return err
	}
	plan, err := s.previewPlan(stmts[0], sql)
	if err == errPreviewProxy {
		return &NotSupportedError{What: "EXPLAIN of statements the proxy answers without routing them"}
	}
	if err != nil {
		return err
	}
	if plan.Move != nil || plan.First != nil || plan.Fill != nil {
		return &NotSupportedError{What: "EXPLAIN of a statement the proxy runs in steps (an UPDATE that may move rows between data nodes, an IN subquery evaluated first, an INSERT ... SELECT read first)"}
	}
	prefix := "EXPLAIN "
	if n.Analyze {
		prefix += "ANALYZE "
	}
	if word != "" {
		prefix += word + " "
	}
	switch f := strings.ToLower(n.Format); f {
	case "", "row", "traditional":
	default:
		if len(plan.Routes) > 1 {
			return &NotSupportedError{What: "EXPLAIN FORMAT=" + n.Format + " of a statement over several data nodes: each answers a document of its own (EXPLAIN shows them as rows, PREVIEW lists the routes)"}
		}
		prefix += "FORMAT=" + f + " "
	}
	var cols []*mysql.Field
	var rows []Row
	for _, r := range plan.Routes {
		one := &router.Plan{Kind: router.KindSelect, Type: router.RouteSingle, Routes: []router.Route{{DataSource: r.DataSource, SQL: prefix + r.SQL, Args: r.Args}}}
		res, err := s.executePlan(ctx, one, poolSource{s}, false, TextProtocol)
		if err != nil {
			return err
		}
		if res.rows == nil {
			return &InternalError{Msg: "EXPLAIN returned no result set"}
		}
		if cols == nil {
			if cols, err = streamColumns(res.rows); err != nil {
				res.rows.Close()
				return err
			}
		}
		got, err := drain(res.rows)
		if err != nil {
			return err
		}
		rows = append(rows, got...)
	}
	return s.writeRows(newMemStream(cols, rows), out)
}

// explainWord reads MariaDB's EXPLAIN PARTITIONS (pt-visual-explain
// writes EXPLAIN /*!50115 PARTITIONS*/ SELECT ...) and EXPLAIN EXTENDED
// (its filtered column; DESCRIBE and DESC too), whose words the parser
// does not know: it returns the text without the word, executable
// comments opened, for the parser, and the word in capitals, "" when sql
// is not such a statement.
func explainWord(sql string, mode sqllex.Mode) (string, string) {
	text := sqllex.ExecutableText(sql, mode)
	word := func(i int) (sqllex.Token, bool) {
		i, _ = sqllex.SkipSpace(text, i, mode)
		if i == len(text) {
			return sqllex.Token{}, false
		}
		t := sqllex.At(text, i, mode)
		return t, t.Kind == sqllex.Word
	}
	verb, ok := word(0)
	if !ok {
		return "", ""
	}
	switch strings.ToUpper(verb.Text(text)) {
	case "EXPLAIN", "DESCRIBE", "DESC":
	default:
		return "", ""
	}
	w, ok := word(verb.End)
	if !ok {
		return "", ""
	}
	switch kw := strings.ToUpper(w.Text(text)); kw {
	case "PARTITIONS", "EXTENDED":
		return text[:w.Start] + text[w.End:], kw
	}
	return "", ""
}
