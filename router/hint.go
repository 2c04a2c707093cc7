package router

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/shardflake/shardflake/algorithm"
	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/internal/sqllex"
)

// hints are the routing hints of one statement, read from the /* ... */
// comments of its text (the package documentation, section Hints,
// describes them).
type hints struct {
	dataSource  string
	dbValues    map[string][]algorithm.Value // lower-case table ("" = every table) -> values
	tableValues map[string][]algorithm.Value
	slice       *slice
	// writeRouteOnly is WRITE_ROUTE_ONLY=true: a read goes to the primary
	// of a read/write group.
	writeRouteOnly bool
	// tables are the tables the keys name, checked against the rules.
	tables []hintTable
}

// hintTable is a table a hint key names, and the key as written.
type hintTable struct {
	name string // lower-case
	key  string
}

// slice is slice=Index/Count.
type slice struct {
	Index, Count int
}

func (h *hints) empty() bool {
	return h == nil || (h.dataSource == "" && h.dbValues == nil && h.tableValues == nil && h.slice == nil)
}

// values returns the hint values for the database (or table) strategy of
// table; nil when the hint names none.
func (h *hints) values(table string, db bool) []algorithm.Value {
	if h == nil {
		return nil
	}
	m := h.tableValues
	if db {
		m = h.dbValues
	}
	if m == nil {
		return nil
	}
	if v, ok := m[table]; ok {
		return v
	}
	return m[""]
}

// parseHints extracts the hints from the comments of sql. It returns nil
// when there are none.
func parseHints(sql string) (*hints, error) {
	if !strings.Contains(sql, "/*") {
		return nil, nil
	}
	var h *hints
	for _, c := range comments(sql) {
		body := strings.TrimSpace(c)
		switch {
		case hasPrefixFold(body, "SHARDINGSPHERE_HINT:"):
			if h == nil {
				h = &hints{}
			}
			if err := h.parseShardingSphere(body[len("SHARDINGSPHERE_HINT:"):]); err != nil {
				return nil, err
			}
		case hasPrefixFold(body, "shardflake:"):
			if h == nil {
				h = &hints{}
			}
			if err := h.parseShardflake(body[len("shardflake:"):]); err != nil {
				return nil, err
			}
		}
	}
	return h, nil
}

func (h *hints) parseShardingSphere(s string) error {
	for _, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			return errSyntax("malformed SHARDINGSPHERE_HINT %q: want key=value", pair)
		}
		key := strings.TrimSpace(k)
		k = strings.ToLower(key)
		v = strings.TrimSpace(v)
		table := ""
		if i := strings.LastIndexByte(k, '.'); i >= 0 {
			table, k = strings.Trim(k[:i], "`"), k[i+1:]
			if table == "" {
				return errSyntax("malformed SHARDINGSPHERE_HINT key %q: want table.KEY or KEY", key)
			}
		}
		if table != "" && !tableKey(k) {
			return errSyntax("SHARDINGSPHERE_HINT key %s: only SHARDING_DATABASE_VALUE and SHARDING_TABLE_VALUE take a table name", key)
		}
		switch k {
		case "sharding_database_value", "shardingdatabasevalue":
			val, err := hintValue(v)
			if err != nil {
				return err
			}
			if h.dbValues == nil {
				h.dbValues = map[string][]algorithm.Value{}
			}
			h.dbValues[table] = append(h.dbValues[table], val)
		case "sharding_table_value", "shardingtablevalue":
			val, err := hintValue(v)
			if err != nil {
				return err
			}
			if h.tableValues == nil {
				h.tableValues = map[string][]algorithm.Value{}
			}
			h.tableValues[table] = append(h.tableValues[table], val)
		case "data_source_name", "datasourcename":
			if v == "" {
				return errSyntax("malformed SHARDINGSPHERE_HINT: DATA_SOURCE_NAME needs a data source name")
			}
			h.dataSource = strings.Trim(v, "'\"`")
		case "write_route_only", "writerouteonly":
			h.writeRouteOnly = strings.EqualFold(strings.Trim(v, "'\""), "true")
		default:
			if !ignoredKey(k) {
				return errSyntax("unknown SHARDINGSPHERE_HINT key %s (known: [table.]SHARDING_DATABASE_VALUE, [table.]SHARDING_TABLE_VALUE, DATA_SOURCE_NAME, WRITE_ROUTE_ONLY; accepted and ignored: USE_TRAFFIC, SKIP_SQL_REWRITE, SKIP_ENCRYPT_REWRITE, DISABLE_AUDIT_NAMES, SHADOW)", key)
			}
		}
		if table != "" {
			h.tables = append(h.tables, hintTable{name: table, key: key})
		}
	}
	return nil
}

// tableKey reports a SHARDINGSPHERE_HINT key (lower-case) that may name a
// table: table.SHARDING_DATABASE_VALUE.
func tableKey(k string) bool {
	switch k {
	case "sharding_database_value", "shardingdatabasevalue", "sharding_table_value", "shardingtablevalue":
		return true
	}
	return false
}

// ignoredKey reports ShardingSphere's SHARDINGSPHERE_HINT keys (lower-case,
// and their camelCase aliases) for features shardflake does not have:
// accepted, so a statement written for ShardingSphere runs, and ignored.
func ignoredKey(k string) bool {
	switch k {
	case "use_traffic", "usetraffic",
		"skip_sql_rewrite", "skipsqlrewrite", "skip_encrypt_rewrite", "skipencryptrewrite",
		"disable_audit_names", "disableauditnames", "shadow":
		return true
	}
	return false
}

// DataSourceHint returns the data source that a SHARDINGSPHERE_HINT
// comment of sql names, checked against r, with DATA_SOURCE_NAME, "" when it names none. The
// proxy asks for statements it answers without the router (SELECT without
// tables) so the hint reaches them too. A malformed hint, an unknown key,
// or a data source or table the rules do not know is an *Error.
func DataSourceHint(r *config.Rules, sql string) (string, error) {
	h, err := parseHints(sql)
	if err != nil || h == nil {
		return "", err
	}
	if err := h.check(r); err != nil {
		return "", err
	}
	return h.dataSource, nil
}

// check validates the hint against the rules: a data source it names must
// exist, a table it names must be sharded.
func (h *hints) check(r *config.Rules) error {
	if h == nil {
		return nil
	}
	if h.dataSource != "" && r.DataSource(h.dataSource) == nil {
		return errNotSupported("SHARDINGSPHERE_HINT names data source %q, which the rules do not define", h.dataSource)
	}
	for _, t := range h.tables {
		if r.Tables[t.name] == nil {
			return errNotSupported("SHARDINGSPHERE_HINT key %s names table %s, which has no sharding rule", t.key, t.name)
		}
	}
	return nil
}

func (h *hints) parseShardflake(s string) error {
	for _, pair := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' }) {
		k, v, ok := strings.Cut(pair, "=")
		if !ok || !strings.EqualFold(k, "slice") {
			return errSyntax("malformed shardflake hint %q: want slice=i/n", pair)
		}
		is, ns, ok := strings.Cut(v, "/")
		i, err1 := strconv.Atoi(is)
		n, err2 := strconv.Atoi(ns)
		if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
			return errSyntax("malformed shardflake hint %q: want slice=i/n with 0 <= i < n", pair)
		}
		h.slice = &slice{Index: i, Count: n}
	}
	return nil
}

// hintValue reads a hint value: an integer, or a string ('quoted' or bare).
func hintValue(v string) (algorithm.Value, error) {
	if v == "" {
		return nil, errSyntax("malformed SHARDINGSPHERE_HINT: empty sharding value")
	}
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1], nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, nil
	}
	if n, err := strconv.ParseUint(v, 10, 64); err == nil {
		return n, nil
	}
	return v, nil
}

// checkUTF8 rejects a statement with bytes that are not UTF-8 outside its
// string literals: the parser turns them into '?' in names, which would
// name another table or column, or even become a placeholder.
func checkUTF8(sql string) error {
	if utf8.ValidString(sql) {
		return nil
	}
	// Only a string literal may hold any bytes: names, comments (an
	// executable one is code) and code may not.
	for i := 0; i < len(sql); {
		t := sqllex.At(sql, i, sqllex.Backslash)
		if t.Kind != sqllex.String {
			for j := t.Start; j < t.End; {
				r, n := utf8.DecodeRuneInString(sql[j:t.End])
				if r == utf8.RuneError && n == 1 {
					return errSyntax("invalid UTF-8 byte 0x%02x at offset %d outside a string literal", sql[j], j)
				}
				j += n
			}
		}
		i = t.End
	}
	return nil
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// comments returns the bodies of the /* ... */ comments of sql, skipping
// string literals, quoted names, line comments, executable comments
// (/*! ... */) and optimizer hints (/*+ ... */), as MySQL's lexer does.
// It stops at a comment that does not end.
func comments(sql string) []string {
	var out []string
	for i := 0; i < len(sql); {
		t := sqllex.At(sql, i, sqllex.Backslash)
		if t.Kind == sqllex.BlockComment {
			if t.Unterminated {
				break
			}
			out = append(out, t.Body(sql))
		}
		i = t.End
	}
	return out
}

// HasRoutingHint reports whether sql carries a routing hint: sharding
// values, DATA_SOURCE_NAME or a slice, which send the statement where its
// WHERE clause would not. A malformed hint counts as one (the router
// refuses it anyway); hints the router accepts and ignores do not.
func HasRoutingHint(sql string) bool {
	h, err := parseHints(sql)
	return err != nil || !h.empty()
}
