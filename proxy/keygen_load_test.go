package proxy

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestKeysTwoProxiesSnowflakeAndUUIDv7 is the two-proxy load of
// TestTicketKeysTwoProxiesFailover and TestSegmentKeysTwoProxiesStoreDown
// for the generators that need no data source: SNOWFLAKE (a worker id per
// proxy) into BIGINT and UUIDV7 into CHAR(36) and BINARY(16) primary
// keys. No key is stored twice across the physical tables and every
// acknowledged insert is stored once. SHARDFLAKE_KEYGEN_LOAD scales it.
func TestKeysTwoProxiesSnowflakeAndUUIDv7(t *testing.T) {
	for _, tc := range []struct {
		table, keyType string
		gens           [2]string
	}{
		{"t_ls", "BIGINT", [2]string{`{ type: SNOWFLAKE, props: { worker-id: 11 } }`, `{ type: SNOWFLAKE, props: { worker-id: 12 } }`}},
		{"t_l7c", "CHAR(36)", [2]string{`{ type: UUIDV7 }`, `{ type: UUIDV7 }`}},
		{"t_l7b", "BINARY(16)", [2]string{`{ type: UUIDV7, props: { column-type: "BINARY(16)" } }`, `{ type: UUIDV7, props: { column-type: "BINARY(16)" } }`}},
	} {
		t.Run(tc.table, func(t *testing.T) {
			var envs []*testEnv
			for _, gen := range tc.gens {
				rules := keygenRules(tc.table, gen)
				if tc.keyType != "BIGINT" {
					// UUIDs are not integers: the table strategy hashes them.
					rules = strings.Replace(rules,
						`t_inline:  { type: INLINE, props: { algorithm-expression: "`+tc.table+`_${id % 2}" } }`,
						`t_inline:  { type: HASH_MOD, props: { sharding-count: 2 } }`, 1)
				}
				envs = append(envs, startEnv(t, envOptions{rules: rules}))
			}
			db := envs[0].open(t)
			for _, q := range []string{"DROP TABLE IF EXISTS " + tc.table,
				"CREATE TABLE " + tc.table + " (id " + tc.keyType + " PRIMARY KEY, user_id INT NOT NULL, note VARCHAR(20))"} {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			start := time.Now()
			goroutines, perG := keygenLoadScale(t)
			ld := runKeygenLoad(t, envs, tc.table, goroutines, perG, nil)
			if len(ld.errs) > 0 {
				t.Fatalf("%d errors, first: %v", len(ld.errs), ld.errs[0])
			}
			if tc.keyType == "BIGINT" {
				checkKeys(t, envs[0], tc.table, ld.keys)
			}
			checkNotes(t, envs[0], tc.table, ld.notes)
			t.Logf("2 proxies × %d goroutines × %d INSERTs in %v: %d acknowledged, none twice, all stored",
				goroutines, perG, time.Since(start).Round(time.Millisecond), len(ld.notes))
		})
	}
}

// checkNotes asserts, by reading every physical table directly, that no
// key is stored twice and that every acknowledged insert (its unique
// note) is stored exactly once, for keys of any type.
func checkNotes(t *testing.T, e *testEnv, table string, notes []string) {
	t.Helper()
	keys := map[string]bool{}
	stored := map[string]int{}
	for ds := 0; ds < 2; ds++ {
		for tb := 0; tb < 2; tb++ {
			rows, err := e.backend(t, ds).Query(fmt.Sprintf("SELECT HEX(id), note FROM %s_%d", table, tb))
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id, note string
				if err := rows.Scan(&id, &note); err != nil {
					t.Fatal(err)
				}
				if keys[id] {
					t.Fatalf("key %s stored twice (ds_%d %s_%d)", id, ds, table, tb)
				}
				keys[id] = true
				stored[note]++
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
		}
	}
	for _, n := range notes {
		if stored[n] != 1 {
			t.Fatalf("acknowledged insert %s is stored %d times", n, stored[n])
		}
	}
	if len(keys) != len(notes) {
		t.Fatalf("%d rows stored, %d inserts acknowledged", len(keys), len(notes))
	}
}
