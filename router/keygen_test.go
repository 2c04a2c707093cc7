package router

import (
	"regexp"
	"strings"
	"testing"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/idgen"
)

const keygenRules = `
databaseName: sharding_db
dataSources:
  ds_0: { url: "jdbc:mysql://127.0.0.1:3306/ds_0", username: root }
  ds_1: { url: "jdbc:mysql://127.0.0.1:3306/ds_1", username: root }
rules:
- !SHARDING
  tables:
    t_doc:
      actualDataNodes: ds_${0..1}.t_doc
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: db}}
      keyGenerateStrategy: {column: doc_id, keyGeneratorName: v7bin}
    t_note:
      actualDataNodes: ds_${0..1}.t_note
      databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: db}}
      keyGenerateStrategy: {column: note_id, keyGeneratorName: v4}
    t_ticket:
      actualDataNodes: ds_${0..1}.t_ticket_${0..3}
      databaseStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: db_id}}
      tableStrategy: {standard: {shardingColumn: id, shardingAlgorithmName: t_id}}
      keyGenerateStrategy: {column: id, keyGeneratorName: tickets}
  shardingAlgorithms:
    db: {type: INLINE, props: {algorithm-expression: "ds_${user_id % 2}"}}
    db_id: {type: INLINE, props: {algorithm-expression: "ds_${id % 2}"}}
    t_id: {type: INLINE, props: {algorithm-expression: "t_ticket_${id % 4}"}}
  keyGenerators:
    v7bin: {type: UUIDv7, props: {column-type: "BINARY(16)"}}
    v4: {type: UUID}
    tickets: {type: TICKET, props: {urls: "jdbc:mysql://127.0.0.1:1/t,jdbc:mysql://127.0.0.1:2/t"}}
`

// listKeys is a TICKET-like generator: keys step by 2 (one server of two).
type listKeys struct {
	next  int64
	calls int
}

func (l *listKeys) MaxBatch() int { return 3 }

func (l *listKeys) NextKeys(dst []int64) error {
	l.calls++
	for i := range dst {
		dst[i] = l.next
		l.next += 2
	}
	return nil
}

func keygenRouter(t *testing.T) (*Router, *listKeys) {
	t.Helper()
	rules, err := config.Parse([]byte(keygenRules), "keygen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := rules.KeyGenerators["v7bin"].Type; got != idgen.TypeUUIDv7 {
		t.Fatalf("type %q, want the canonical %s", got, idgen.TypeUUIDv7)
	}
	v7, _ := idgen.NewUUIDv7(rules.KeyGenerators["v7bin"].Props)
	v4, _ := idgen.NewUUIDv4(rules.KeyGenerators["v4"].Props)
	tickets := &listKeys{next: 101}
	r, err := New(rules, map[string]idgen.KeyGenerator{"v7bin": v7, "v4": v4, "tickets": tickets})
	if err != nil {
		t.Fatal(err)
	}
	return r, tickets
}

func TestInsertUUIDKeys(t *testing.T) {
	r, _ := keygenRouter(t)
	plan := bind(t, prepare(t, r, "INSERT INTO t_doc (user_id, body) VALUES (1, 'a'), (1, 'b')"))
	if plan.Keys != nil {
		t.Fatalf("UUID keys reported as LAST_INSERT_ID: %+v", plan.Keys)
	}
	bin := regexp.MustCompile(`X'([0-9a-f]{32})'`)
	got := bin.FindAllStringSubmatch(plan.Routes[0].SQL, -1)
	if len(plan.Routes) != 1 || len(got) != 2 {
		t.Fatalf("routes %+v, want one route with two X'...' keys", plan.Routes)
	}
	for _, m := range got {
		if m[1][12] != '7' {
			t.Errorf("key %s has version nibble %c, want 7", m[1], m[1][12])
		}
	}
	if got[0][1] >= got[1][1] {
		t.Errorf("keys %s, %s not increasing", got[0][1], got[1][1])
	}

	plan = bind(t, prepare(t, r, "INSERT INTO t_note (user_id, note_id) VALUES (2, NULL)"))
	text := regexp.MustCompile(`'[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'`)
	if !text.MatchString(plan.Routes[0].SQL) || plan.Routes[0].DataSource != "ds_0" {
		t.Fatalf("route %+v, want ds_0 with a quoted v4 UUID", plan.Routes[0])
	}
}

func TestInsertListKeysRouteEachRow(t *testing.T) {
	r, tickets := keygenRouter(t)
	var rows []string
	for i := 0; i < 5; i++ {
		rows = append(rows, "('x')")
	}
	plan := bind(t, prepare(t, r, "INSERT INTO t_ticket (v) VALUES "+strings.Join(rows, ",")))
	if tickets.calls != 2 {
		t.Fatalf("5 keys with MaxBatch 3 took %d calls, want 2", tickets.calls)
	}
	if plan.Keys == nil || plan.Keys.First != 101 || plan.Keys.Count != 5 {
		t.Fatalf("keys %+v, want the first ticket 101 and 5 keys", plan.Keys)
	}
	// Odd tickets only (one server of two, or the other one down): every
	// row goes to ds_1, and id % 4 reaches only tables 1 and 3.
	var got []string
	for _, rt := range plan.Routes {
		got = append(got, rt.DataSource+": "+rt.SQL)
	}
	want := []string{
		"ds_1: INSERT INTO `t_ticket_1` (`v`,`id`) VALUES ('x',101),('x',105),('x',109)",
		"ds_1: INSERT INTO `t_ticket_3` (`v`,`id`) VALUES ('x',103),('x',107)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("routes\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestUUIDKeyRoutedByIntegersWarns(t *testing.T) {
	rules, err := config.Parse([]byte(keygenRules), "keygen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range rules.Warnings {
		if strings.Contains(w.Error(), "computes with integers") {
			t.Fatalf("unexpected warning: %v", w)
		}
	}
	bad := strings.Replace(keygenRules, "databaseStrategy: {standard: {shardingColumn: user_id, shardingAlgorithmName: db}}\n      keyGenerateStrategy: {column: note_id",
		"databaseStrategy: {standard: {shardingColumn: note_id, shardingAlgorithmName: db_note}}\n      keyGenerateStrategy: {column: note_id", 1)
	bad = strings.Replace(bad, "  shardingAlgorithms:\n", "  shardingAlgorithms:\n    db_note: {type: INLINE, props: {algorithm-expression: \"ds_${note_id % 2}\"}}\n", 1)
	rules, err = config.Parse([]byte(bad), "keygen.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range rules.Warnings {
		got = append(got, w.Error())
	}
	want := "table t_note: key column note_id gets UUID keys from v4, but sharding algorithm db_note (INLINE) computes with integers"
	if !strings.Contains(strings.Join(got, "\n"), want) {
		t.Fatalf("warnings %q, want %q", got, want)
	}
}
