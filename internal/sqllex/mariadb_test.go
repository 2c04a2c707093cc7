package sqllex

import (
	"database/sql"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// codeText is sql as the package says the server reads it: comments
// become a space, executable comments their text without the version.
func codeText(sql string) string {
	var b strings.Builder
	s := NewScanner(sql, Backslash)
	for {
		t, ok := s.Next()
		if !ok {
			return b.String()
		}
		switch {
		case t.Kind == Executable:
			b.WriteString(" " + strings.TrimLeft(t.Body(sql), "0123456789") + " ")
		case t.Kind.Comment():
			b.WriteByte(' ')
		default:
			b.WriteString(t.Text(sql))
		}
	}
}

// TestRulesAgainstMariaDB asks a live MariaDB what the package says:
// a select list with comments means what it means with them removed as
// the package finds them, a string literal holds the bytes Unquote reads
// and ends where the package ends it, and a quoted name is the name
// Unquote reads.
func TestRulesAgainstMariaDB(t *testing.T) {
	srv := mariadbtest.Start(t, mariadbtest.Options{})
	db := srv.Open(t, "")
	db.SetMaxOpenConns(1)
	one := func(q string) (string, error) {
		var v sql.NullString
		err := db.QueryRow(q).Scan(&v)
		return v.String, err
	}

	for _, tt := range []struct {
		give, want string
		comments   int // the comments MariaDB skips (or runs)
	}{
		{"1 -- x\n + 1", "2", 1},
		{"1 --1", "2", 0},
		{"1 --\t1", "1", 1},
		{"1 --\x01 + 1", "1", 1},
		{"1 --\x7f + 1", "1", 1},
		{"1 # x\n + 1", "2", 1},
		{"1 /* + 1 */ + 2", "3", 1},
		{"1 /*! + 1 */", "2", 1},
		{"1 /*!50003 + 1 */", "2", 1},
		{"1 /*M!100000 + 1 */", "2", 1},
		{"1 /*+ x */ + 1", "2", 1},
		{"1 /* /* */ + 1", "2", 1},
		{"'-- x' /* '*/", "-- x", 1},
		{"CONCAT('a /* b', \"c -- d\", 'e''f', \"g\"\"h\", 'i\\'j')", "a /* bc -- de'fg\"hi'j", 0},
	} {
		t.Run(tt.give, func(t *testing.T) {
			want, err := one("SELECT " + tt.give)
			if err != nil || want != tt.want {
				t.Fatalf("MariaDB: %q, %v; the test expects %q", want, err, tt.want)
			}
			n := 0
			for s := NewScanner(tt.give, Backslash); ; {
				tok, ok := s.Next()
				if !ok {
					break
				}
				if tok.Kind.Comment() {
					n++
				}
			}
			if n != tt.comments {
				t.Errorf("the package finds %d comments, want %d", n, tt.comments)
			}
			got, err := one("SELECT " + codeText(tt.give))
			if err != nil || got != want {
				t.Errorf("with the comments the package finds removed, %q gives %q (%v), MariaDB %q", codeText(tt.give), got, err, want)
			}
		})
	}

	for _, give := range []string{`'it''s'`, `'a\'b'`, `"say ""hi"""`, `'tab\there\nline\\'`, `'50\%\_'`, `'\0\Z\b\r'`, `'\x\y'`} {
		t.Run(give, func(t *testing.T) {
			tok := At(give, 0, Backslash)
			if tok.End != len(give) || tok.Unterminated {
				t.Fatalf("token %+v, want the whole text", tok)
			}
			got, err := one("SELECT HEX(" + give + ")")
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.ToUpper(hex.EncodeToString([]byte(Unquote(give, tok, Backslash)))); got != want {
				t.Errorf("MariaDB reads %s, Unquote %s", got, want)
			}
		})
	}

	if _, err := db.Exec("SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')"); err != nil {
		t.Fatal(err)
	}
	for _, give := range []string{`'a\'`, `'a\\b'`, `'it''s\n'`} {
		t.Run("no backslash escapes "+give, func(t *testing.T) {
			tok := At(give, 0, NoBackslashEscapes)
			if tok.End != len(give) || tok.Unterminated {
				t.Fatalf("token %+v, want the whole text", tok)
			}
			got, err := one("SELECT HEX(" + give + ")")
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.ToUpper(hex.EncodeToString([]byte(Unquote(give, tok, NoBackslashEscapes)))); got != want {
				t.Errorf("MariaDB reads %s, Unquote %s", got, want)
			}
		})
	}

	for _, give := range []string{"`a``b`", "`a\\b`", "`x y`"} {
		t.Run("name "+give, func(t *testing.T) {
			tok := At(give, 0, Backslash)
			cols := columns(t, db, "SELECT 1 AS "+give)
			if want := Unquote(give, tok, Backslash); len(cols) != 1 || cols[0] != want {
				t.Errorf("MariaDB names the column %q, Unquote %q", cols, want)
			}
		})
	}
}

// TestRunsAgainstMariaDB: Token.Runs says of each executable comment
// what a live MariaDB does with SELECT 1 <comment>: two columns when it
// runs the comment's ", 2", one when it skips it; the versions around
// the server's own are built from its VERSION().
func TestRunsAgainstMariaDB(t *testing.T) {
	srv := mariadbtest.Start(t, mariadbtest.Options{})
	db := srv.Open(t, "")
	var version string
	if err := db.QueryRow("SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	id := 0
	for _, part := range strings.SplitN(strings.SplitN(version, "-", 2)[0], ".", 3) {
		n, err := strconv.Atoi(part)
		if err != nil {
			t.Fatalf("VERSION() %q: %v", version, err)
		}
		id = id*100 + n
	}
	for _, v := range []string{
		"", "12345", "50699", "50700", "80013", "99999", "000000", "050700",
		strconv.Itoa(id), strconv.Itoa(id + 1), strconv.Itoa(id - 1), strconv.Itoa(id+1) + "0",
	} {
		for _, marker := range []string{"/*!", "/*M!"} {
			give := marker + v + " , 2 */"
			t.Run(give, func(t *testing.T) {
				cols := columns(t, db, "SELECT 1 "+give)
				if got, want := At(give, 0, Backslash).Runs(give, id), len(cols) == 2; got != want {
					t.Errorf("Runs = %v for version %d; MariaDB answers %d columns", got, id, len(cols))
				}
			})
		}
	}
}

// columns returns the names of the columns of q's answer.
func columns(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	return cols
}
