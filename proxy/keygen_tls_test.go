package proxy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// TestKeyGeneratorsOverTLS: SEGMENT and TICKET generators whose stores,
// like the data sources, are on a server that refuses connections without
// TLS take their keys over TLS, as the URLs' sslMode says; so does the
// MAX(key) guard over the data sources the generated keys go to.
func TestKeyGeneratorsOverTLS(t *testing.T) {
	b, ca := startTLSOnlyServer(t, "shardflake-keygen-ca", "ids", "tickets")
	store := func(db string) string {
		return fmt.Sprintf("jdbc:mysql://%s/%s?sslMode=VERIFY_IDENTITY&serverSslCert=%s", b.Addr(), db, ca.path)
	}
	tlsDS := func(i int) string {
		return fmt.Sprintf(`  ds_%d: { url: "jdbc:mysql://%s/kgtls_%d?sslMode=VERIFY_IDENTITY", username: root, password: "", tls: { ca: %s } }`, i, b.Addr(), i, ca.path)
	}
	for _, tc := range []struct{ name, gen string }{
		{"segment", fmt.Sprintf(`{ type: SEGMENT, props: { url: "%s", username: root, step: 10 } }`, store("ids"))},
		{"ticket", fmt.Sprintf(`{ type: TICKET, props: { urls: "%s", username: root } }`, store("tickets"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rules := fmt.Sprintf(`databaseName: sharding_db
server:
  listen: 127.0.0.1:0
  metricsListen: 127.0.0.1:1
  users:
    - { user: app, password: app-secret, hints: true, otherSchemas: true, rulesAdmin: true }
dataSources:
%s
%s
rules:
%s`, tlsDS(0), tlsDS(1), keygenRules("t_kt", tc.gen))
			e := startOpsEnv(t, opsOptions{backends: []*mariadbtest.Server{b, b}, prefix: "kgtls", rules: rules})
			createKeyTable(t, e.testEnv, "t_kt")
			db := e.open(t)
			// A row written before: the guard reads it over TLS and
			// refuses keys below it until ADOPT (which reads it too)
			// moves the generator above it.
			if _, err := db.Exec("INSERT INTO t_kt (id, user_id, note) VALUES (5000, 1, 'old')"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("INSERT INTO t_kt (user_id, note) VALUES (1, 'refused')"); err == nil || !strings.Contains(err.Error(), "already holds keys up to 5000") {
				t.Fatalf("a generated key below the table's 5000: %v, want the guard's refusal", err)
			}
			if _, err := db.Exec("ADOPT SHARDING KEY GENERATOR FOR t_kt"); err != nil {
				t.Fatalf("ADOPT: %v", err)
			}
			for i := range 20 {
				if _, err := db.Exec("INSERT INTO t_kt (user_id, note) VALUES (?, 'new')", i); err != nil {
					t.Fatalf("INSERT %d with a generated key: %v", i, err)
				}
			}
			var n, distinct, below int
			if err := db.QueryRow("SELECT COUNT(*), COUNT(DISTINCT id), SUM(id <= 5000) FROM t_kt WHERE note = 'new'").Scan(&n, &distinct, &below); err != nil {
				t.Fatal(err)
			}
			if n != 20 || distinct != 20 || below != 0 {
				t.Fatalf("generated keys: %d rows, %d distinct, %d at or below the existing 5000", n, distinct, below)
			}
		})
	}
}
