package metrics

import (
	"context"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser"
)

// maxFingerprint bounds the fingerprint's length in a log record; a huge
// statement's shape is clear from its start.
const maxFingerprint = 2048

// slowLog writes one record per routed statement that took the threshold
// or longer. The SQL is logged only as its fingerprint: literals become ?
// and IN and VALUES lists collapse to (...), so values and passwords never
// reach the log; the digest groups statements of the same shape.
type slowLog struct {
	threshold time.Duration // <= 0: off
	log       *slog.Logger
}

func (l slowLog) isSlow(d time.Duration) bool {
	return l.threshold > 0 && d >= l.threshold
}

func (l slowLog) record(ev StatementEvent, fanout int) {
	if !l.log.Enabled(context.Background(), slog.LevelWarn) {
		return
	}
	fp, digest := Fingerprint(ev.SQL)
	attrs := []slog.Attr{
		slog.Uint64("conn", uint64(ev.ConnID)),
		slog.String("kind", kindLabels[kindIndex(ev.Kind)]),
		slog.String("route", routeLabels[routeIndex(ev.Type)]),
		slog.Int("fanout", fanout),
		slog.Duration("duration", ev.Duration),
		slog.String("fingerprint", fp),
		slog.String("digest", digest),
	}
	if ev.Code != 0 {
		attrs = append(attrs, slog.Int("error", int(ev.Code)))
	}
	l.log.LogAttrs(context.Background(), slog.LevelWarn, "slow statement", attrs...)
}

// Fingerprint returns a statement's normalized text (TiDB's digester:
// keywords lower case, literals ?, lists (...), comments dropped) and the
// hex digest of it.
func Fingerprint(sql string) (fp, digest string) {
	fp = parser.Normalize(sql, "ON")
	digest = parser.DigestNormalized(fp).String()
	if len(fp) > maxFingerprint {
		cut := maxFingerprint
		for cut > 0 && !utf8.RuneStart(fp[cut]) {
			cut--
		}
		fp = fp[:cut] + "..."
	}
	return fp, digest
}
