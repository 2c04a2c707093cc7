package proxy

import (
	"github.com/shardflake/shardflake/proxy/metrics"
	"strings"
)

// maskQuoted replaces what is quoted in a message ('...', "...", `...`)
// with ?, so an error logged with a failing statement ("Duplicate entry
// 'secret' for key ...", "Truncated incorrect DECIMAL value: '...'")
// carries no value of it; the statement itself is logged as its
// fingerprint (slowlog.go).
func maskQuoted(msg string) string {
	var b strings.Builder
	for i := 0; i < len(msg); i++ {
		q := msg[i]
		if q != '\'' && q != '"' && q != '`' {
			b.WriteByte(q)
			continue
		}
		end := strings.IndexByte(msg[i+1:], q)
		if end < 0 {
			b.WriteString(msg[i:])
			break
		}
		b.WriteByte(q)
		b.WriteByte('?')
		b.WriteByte(q)
		i += end + 1
	}
	return b.String()
}

// failedAttrs are what the debug log says of a failing statement: its
// fingerprint (literals masked, as the slow log writes it) and the
// error's number, SQLSTATE and message with quoted values masked.
func failedAttrs(sql string, err error) []any {
	fp, _ := metrics.Fingerprint(sql)
	m := mysqlError(err)
	return []any{"fingerprint", fp, "error", m.Code, "sqlstate", m.State, "message", maskQuoted(m.Message)}
}
