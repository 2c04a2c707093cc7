package proxy

import (
	"context"
	"testing"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/keygen"
)

// classifySession is a session on the test rules over data sources that
// nothing listens on: classify never reaches one.
func classifySession(t *testing.T) *Session {
	t.Helper()
	rules, err := config.Parse([]byte(`databaseName: sharding_db
server:
  users: [{user: ops, password: x, otherSchemas: true, files: true}]
dataSources:
  ds_0: {url: "jdbc:mysql://127.0.0.1:1/ds_0"}
  ds_1: {url: "jdbc:mysql://127.0.0.1:1/ds_1"}
rules:
`+defaultTestRules), "classify.yaml")
	if err != nil {
		t.Fatal(err)
	}
	keys, closeKeys, err := keygen.Open(context.Background(), rules)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeKeys() })
	srv, err := New(Config{Rules: rules, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	s := newSession(srv)
	s.user, s.db = "ops", "sharding_db"
	s.multiStatements = true
	s.prepared = map[string]sqlPrepared{"p": {sql: "SET @a = 1"}}
	return s
}

// TestClassifyDecidesWhoAnswers: one classify step names who answers each
// kind of statement, parsed or not.
func TestClassifyDecidesWhoAnswers(t *testing.T) {
	s := classifySession(t)
	tests := []struct {
		give string
		want planKind
	}{
		{"SELECT status FROM t_order WHERE user_id = 1", planRouted},
		{"INSERT INTO t_order (user_id, status) VALUES (1, 'x')", planRouted},
		{"SELECT * FROM mysql.user", planRouted}, // the router leaves it to the default data source
		{"CREATE PROCEDURE p() SELECT 1", planRouted},
		{"DO 1", planDataSource},
		{"CALL p()", planCall},
		{"LOAD DATA LOCAL INFILE 'f' INTO TABLE t_plain", planLoadLocal},
		{"LOAD DATA INFILE 'f' INTO TABLE t_plain", planRouted},
		{"CREATE FUNCTION f() RETURNS INT DETERMINISTIC RETURN 1", planRoutine},
		{"SHOW TABLES", planLocal},
		{"DESCRIBE t_order", planLocal},
		{"SELECT DATABASE(), NOW()", planLocal},
		{"SELECT table_name FROM information_schema.tables", planLocal},
		{"SET @a = 1", planSession},
		{"BEGIN", planSession},
		{"COMMIT", planSession},
		{"SAVEPOINT s", planSession},
		{"USE sharding_db", planSession},
		{"PREPARE p FROM 'SELECT 1'", planSession},
		{"EXECUTE p", planSession}, // the SET it names
		{"SET VARIABLE transaction_type = 'XA'", planSession},
		{"SHOW SHARDING TABLE RULES", planAdmin},
		{"PREVIEW SELECT 1", planAdmin},
		{"/* only a comment */", planEmpty},
		{"SELECT 1; SELECT 2", planQuery},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			st := &statement{sql: tt.give, out: textOutput, whole: true}
			if err := s.classify(st); err != nil {
				t.Fatalf("classify: %v", err)
			}
			if st.kind != tt.want {
				t.Errorf("kind %s, want %s", st.kind, tt.want)
			}
		})
	}
	// A prepared execute's plan was made ahead; in the binary protocol a
	// LOAD DATA LOCAL goes to the router, as MariaDB refuses it there.
	st := &statement{sql: "LOAD DATA LOCAL INFILE 'f' INTO TABLE t_plain", out: output{proto: BinaryProtocol}}
	if err := s.classify(st); err != nil || st.kind != planRouted {
		t.Errorf("binary LOAD DATA LOCAL: kind %s, %v; want routed", st.kind, err)
	}
	for _, give := range []string{"", "SELEC 1", "SHOW SHARDING NONSENSE"} {
		st := &statement{sql: give, out: textOutput, whole: true}
		if err := s.classify(st); err == nil {
			t.Errorf("%q: classified as %s, want an error", give, st.kind)
		}
	}
}
