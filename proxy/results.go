package proxy

import (
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// Protocol is the row format a result is written in.
type Protocol int

// Row formats.
const (
	TextProtocol   Protocol = iota + 1 // COM_QUERY results
	BinaryProtocol                     // COM_STMT_EXECUTE results
)

// String returns the protocol's name.
func (p Protocol) String() string {
	switch p {
	case TextProtocol:
		return "text"
	case BinaryProtocol:
		return "binary"
	}
	return "unknown"
}

// rawRows is implemented by streams that can hand out each row packet's
// payload unchanged (a single route's backend result), so a result in the
// protocol the client wants is forwarded without decoding a row.
type rawRows interface {
	nextRaw() ([]byte, error)
	// rawProtocol is the row format of the packets.
	rawProtocol() Protocol
}

// status is the status flags of the session for a response, as MariaDB
// sets them (status.go); more adds SERVER_MORE_RESULTS_EXISTS (another
// result of a multi-statement query follows).
func (s *Session) status(more bool) uint16 {
	st := s.backendStatus.get()
	if s.autocommit {
		st |= mysql.SERVER_STATUS_AUTOCOMMIT
	}
	if s.txn.active {
		st |= mysql.SERVER_STATUS_IN_TRANS
		if s.txn.readOnly() || s.vars.readOnly() {
			st |= serverStatusInTransReadOnly
		}
	}
	if s.sqlMode.HasNoBackslashEscapesMode() {
		st |= mysql.SERVER_STATUS_NO_BACKSLASH_ESCAPED
	}
	if more {
		st |= mysql.SERVER_MORE_RESULTS_EXISTS
	}
	return st
}

func (s *Session) writePacket(p []byte) error {
	err := s.wc.WritePacket(p)
	s.wc.SetScratch(p)
	return err
}

// trackedState is the session state the next OK reports (a USE, a SET
// of tracked variables since the last OK, that the session's state
// changed), nil when the client tracks none of it.
func (s *Session) trackedState() *wire.SessionState {
	var st wire.SessionState
	if s.schemaChanged && !s.schemaTrackingOff {
		st.Schema = s.db
	}
	st.Variables = s.trackedVars
	if s.autocommitSet && s.tracks("autocommit") {
		st.Variables = append(st.Variables, wire.TrackedVariable{Name: "autocommit", Value: onOff(s.autocommit)})
	}
	st.Changed = s.stateChanged && s.stateTracking
	s.schemaChanged, s.autocommitSet, s.trackedVars, s.stateChanged = false, false, nil, false
	if st.Schema == "" && len(st.Variables) == 0 && !st.Changed {
		return nil
	}
	return &st
}

// writeOK writes an OK packet with the session's status.
func (s *Session) writeOK(ok wire.OK, more bool) error {
	ok.Status = s.status(more)
	if s.schemaChanged || s.autocommitSet || s.trackedVars != nil || s.stateChanged {
		ok.State = s.trackedState()
	}
	s.written = int64(ok.AffectedRows)
	if s.capture != nil {
		s.capture.ok(ok)
		return nil
	}
	return s.writePacket(wire.AppendOK(s.wc.Scratch(), ok, s.sessionTrack))
}

// writeErr writes err as the client sees it, through the one error boundary.
func (s *Session) writeErr(err error) error {
	m := s.srv.clientError(err)
	s.srv.obs.Error(m.Code)
	s.diag.fail(m)
	if s.capture != nil {
		s.capture.fail(m)
		return nil
	}
	return s.writePacket(wire.AppendErr(s.wc.Scratch(), m.Code, m.State, m.Message))
}

func (s *Session) writeEOF(more bool) error {
	return s.writePacket(wire.AppendEOF(s.wc.Scratch(), 0, s.status(more)))
}

// writeRows writes a result set. Column definitions name the logical
// schema and tables, never the physical ones. A single route's rows are
// forwarded packet by packet when they are in the protocol the client
// wants: text for COM_QUERY, binary for COM_STMT_EXECUTE (its routes run
// as backend prepared statements); others are converted row by row. An error after the
// columns ends the result with an error packet, as MySQL does; writeRows
// then returns errWritten wrapping it, so the caller stops.
func (s *Session) writeRows(rows RowStream, out output) error {
	s.written = -1
	if out.count != nil {
		// COUNT(*) of a derived table (derivedcount.go).
		var err error
		if rows, err = out.count.countRows(rows); err != nil {
			return err
		}
	}
	if out.variables != nil {
		rows = &mapStream{RowStream: rows, fn: func(r Row) Row {
			if len(r) < 2 {
				return r
			}
			if v, ok := out.variables[strings.ToLower(string(r[0]))]; ok {
				r = r.Clone()
				r[1] = []byte(v)
			}
			return r
		}}
	}
	if out.into != nil {
		return s.storeInto(rows, out)
	}
	if s.capture != nil {
		cols := rows.Columns()
		all, err := drain(rows)
		if err != nil {
			return err
		}
		s.capture.rows(cols, all, out.proto == BinaryProtocol)
		return nil
	}
	defer rows.Close()
	cols, err := streamColumns(rows)
	if err != nil {
		return err
	}
	if out.derived != nil || out.local != nil || out.names != nil {
		// Rows are converted for the columns' new types.
		cols = out.columns(cols)
		rows = relabeled{RowStream: rows, cols: cols}
	}
	buf := wire.AppendLenEncInt(s.wc.Scratch(), uint64(len(cols)))
	if err := s.writePacket(buf); err != nil {
		return err
	}
	for _, f := range cols {
		if err := s.wc.WritePacket(s.columnPacket(f)); err != nil {
			return err
		}
	}
	// MariaDB flags the column definitions' EOF as the result's last.
	if err := s.writeEOF(out.more); err != nil {
		return err
	}
	raw, canRaw := rows.(rawRows)
	canRaw = canRaw && raw.rawProtocol() == out.proto
	var sent int64
	for {
		var p []byte
		var err error
		switch {
		case canRaw:
			p, err = raw.nextRaw()
		default:
			var row Row
			if row, err = rows.Next(); err == nil {
				if out.proto == BinaryProtocol {
					p, err = wire.AppendBinaryRow(s.wc.Scratch(), cols, row)
				} else {
					p = wire.AppendTextRow(s.wc.Scratch(), row)
				}
			}
		}
		if errors.Is(err, io.EOF) {
			s.found = sent // FOUND_ROWS() (calcfoundrows.go)
			if out.found != nil && out.found.n >= 0 {
				s.found = out.found.n
			}
			// The lanes have read their warnings by now.
			return s.writePacket(wire.AppendEOF(s.wc.Scratch(), s.diag.statementWarnings(), s.status(out.more)))
		}
		if err != nil {
			if werr := s.writeErr(err); werr != nil {
				return werr
			}
			return &errWritten{err: err}
		}
		if err := s.wc.WritePacket(p); err != nil {
			return err
		}
		sent++
		if !canRaw {
			s.wc.SetScratch(p)
		}
	}
}

// errWritten is an error the client has already been sent (mid-result).
type errWritten struct{ err error }

func (e *errWritten) Error() string { return e.err.Error() }
func (e *errWritten) Unwrap() error { return e.err }

// logicalColumn returns f as the client should see it: the logical
// schema instead of a data source's database, the logical table instead
// of a physical one. The answer for a Field the backend connections share
// (backendConn.column) is kept, so a repeated query rewrites nothing.
func (s *Session) logicalColumn(f *mysql.Field) *mysql.Field {
	return s.logicalEntry(f).f
}

// columnPacket is logicalColumn's answer encoded as a column definition
// packet, kept with it: a repeated query encodes nothing. The slice is
// shared; it must not be modified or given to SetScratch.
func (s *Session) columnPacket(f *mysql.Field) []byte {
	l := s.logicalEntry(f)
	if l.packet == nil {
		l.packet = wire.AppendColumn(nil, l.f, s.extendedMetadata)
	}
	return l.packet
}

// logicalCol is one entry of the session's logicalColumn cache.
type logicalCol struct {
	f      *mysql.Field
	packet []byte // f encoded, once asked for (columnPacket)
}

func (s *Session) logicalEntry(f *mysql.Field) *logicalCol {
	if l, ok := s.logical[f]; ok {
		return l
	}
	l := &logicalCol{f: s.srv.rewriteColumn(f)}
	if s.logical == nil || len(s.logical) >= maxCachedColumns {
		s.logical = map[*mysql.Field]*logicalCol{}
	}
	s.logical[f] = l
	return l
}

func (srv sessionServer) rewriteColumn(f *mysql.Field) *mysql.Field {
	schema, table, orgTable := f.Schema, f.Table, f.OrgTable
	changed := false
	if len(schema) > 0 && srv.physicalDB[string(schema)] {
		schema, changed = []byte(srv.rules.DatabaseName), true
	}
	if logical, ok := srv.physicalTable[string(orgTable)]; ok {
		if string(table) == string(orgTable) {
			table = []byte(logical)
		}
		orgTable, changed = []byte(logical), true
	}
	if !changed {
		return f
	}
	c := *f
	c.Schema, c.Table, c.OrgTable = schema, table, orgTable
	return &c
}

// memStream is a result computed by the proxy itself.
type memStream struct {
	columns []*mysql.Field
	rows    []Row
	i       int
}

func newMemStream(columns []*mysql.Field, rows []Row) *memStream {
	return &memStream{columns: columns, rows: rows}
}

func (m *memStream) Columns() []*mysql.Field { return m.columns }

func (m *memStream) Next() (Row, error) {
	if m.i >= len(m.rows) {
		return nil, io.EOF
	}
	m.i++
	return m.rows[m.i-1], nil
}

func (m *memStream) Close() error { return nil }

// Column definitions for results the proxy computes.
const (
	charsetUTF8MB4 = 45 // utf8mb4_general_ci
	charsetBinary  = 63
)

func stringColumn(name string) *mysql.Field {
	return &mysql.Field{Name: []byte(name), OrgName: []byte(name), Charset: charsetUTF8MB4, ColumnLength: 256, Type: mysql.MYSQL_TYPE_VAR_STRING}
}

func intColumn(name string) *mysql.Field {
	return &mysql.Field{Name: []byte(name), OrgName: []byte(name), Charset: charsetBinary, ColumnLength: 21, Type: mysql.MYSQL_TYPE_LONGLONG, Flag: mysql.BINARY_FLAG}
}

func uintColumn(name string) *mysql.Field {
	f := intColumn(name)
	f.Flag |= mysql.UNSIGNED_FLAG
	return f
}

// Column definitions of values MariaDB computes (an item, not a table's
// column), for the statements the proxy answers as MariaDB would: no
// original name, NOT_FIXED_DEC decimals for a string, a string's length
// its characters times the bytes of the widest character of the result's
// character set (the proxy's results are utf8mb4).
const (
	notFixedDecimals   = 39
	noDefaultValueFlag = 4096 // NO_DEFAULT_VALUE_FLAG
	utf8mb4MaxBytes    = 4
)

// itemString is a VARCHAR item of at most chars characters.
func itemString(name string, chars int, flag uint16) *mysql.Field {
	return &mysql.Field{Name: []byte(name), Charset: charsetUTF8MB4, ColumnLength: uint32(chars * utf8mb4MaxBytes),
		Type: mysql.MYSQL_TYPE_VAR_STRING, Flag: flag, Decimal: notFixedDecimals}
}

// infoSchemaColumn is the column definition of a SHOW that MariaDB
// answers from information_schema table table: its VARCHAR column
// orgName of chars characters, NOT NULL without a default, named name.
func infoSchemaColumn(name, table, orgName string, chars int) *mysql.Field {
	return &mysql.Field{Name: []byte(name), OrgName: []byte(orgName), Table: []byte(table), OrgTable: []byte(table), Schema: []byte(infoSchema),
		Charset: charsetUTF8MB4, ColumnLength: uint32(chars * utf8mb4MaxBytes), Type: mysql.MYSQL_TYPE_VAR_STRING,
		Flag: mysql.NOT_NULL_FLAG | noDefaultValueFlag}
}

// itemInt is an integer item of type typ (MYSQL_TYPE_LONG, _LONGLONG)
// and display length length.
func itemInt(name string, typ uint8, length uint32, flag uint16) *mysql.Field {
	return &mysql.Field{Name: []byte(name), Charset: charsetBinary, ColumnLength: length, Type: typ, Flag: flag | mysql.BINARY_FLAG}
}

// distinctRows keeps the first of the rows equal to each other (same values,
// NULL apart from empty), in order, in rows' own array.
func distinctRows(rows []Row) []Row {
	seen := map[string]bool{}
	kept := rows[:0]
	var key []byte
	for _, r := range rows {
		key = key[:0]
		for _, v := range r {
			if v == nil {
				key = append(key, 'N')
				continue
			}
			key = strconv.AppendInt(append(key, 'V'), int64(len(v)), 10)
			key = append(append(key, ':'), v...)
		}
		if !seen[string(key)] {
			seen[string(key)] = true
			kept = append(kept, r)
		}
	}
	return kept
}

// rowOf builds a Row for a computed result; nil values are NULL.
func rowOf(values ...any) Row {
	r := make(Row, len(values))
	for i, v := range values {
		switch x := v.(type) {
		case nil:
		case string:
			r[i] = []byte(x)
		case []byte:
			r[i] = x
		case int:
			r[i] = strconv.AppendInt(nil, int64(x), 10)
		case int64:
			r[i] = strconv.AppendInt(nil, x, 10)
		case uint64:
			r[i] = strconv.AppendUint(nil, x, 10)
		case uint32:
			r[i] = strconv.AppendUint(nil, uint64(x), 10)
		default:
			panic("rowOf: unsupported type")
		}
	}
	return r
}

// streamColumns returns the columns of rows, or the error of a stream that
// failed before it had any.
func streamColumns(rows RowStream) ([]*mysql.Field, error) {
	if cols := rows.Columns(); cols != nil {
		return cols, nil
	}
	_, err := rows.Next()
	if err == nil || errors.Is(err, io.EOF) {
		err = &InternalError{Msg: "result without columns"}
	}
	return nil, err
}
