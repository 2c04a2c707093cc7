package proxy

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/shardflake/shardflake/algorithm"
	"github.com/shardflake/shardflake/proxy/internal/loadfile"
	"github.com/shardflake/shardflake/proxy/internal/wire"
	"github.com/shardflake/shardflake/router"
)

// loadBatch is rows of one data node in the canonical form, with the row
// of the client's file each came from (1-based), for the warnings.
type loadBatch struct {
	node int
	data []byte
	rows []uint32
}

// loadWarning is one warning of a batch, renumbered to the client's row.
type loadWarning struct {
	row uint32
	w   Row
}

// loadLane loads one data source's batches on its connection, one after
// the other, while the session reads and routes the next rows.
type loadLane struct {
	bc   *backendConn
	in   chan *loadBatch
	done chan struct{}
	err  error

	affected uint64
	info     infoCounts
	haveInfo bool
	warnings uint64 // as the data nodes counted them
	kept     []loadWarning
}

// loadChunk is the size of the file packets the proxy sends a data source.
const loadChunk = 64 << 10

func (l *loadLane) run(ctx context.Context, t *loadTarget, failed *atomic.Bool, free chan<- *loadBatch) {
	defer close(l.done)
	for b := range l.in {
		if l.err == nil && !failed.Load() {
			if err := l.load(ctx, t, b); err != nil {
				l.err = err
				failed.Store(true)
			}
		}
		select {
		case free <- b:
		default:
		}
	}
}

// load loads one batch into its physical table.
func (l *loadLane) load(ctx context.Context, t *loadTarget, b *loadBatch) error {
	bc := l.bc
	if err := loadStatement(bc, t.nodeSQL(b.node)); err != nil {
		return err
	}
	for data := b.data; len(data) > 0; {
		n := min(len(data), loadChunk)
		if err := bc.wc.WritePacket(data[:n]); err != nil {
			return bc.lost(err)
		}
		data = data[n:]
	}
	ok, err := endFile(bc)
	if err != nil {
		return err
	}
	l.affected += ok.AffectedRows
	l.warnings += uint64(ok.Warnings)
	if c, parsed := parseInfo(ok.Info); parsed {
		if !l.haveInfo {
			l.info, l.haveInfo = infoCounts{labels: c.labels, values: make([]uint64, len(c.values))}, true
		}
		if slices.Equal(c.labels, l.info.labels) {
			for i, v := range c.values {
				l.info.values[i] += v
			}
		}
	}
	if ok.Warnings > 0 {
		var d diagnostics
		bc.collectWarnings(withDiagnostics(ctx, &d))
		l.keep(t, b, d.warnings)
	}
	return nil
}

// warningRow finds the row number in a warning's message: "Row 3 was
// truncated ...", "... at row 3".
var warningRow = regexp.MustCompile(`(^Row |at row )(\d+)`)

// keep renumbers a batch's warnings to the client's rows, names the
// logical table instead of the physical one, and keeps the first ones.
func (l *loadLane) keep(t *loadTarget, b *loadBatch, rows []Row) {
	node := t.rule.DataNodes[b.node]
	physical := "`" + t.physicalDB[node.DataSource] + "`.`" + node.Table + "`."
	logical := "`" + t.logicalDB + "`.`" + t.rule.Name + "`."
	row := b.rows[0]
	for _, w := range rows {
		if len(w) != 3 {
			continue
		}
		msg := string(w[2])
		if m := warningRow.FindStringSubmatchIndex(msg); m != nil {
			if n, err := strconv.Atoi(msg[m[4]:m[5]]); err == nil && n >= 1 && n <= len(b.rows) {
				row = b.rows[n-1]
				msg = msg[:m[4]] + strconv.FormatUint(uint64(row), 10) + msg[m[5]:]
			}
		}
		msg = strings.ReplaceAll(msg, physical, logical)
		l.kept = append(l.kept, loadWarning{row: row, w: Row{w[0], w[1], []byte(msg)}})
	}
	if len(l.kept) > 4*loadMaxWarnings {
		l.kept = firstWarnings(l.kept)
	}
}

// firstWarnings orders warnings by the client's row (a row's warnings
// all come from one batch, in the data node's order) and keeps the first
// loadMaxWarnings.
func firstWarnings(ws []loadWarning) []loadWarning {
	slices.SortStableFunc(ws, func(a, b loadWarning) int { return int(a.row) - int(b.row) })
	return ws[:min(len(ws), loadMaxWarnings)]
}

// loadSharded reads the client's file, routes every row and loads each
// data node's rows in batches on the guard's connections.
func (s *Session) loadSharded(ctx context.Context, t *loadTarget, guard *stmtGuard, file *clientFile) (wire.OK, error) {
	t.logicalDB = s.srv.rules.DatabaseName
	t.physicalDB = map[string]string{}
	for _, ds := range t.rule.DataSources() {
		if d := s.srv.rules.DataSource(ds); d != nil {
			t.physicalDB[ds] = d.Database
		}
	}
	var failed atomic.Bool
	free := make(chan *loadBatch, len(t.rule.DataNodes)+2*len(t.rule.DataSources()))
	// A lane per connection: the guard took one per data node of each
	// data source (up to maxConnsPerDataSource), so the physical tables
	// load in parallel; data nodes share a data source's connections
	// round robin.
	for _, ds := range t.rule.DataSources() {
		if len(guard.byDS[ds]) == 0 {
			return wire.OK{}, &InternalError{Msg: "LOAD DATA: no connection taken for data source " + ds}
		}
	}
	byConn := map[*backendConn]*loadLane{}
	var order []*loadLane
	nodeLane := make([]*loadLane, len(t.rule.DataNodes))
	seen := map[string]int{}
	for i, n := range t.rule.DataNodes {
		bcs := guard.byDS[n.DataSource]
		bc := bcs[seen[n.DataSource]%len(bcs)]
		seen[n.DataSource]++
		l := byConn[bc]
		if l == nil {
			l = &loadLane{bc: bc, in: make(chan *loadBatch, 1), done: make(chan struct{})}
			byConn[bc] = l
			order = append(order, l)
			go l.run(ctx, t, &failed, free)
		}
		nodeLane[i] = l
	}
	stopLanes := func() {
		for _, l := range order {
			close(l.in)
		}
		for _, l := range order {
			<-l.done
		}
	}
	pending := make([]*loadBatch, len(t.rule.DataNodes))
	send := func(b *loadBatch) { nodeLane[b.node].in <- b }
	rowErr := s.routeRows(t, file, pending, free, &failed, send)
	if rowErr == nil && !failed.Load() {
		for _, b := range pending {
			if b != nil {
				send(b)
			}
		}
	}
	stopLanes()
	if rowErr != nil {
		return wire.OK{}, rowErr
	}
	for _, l := range order {
		if l.err != nil {
			return wire.OK{}, l.err
		}
	}
	var ok wire.OK
	info := infoCounts{labels: []string{"Records", "Deleted", "Skipped", "Warnings"}, values: make([]uint64, 4)}
	var kept []loadWarning
	var warnings uint64
	for _, l := range order {
		ok.AffectedRows += l.affected
		warnings += l.warnings
		kept = append(kept, l.kept...)
		if l.haveInfo && slices.Equal(l.info.labels, info.labels) {
			for i, v := range l.info.values {
				info.values[i] += v
			}
		}
	}
	ok.Warnings = uint16(min(warnings, 0xffff))
	ok.Info = info.String()
	ok.InsertID = t.firstKey
	rows := make([]Row, 0, len(kept))
	for _, w := range firstWarnings(kept) {
		rows = append(rows, w.w)
	}
	if len(rows) > 0 {
		s.diag.add(rows)
	}
	if warnings > uint64(len(rows)) {
		s.diag.addBeyond(int64(warnings) - int64(len(rows)))
	}
	return ok, nil
}

// routeRows reads the file's rows, routes each and fills pending, the
// batch of each data node, handing full ones to send. It stops at the
// first row it cannot place or when a lane failed.
func (s *Session) routeRows(t *loadTarget, file *clientFile, pending []*loadBatch, free chan *loadBatch, failed *atomic.Bool, send func(*loadBatch)) error {
	rd := loadfile.NewReader(file, t.format)
	rd.SkipLines(t.ignore)
	var rec loadfile.Record
	conds := make(map[string]algorithm.ColumnCondition, len(t.shard))
	var keys []algorithm.Value
	var keyText []byte
	var row uint32
	for !failed.Load() && rd.Read(&rec, t.items) {
		row++
		var key algorithm.Value
		if t.gen != nil || t.keyless(&rec) {
			if len(keys) == 0 {
				gen := s.srv.keys[t.rule.KeyGenerator]
				if err := router.AppendKeys(gen, min(gen.MaxBatch(), 1024), &keys); err != nil {
					return &router.Error{Code: router.CodeUnknown, State: "HY000", Message: fmt.Sprintf("key generator %s for %s.%s: %v", t.rule.KeyGenerator, t.rule.Name, t.rule.KeyColumn, err), Err: err}
				}
			}
			key, keys = keys[0], keys[1:]
			if id, ok := key.(int64); ok && t.firstKey == 0 {
				t.firstKey = uint64(id)
			}
			keyText = appendKeyText(keyText[:0], key)
		}
		for _, sc := range t.shard {
			var v algorithm.Value
			switch {
			case sc.field >= 0 && sc.field == t.nullKey && key != nil:
				v = key
			case sc.field >= 0 && sc.field < rec.Len():
				f, null := rec.Field(sc.field)
				if !null {
					v = shardValue(f, sc.integer)
				}
			case sc.field >= 0:
				return errNotSupportedf("row %d of the LOAD DATA into %s has no field for sharding column %s, which picks its data node", row, t.rule.Name, sc.col)
			case key != nil && sc.col == t.keyCol:
				v = key
			default:
				v = sc.constant
			}
			if v == nil {
				return &router.Error{Code: router.CodeBadNull, State: "23000", Message: fmt.Sprintf("Column '%s' cannot be null (row %d of the LOAD DATA into %s: a NULL sharding value belongs to no data node)", sc.col, row, t.rule.Name)}
			}
			conds[sc.col] = algorithm.ColumnCondition{Column: sc.col, Values: []algorithm.Value{v}}
		}
		nodes, err := t.rule.Route(conds)
		if err != nil {
			return err
		}
		if len(nodes) != 1 {
			return errNotSupportedf("row %d of the LOAD DATA into %s matches %d data nodes of the table", row, t.rule.Name, len(nodes))
		}
		node := t.nodes[nodes[0]]
		b := pending[node]
		if b == nil {
			select {
			case b = <-free:
				b.data, b.rows = b.data[:0], b.rows[:0]
			default:
				b = &loadBatch{}
			}
			b.node = node
			pending[node] = b
		}
		firstField := true
		if t.gen != nil {
			b.data = loadfile.AppendField(b.data, keyText, false, true, nil)
			firstField = false
		}
		for i := range rec.Len() {
			v, null := rec.Field(i)
			if i == t.nullKey && key != nil {
				v, null = keyText, false
			}
			b.data = loadfile.AppendField(b.data, v, null, firstField, t.format.CharLen)
			firstField = false
		}
		b.data = loadfile.AppendEnd(b.data, rec.Cut)
		b.rows = append(b.rows, row)
		if len(b.data) >= loadBatchBytes {
			pending[node] = nil
			send(b)
		}
	}
	return rd.Err()
}

// keyless reports whether rec's key column field asks for a generated
// key: NULL, or a 0 when t.zeroKey.
func (t *loadTarget) keyless(rec *loadfile.Record) bool {
	if t.nullKey < 0 || t.nullKey >= rec.Len() {
		return false
	}
	f, null := rec.Field(t.nullKey)
	if null || !t.zeroKey {
		return null
	}
	n, err := strconv.ParseInt(string(f), 10, 64)
	return err == nil && n == 0
}

// shardValue is a field as the router routes it: an integer column's
// plain integer as a number, anything else as the text (which integer
// algorithms read as MariaDB converts it).
func shardValue(f []byte, integer bool) algorithm.Value {
	if integer {
		if n, err := strconv.ParseInt(string(f), 10, 64); err == nil {
			return n
		}
	}
	return string(f)
}

// appendKeyText writes a generated key as its field's bytes.
func appendKeyText(dst []byte, key algorithm.Value) []byte {
	switch k := key.(type) {
	case int64:
		return strconv.AppendInt(dst, k, 10)
	case string:
		return append(dst, k...)
	case []byte:
		return append(dst, k...)
	}
	return dst
}

// errNotSupportedf is 1235 with a message of its own.
func errNotSupportedf(format string, args ...any) error {
	return &router.Error{Code: router.CodeNotSupported, State: "42000", Message: fmt.Sprintf(format, args...)}
}
