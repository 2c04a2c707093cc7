package proxy

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestVersionCommentsDifferential: an executable comment runs through
// the proxy when the data sources' MariaDB runs it, and is skipped when
// it skips it: a version above the server's (six digits), a MySQL 5.7 or
// later version after /*! (MikroORM reads indexes with SELECT ... /*!80013
// , expression as expression */ FROM information_schema.statistics),
// /*M! with the server's version. The statements' answers, text and
// prepared, are MariaDB's.
func TestVersionCommentsDifferential(t *testing.T) {
	_, db, ref := inSubqueryEnv(t, "vcomment_ref")
	d := subqueryDiff{t: t, db: db, ref: ref}
	var version string
	if err := ref.QueryRow("SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	id, ok := mariaDBVersionID(version)
	if !ok {
		t.Fatalf("VERSION() %q is not MariaDB's", version)
	}
	for _, q := range []string{
		"SELECT order_id /*!80013 , status */ FROM t_order ORDER BY order_id",
		"SELECT order_id /*!50700 , status */ FROM t_order ORDER BY order_id",
		"SELECT order_id /*!50699 , status */ FROM t_order ORDER BY order_id",
		"SELECT order_id /*M!80013 , status */ FROM t_order ORDER BY order_id",
		fmt.Sprintf("SELECT order_id /*!%06d , status */ FROM t_order ORDER BY order_id", id),
		fmt.Sprintf("SELECT order_id /*!%06d , status */ FROM t_order ORDER BY order_id", id+1),
		fmt.Sprintf("SELECT order_id /*M!%06d , status */ FROM t_order ORDER BY order_id", id),
		fmt.Sprintf("SELECT order_id /*M!%06d , status */ FROM t_order ORDER BY order_id", id+1),
		"SELECT COUNT(*) /*!99999 , MAX(amount) */ FROM t_order",
		"SELECT COUNT(*) FROM t_order WHERE user_id = 3 /*!80000 OR user_id = 4 */",
		"SELECT COUNT(*) FROM t_order WHERE user_id = 3 /*!40000 OR user_id = 4 */",
		// MikroORM's schema generator reading the indexes.
		"select table_name as table_name, index_name as index_name, non_unique as non_unique, column_name as column_name /*!80013 , expression as expression */ from information_schema.statistics where table_schema = database() and table_name in ('t_order_item', 't_order') order by table_name, index_name, seq_in_index",
	} {
		if got := d.same(q); strings.HasPrefix(got, "error") {
			t.Errorf("%s directly: %s; the reference is not what this test assumes", q, got)
		}
	}
	d.same("SELECT order_id /*!80013 , status */ FROM t_order WHERE user_id = ? ORDER BY order_id", 3)
	d.same("SELECT order_id /*M!"+strconv.Itoa(id)+" , status */ FROM t_order WHERE user_id = ? ORDER BY order_id", 3)
}
