package proxy

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// requirePHP returns the PHP command line interpreter after checking that
// it has PDO_MySQL and mysqli, skipping (or failing under CI=true) when it
// has not.
func requirePHP(t *testing.T) string {
	t.Helper()
	return requireCommand(t, "php", "php with pdo_mysql and mysqli (scripts/install-deps.sh installs php-cli and php-mysql)",
		"-r", `exit(extension_loaded("pdo_mysql") && extension_loaded("mysqli") ? 0 : 1);`)
}

// TestPHPApplication runs a small PHP application
// (testdata/php/php_app.php) through the proxy over the default sharded
// rules and directly on one MariaDB: PDO_MySQL with emulated prepares (its
// default), PDO with server-side prepares, and mysqli prepared statements
// (bind_param, send_long_data, get_result) and text queries. Both runs
// print the same, step by step: utf8mb4 from the DSN, NULLs, BIGINT
// UNSIGNED near 2^64, DECIMAL, DATETIME(6), BLOBs with zero bytes,
// lastInsertId of Snowflake keys, transactions rolled back and committed
// over both data sources and the broadcast table, errors with their
// SQLSTATE and number and the connection after them, and scatter queries
// sorted, paged and aggregated.
func TestPHPApplication(t *testing.T) {
	php := requirePHP(t)
	e := startEnv(t, envOptions{})
	e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS php_ref", "CREATE DATABASE php_ref")
	t.Cleanup(func() {
		e.backends[0].Exec(t, "", "DROP DATABASE IF EXISTS php_ref")
		db := e.open(t)
		for _, q := range []string{"DROP TABLE IF EXISTS t_order", "DROP TABLE IF EXISTS t_dict"} {
			if _, err := db.Exec(q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	run := func(host, port, user, password, db string) []string {
		t.Helper()
		cmd := exec.Command(php, filepath.Join("testdata", "php", "php_app.php"), host, port, user, password, db)
		return appOutput(t, cmd, host+":"+port, true)
	}
	want := run(e.backends[0].Host(), fmt.Sprint(e.backends[0].Port()), "root", "", "php_ref")
	referencePrinted(t, "the application", want,
		`pdo-emulated | select 0 | [i1001,i0,"new","12345678901234.123456","18446744073709551615","2024-02-29 23:59:59.123456","héllo 😀 ✓",x000100ff27225c]`,
		`pdo-native | select 0 | [i2001,i0,"new","12345678901234.123456","18446744073709551615","2024-02-29 23:59:59.123456","héllo 😀 ✓",x000100ff27225c]`,
		`pdo-emulated | last insert id multi-row | [i3,["m0","m1","m2"]]`,
		`pdo-native | rollback | [false,false] inside 5/1 0/0 after 0/0 0/0`,
		`pdo-native | duplicate key | PDOException 23000 1062 Duplicate entry '2001' for key 'PRIMARY'`,
		`pdo-emulated | after syntax | [i11,"28"]`,
		`mysqli | commit | 5/1 5/1`,
		`mysqli | multi query | ["9001"] ; affected 2 ; ["2"]`,
		`mysqli | insert id | [true,true,"g0"]`,
	)
	host, port, _ := strings.Cut(e.addr, ":")
	sameSteps(t, run(host, port, "app", "app-secret", "sharding_db"), want)

	// What the transactions left, read on each data source directly: the
	// committed rows of the last mode (mysqli) on their data nodes (but
	// 9012, which its multi_query set to 'mq'), and nothing of the
	// rolled-back ones on any.
	var tx []string
	for i := range e.backends {
		var dict []string
		rows, err := e.backend(t, i).Query("SELECT code FROM t_dict ORDER BY code")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var code string
			rows.Scan(&code)
			dict = append(dict, code)
		}
		rows.Close()
		if got, want := strings.Join(dict, " "), "myc pdo-emulatedc pdo-nativec"; got != want {
			t.Errorf("ds_%d.t_dict holds %s, want %s", i, got, want)
		}
		for j := range 2 {
			rows, err := e.backend(t, i).Query(fmt.Sprintf("SELECT order_id, user_id FROM t_order_%d WHERE status = 'tx' ORDER BY order_id", j))
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var order, user int
				rows.Scan(&order, &user)
				if user%2 != i || order%2 != j {
					t.Errorf("order %d of user %d stored in ds_%d.t_order_%d", order, user, i, j)
				}
				tx = append(tx, fmt.Sprint(order))
			}
			rows.Close()
		}
	}
	slices.Sort(tx)
	if got, want := strings.Join(tx, " "), "9002 9010 9011 9013"; got != want {
		t.Errorf("rows with status tx on the data nodes: %s, want %s", got, want)
	}
}
