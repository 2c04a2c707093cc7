package proxy

import (
	"regexp"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/sqllex"
)

// oldVersionedComment is how routines.go read executable comments before
// internal/sqllex: a regexp that blanked out every /*!NNNNN and */.
var oldVersionedComment = regexp.MustCompile(`/\*!\d*|\*/`)

// FuzzRoutineOfUnchanged: routineOf recognises what it did when it read
// executable comments with a regexp, on statements without quotes or
// other comments (where the regexp also blanked a */ or /*! inside a
// string or comment, and knew no /*M!).
func FuzzRoutineOfUnchanged(f *testing.F) {
	for _, s := range []string{
		"/*!50003 CREATE*/ /*!50017 DEFINER=root@localhost*/ /*!50003 TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET @a = 1 */",
		"CREATE FUNCTION f() RETURNS INT RETURN 1", "DROP TRIGGER IF EXISTS tr", "/*!50003 DROP PROCEDURE p */",
		"CREATE DEFINER = CURRENT_USER() PROCEDURE p() BEGIN SIGNAL SQLSTATE '45000'; END",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		if strings.ContainsAny(sql, "'\"`#") || strings.Contains(sql, "--") || strings.Contains(sql, "/*M!") {
			t.Skip("quotes or comments")
		}
		if rest := sqllex.ExecutableText(sql, sqllex.Backslash); strings.Contains(rest, "/*") || strings.Contains(rest, "*/") {
			t.Skip("a comment that is not executable, or a */ outside one")
		}
		text := oldVersionedComment.ReplaceAllString(sql, " ")
		m := routineHead.FindStringSubmatch(text + " ")
		wantOK := m != nil
		kind, create, ok := routineOf(sql)
		if ok != wantOK {
			t.Fatalf("routineOf(%q) ok = %v, was %v", sql, ok, wantOK)
		}
		if ok && create == strings.EqualFold(strings.Fields(text)[0], "DROP") {
			t.Fatalf("routineOf(%q) create = %v", sql, create)
		}
		if ok && kind == routineCreateTrigger && (triggerTable.FindStringSubmatch(text) == nil) != (triggerTable.FindStringSubmatch(oldVersionedComment.ReplaceAllString(sql, " ")) == nil) {
			t.Fatalf("trigger table of %q found differently", sql)
		}
	})
}
