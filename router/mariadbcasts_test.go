package router

import (
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/shardflake/shardflake/internal/sqllex"
)

// TestStandInCasts: MariaDB's CAST and CONVERT types INT, INTEGER and
// INT4 are read with stand-ins the parser knows and restored as SIGNED,
// which MariaDB reads alike; the statements' and select fields' texts,
// which name columns, stay the client's; the same words as names, in
// other functions, in strings and in comments are left alone.
func TestStandInCasts(t *testing.T) {
	tests := []struct {
		give string
		// want is the restored statement; "" for a statement castEdits
		// leaves alone.
		want string
		// fields are the select fields' texts, as the parser cuts them.
		fields []string
	}{
		{
			give:   "SELECT CAST('5' AS INT), cast(a as integer) AS b, CONVERT(c, Int4) FROM t",
			want:   "SELECT CAST('5' AS SIGNED),CAST(`a` AS SIGNED) AS `b`,CONVERT(`c`, SIGNED) FROM `t`",
			fields: []string{"CAST('5' AS INT)", "cast(a as integer) AS b", "CONVERT(c, Int4)"},
		},
		{
			give:   "SELECT CAST(a AS SIGNED INT4), CONVERT(b, UNSIGNED INT4), CAST(c AS UNSIGNED INT) FROM t",
			want:   "SELECT CAST(`a` AS SIGNED),CONVERT(`b`, UNSIGNED),CAST(`c` AS UNSIGNED) FROM `t`",
			fields: []string{"CAST(a AS SIGNED INT4)", "CONVERT(b, UNSIGNED INT4)", "CAST(c AS UNSIGNED INT)"},
		},
		{
			give:   "SELECT SUM(CAST(qty AS INT)) + 1, 'CAST(x AS INT)' /* CAST(x AS INT) */ FROM t WHERE id = CAST('3' AS INT) ORDER BY CONVERT(qty, INTEGER)",
			want:   "SELECT SUM(CAST(`qty` AS SIGNED))+1,'CAST(x AS INT)' FROM `t` WHERE `id`=CAST('3' AS SIGNED) ORDER BY CONVERT(`qty`, SIGNED)",
			fields: []string{"SUM(CAST(qty AS INT)) + 1", "'CAST(x AS INT)' /* CAST(x AS INT) */"},
		},
		{
			give: "INSERT INTO t (id, n) VALUES (CAST(? AS INT), CONVERT('7', INTEGER))",
			want: "INSERT INTO `t` (`id`,`n`) VALUES (CAST(? AS SIGNED),CONVERT('7', SIGNED))",
		},
		{
			give:   "SELECT x FROM (SELECT CAST(a AS INT) FROM t) AS d WHERE x IN (SELECT CAST(b AS INTEGER) FROM u)",
			want:   "SELECT `x` FROM (SELECT CAST(`a` AS SIGNED) FROM `t`) AS `d` WHERE `x` IN (SELECT CAST(`b` AS SIGNED) FROM `u`)",
			fields: []string{"x", "CAST(a AS INT)", "CAST(b AS INTEGER)"},
		},
		{
			give: "CREATE TABLE t (id INT, u UUID, n INT AS (CAST(id AS INT)))",
			want: "CREATE TABLE `t` (`id` INT,`u` UUID,`n` INT GENERATED ALWAYS AS(CAST(`id` AS SIGNED)) VIRTUAL)",
		},
		{give: "SELECT CAST(a AS SIGNED) FROM t"},
		{give: "SELECT 'CAST(a AS INT)', `int` FROM t -- CAST(a AS INT)"},
		{give: "SELECT CONCAT(a, INT) FROM t"},
		{give: "SELECT f(a AS INT) FROM t"},
		{give: "SELECT CONVERT(a USING utf8mb4), CAST(a AS INT8) FROM t"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			edits := castEdits(tt.give, sqllex.Backslash)
			if tt.want == "" {
				if len(edits) != 0 {
					t.Fatalf("edited %v", edits)
				}
				return
			}
			if _, err := ParseWith(parser.New(), tt.give); err == nil {
				t.Fatal("the parser reads it: the case tests nothing")
			}
			stmt, err := ParseOne(tt.give)
			if err != nil {
				t.Fatal(err)
			}
			if got := stmt.Text(); got != tt.give {
				t.Errorf("statement text %q", got)
			}
			var fields selectFields
			stmt.Accept(&fields)
			var texts []string
			for _, f := range fields.list {
				texts = append(texts, f.Text())
			}
			if strings.Join(texts, "\n") != strings.Join(tt.fields, "\n") {
				t.Errorf("field texts %q, want %q", texts, tt.fields)
			}
			got, err := restoreSQL(stmt)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("restored\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestStandInCastsStatements: a query of several statements keeps each
// statement's own text, which the proxy runs one by one.
func TestStandInCastsStatements(t *testing.T) {
	sql := "SELECT CAST('1' AS INT); SELECT 2, CONVERT('3', INTEGER) AS c;SELECT 'x'"
	stmts, ok := ParseStandIn(parser.New(), sql, sqllex.Backslash)
	if !ok {
		t.Fatal("not read")
	}
	var texts []string
	for _, st := range stmts {
		texts = append(texts, strings.TrimSpace(st.Text()))
	}
	want := []string{"SELECT CAST('1' AS INT);", "SELECT 2, CONVERT('3', INTEGER) AS c;", "SELECT 'x'"}
	if strings.Join(texts, "\n") != strings.Join(want, "\n") {
		t.Errorf("statement texts %q, want %q", texts, want)
	}
	var fields selectFields
	for _, st := range stmts {
		st.Accept(&fields)
	}
	if f := fields.list[0]; f.Text() != "CAST('1' AS INT)" || f.Offset != 7 {
		t.Errorf("first field %q at %d", f.Text(), f.Offset)
	}
	if _, ok := stmts[1].(*ast.SelectStmt); !ok {
		t.Errorf("second statement %T", stmts[1])
	}
}

func TestClientOffset(t *testing.T) {
	// "a INTEGER b INT c" edited to "a SIGNED b SIGNED c".
	edits := []textEdit{{start: 2, end: 9, text: "SIGNED"}, {start: 12, end: 15, text: "SIGNED"}}
	sql := "a INTEGER b INT c"
	edited := applyEdits(sql, edits)
	if edited != "a SIGNED b SIGNED c" {
		t.Fatalf("edited %q", edited)
	}
	tests := []struct{ give, want int }{{0, 0}, {2, 2}, {3, -1}, {8, 9}, {9, 10}, {11, 12}, {14, -1}, {17, 15}, {18, 16}, {19, 17}}
	for _, tt := range tests {
		if got := clientOffset(edits, tt.give); got != tt.want {
			t.Errorf("clientOffset(%d) = %d, want %d", tt.give, got, tt.want)
		}
	}
}

// TestCastOperand: a literal cast to an integer is a sharding value only
// where MariaDB's integer is the literal itself.
func TestCastOperand(t *testing.T) {
	tests := []struct {
		give string
		want any // nil with ok false: no operand
		ok   bool
	}{
		{give: "CAST('22' AS INT)", want: int64(22), ok: true},
		{give: "CAST('+22' AS INTEGER)", want: int64(22), ok: true},
		{give: "CONVERT('-22', SIGNED)", want: int64(-22), ok: true},
		{give: "CAST(-22 AS SIGNED INT)", want: int64(-22), ok: true},
		{give: "CAST(22.0 AS INT)", want: int64(22), ok: true},
		{give: "CAST(18446744073709551615 AS UNSIGNED)", want: uint64(18446744073709551615), ok: true},
		{give: "CAST('18446744073709551615' AS UNSIGNED INT)", want: uint64(18446744073709551615), ok: true},
		{give: "CONVERT(7, UNSIGNED INTEGER)", want: uint64(7), ok: true},
		{give: "(CAST('7' AS INT))", want: int64(7), ok: true},
		{give: "CAST(NULL AS INT)", want: nil, ok: true},
		{give: "CAST(18446744073709551615 AS INT)"},  // wraps to -1
		{give: "CAST('9223372036854775808' AS INT)"}, // wraps
		{give: "CAST(-1 AS UNSIGNED)"},               // wraps
		{give: "CAST('-1' AS UNSIGNED)"},             // wraps
		{give: "CAST(1.5 AS INT)"},                   // rounds
		{give: "CAST('1.5' AS INT)"},                 // truncates, warns
		{give: "CAST(' 7' AS INT)"},                  // warns
		{give: "CAST('7x' AS INT)"},                  // warns
		{give: "CAST('' AS INT)"},                    // warns
		{give: "CAST(? AS INT)"},                     // bound later
		{give: "CAST('7' AS CHAR)"},                  // not an integer
		{give: "CAST('7' AS DECIMAL(3,0))"},          // not an integer
		{give: "CAST(CAST('7' AS CHAR) AS INT)"},     // not a literal
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			stmt, err := ParseOne("SELECT " + tt.give)
			if err != nil {
				t.Fatal(err)
			}
			o, ok := operandOf(stmt.(*ast.SelectStmt).Fields.Fields[0].Expr)
			if ok != tt.ok || ok && (o.param >= 0 || o.val != tt.want) {
				t.Errorf("operand %+v %v, want %#v %v", o, ok, tt.want, tt.ok)
			}
		})
	}
}
