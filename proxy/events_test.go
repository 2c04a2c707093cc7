package proxy

import (
	"database/sql"
	"slices"
	"strings"
	"testing"
)

// TestEventsLikeMariaDB: the logical schema's events are the default data
// source's. SHOW CREATE EVENT (it was 1064) shows one as MariaDB does, or
// answers its 1539 for an event, or a schema, that does not exist; SHOW
// EVENTS lists them under the logical schema's name (it named the data
// source's database, and FROM the logical schema listed none).
func TestEventsLikeMariaDB(t *testing.T) {
	e := startEnv(t, envOptions{databases: "evt"})
	db := e.open(t)
	refDatabase(t, e.backends[0], "evtref")
	ref := e.backends[0].Open(t, "evtref")
	events := []string{
		"CREATE EVENT ev_a ON SCHEDULE EVERY 1 DAY STARTS '2030-01-01 00:00:00' DISABLE COMMENT 'a' DO SELECT 1",
		"CREATE EVENT ev_b2 ON SCHEDULE AT '2031-02-03 04:05:06' ON COMPLETION PRESERVE DISABLE DO SELECT 2",
	}
	e.backends[0].Exec(t, "evt_0", events...)
	e.backends[0].Exec(t, "evtref", events...)

	logical := func(s string) string { return strings.ReplaceAll(s, "sharding_db", "evtref") }
	for _, q := range []string{
		"SHOW CREATE EVENT ev_a",
		"show create event `ev_b2`",
		"SHOW CREATE EVENT sharding_db.ev_a",
		"SHOW CREATE EVENT nosuch",
		"SHOW CREATE EVENT nope.ev_a",
		"SHOW EVENTS",
		"SHOW EVENTS FROM sharding_db LIKE 'ev\\_b%'",
		"SHOW EVENTS WHERE Name = 'ev_a' AND Db = 'sharding_db'",
		"SHOW EVENTS FROM nope",
	} {
		got, gotErr := eventRows(db, q)
		want, wantErr := eventRows(ref, logical(q))
		for i := range got {
			got[i] = logical(got[i])
		}
		if errCode(gotErr) != errCode(wantErr) || (gotErr == nil) != (wantErr == nil) || !slices.Equal(got, want) {
			t.Errorf("%s\nproxy:     %q %v\nreference: %q %v", q, got, gotErr, want, wantErr)
		}
	}
}

// eventRows runs q and returns its rows, each column as name=value.
func eventRows(db *sql.DB, q string) ([]string, error) {
	rs, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	names, err := rs.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]sql.NullString, len(names))
	ptrs := make([]any, len(names))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var rows []string
	for rs.Next() {
		if err := rs.Scan(ptrs...); err != nil {
			return nil, err
		}
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = n + "=" + vals[i].String
			if !vals[i].Valid {
				parts[i] = n + "=NULL"
			}
		}
		rows = append(rows, strings.Join(parts, ","))
	}
	return rows, rs.Err()
}
