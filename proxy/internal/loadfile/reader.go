package loadfile

import (
	"bufio"
	"errors"
	"io"
)

// Format is a LOAD DATA statement's FIELDS and LINES clauses, the strings
// already unescaped (the statement's '\t' is one tab byte). The zero
// Format is not MariaDB's default: use Default and change what the
// statement gives.
type Format struct {
	FieldTerm string // FIELDS TERMINATED BY
	Enclosed  string // [OPTIONALLY] ENCLOSED BY: "" or one byte
	Escaped   string // ESCAPED BY: "" or one byte
	LineTerm  string // LINES TERMINATED BY: not ""
	LineStart string // LINES STARTING BY
	// CharLen gives the length of the character whose first byte is b,
	// for the multi-byte character sets whose later bytes can look like
	// a terminator or the escape (big5, cp932, gbk, sjis); nil for the
	// others, where every byte is read on its own.
	CharLen func(b byte) int
}

// Default is MariaDB's format when the statement names none: fields
// separated by tabs, no enclosure, escaped by backslash, lines ended by
// newlines.
var Default = Format{FieldTerm: "\t", Escaped: `\`, LineTerm: "\n"}

// ErrFormat reports a format the reader does not read as MariaDB does.
var ErrFormat = errors.New("loadfile: unsupported format")

// Check reports formats Reader does not read: fixed-width rows (no field
// terminator and no enclosure), an empty line terminator, and enclosures
// or escapes longer than one byte (which MariaDB refuses).
func (f Format) Check() error {
	switch {
	case f.FieldTerm == "" && f.Enclosed == "":
		return errors.Join(ErrFormat, errors.New("fixed-width rows (FIELDS TERMINATED BY '' ENCLOSED BY '')"))
	case f.LineTerm == "":
		return errors.Join(ErrFormat, errors.New("LINES TERMINATED BY ''"))
	case len(f.Enclosed) > 1 || len(f.Escaped) > 1:
		return errors.Join(ErrFormat, errors.New("ENCLOSED BY and ESCAPED BY take one character"))
	}
	return nil
}

// Record is one row of the file: up to the number of fields asked for,
// fewer when the line ends first. Field values point into the record's
// buffer and are valid until the next Read into it.
type Record struct {
	buf  []byte
	ends []int
	null []bool
	// Cut says that the line held more fields than were asked for
	// (MariaDB's warning 1262).
	Cut bool
}

// Len returns the number of fields read.
func (r *Record) Len() int { return len(r.ends) }

// Field returns field i and whether it is NULL (\N, or the unenclosed
// word NULL when the format has an enclosure).
func (r *Record) Field(i int) (value []byte, null bool) {
	start := 0
	if i > 0 {
		start = r.ends[i-1]
	}
	return r.buf[start:r.ends[i]], r.null[i]
}

func (r *Record) reset() {
	r.buf, r.ends, r.null, r.Cut = r.buf[:0], r.ends[:0], r.null[:0], false
}

// eof is what get returns at the end of the file (MariaDB's my_b_EOF).
const eof = -1

// none stands for an empty terminator, enclosure or escape (INT_MAX in
// MariaDB): no byte equals it.
const none = 1 << 20

// Reader reads records from a LOAD DATA file, as MariaDB's READ_INFO.
type Reader struct {
	br    *bufio.Reader
	err   error // the source's, other than io.EOF
	ended bool  // the source is at its end (or failed)
	stack []int // bytes given back, read again first (MariaDB's PUSH)

	charLen                           func(byte) int
	fieldTerm, lineTerm, lineStart    []byte
	fieldChar, lineChar, encl, escape int

	foundEOL, atEOF, startOfLine, lineCut bool
	done                                  bool
	nul                                   bool // the field just read had \N
}

// NewReader reads f-formatted records from src. f must pass Check.
func NewReader(src io.Reader, f Format) *Reader {
	r := &Reader{
		br:        bufio.NewReaderSize(src, 64<<10),
		charLen:   f.CharLen,
		fieldTerm: []byte(f.FieldTerm),
		lineTerm:  []byte(f.LineTerm),
		lineStart: []byte(f.LineStart),
		fieldChar: first(f.FieldTerm),
		lineChar:  first(f.LineTerm),
		encl:      first(f.Enclosed),
		escape:    first(f.Escaped),
	}
	r.startOfLine = len(r.lineStart) > 0
	return r
}

func first(s string) int {
	if s == "" {
		return none
	}
	return int(s[0])
}

func (r *Reader) get() int {
	if n := len(r.stack); n > 0 {
		c := r.stack[n-1]
		r.stack = r.stack[:n-1]
		return c
	}
	if r.ended {
		return eof
	}
	b, err := r.br.ReadByte()
	if err != nil {
		r.ended = true
		if err != io.EOF {
			r.err = err
		}
		return eof
	}
	return int(b)
}

func (r *Reader) push(c int) { r.stack = append(r.stack, c) }

// terminator reports whether the bytes after one that matched t[0]
// complete t; if not it gives them back.
func (r *Reader) terminator(t []byte) bool {
	var c int
	i := 1
	for ; i < len(t); i++ {
		if c = r.get(); c != int(t[i]) {
			break
		}
	}
	if i == len(t) {
		return true
	}
	r.push(c)
	for i--; i > 0; i-- {
		r.push(int(t[i]))
	}
	return false
}

// Err returns the source's read error, nil at a clean end of file.
func (r *Reader) Err() error { return r.err }

// SkipLines skips n lines, as IGNORE n LINES does: to the next line
// terminator each time, stepping over escaped bytes but not over
// enclosures, and not looking for LINES STARTING BY.
func (r *Reader) SkipLines(n uint64) {
	for ; n > 0 && !r.done; n-- {
		if r.nextLine() {
			r.done = true
		}
	}
}

// Read reads the next record into rec, at most n fields of it. It
// returns false at the end of the file (or on a read error: see Err).
func (r *Reader) Read(rec *Record, n int) bool {
	rec.reset()
	if r.done {
		return false
	}
	for range n {
		start := len(rec.buf)
		enclosed, ok := r.readField(rec)
		if !ok {
			break
		}
		v := rec.buf[start:]
		null := (!enclosed && r.encl != none && string(v) == "NULL") || (len(v) == 1 && r.nul)
		rec.ends = append(rec.ends, len(rec.buf))
		rec.null = append(rec.null, null)
	}
	if len(rec.ends) == 0 || r.err != nil {
		r.done = true
		return false
	}
	if r.nextLine() {
		// MariaDB stops at the end of the file here without a warning
		// for the surplus of the last line.
		r.done = true
		rec.Cut = false
	} else {
		rec.Cut = r.lineCut
	}
	return true
}

// findStart skips to just after the next LINES STARTING BY, across line
// ends; false at the end of the file.
func (r *Reader) findStart() bool {
	for c := r.get(); c != eof; c = r.get() {
		if c == int(r.lineStart[0]) && r.terminator(r.lineStart) {
			return true
		}
	}
	r.foundEOL, r.atEOF = true, true
	return false
}

// readField appends the next field's value to rec.buf; ok is false when
// the line (or the file) has no more fields.
func (r *Reader) readField(rec *Record) (enclosed, ok bool) {
	r.nul = false
	if r.foundEOL {
		return false, false
	}
	if r.startOfLine {
		r.startOfLine = false
		if !r.findStart() {
			return false, false
		}
	}
	c := r.get()
	if c == eof {
		r.foundEOL, r.atEOF = true, true
		return false, false
	}
	start := len(rec.buf)
	quote := none
	if c == r.encl {
		quote = r.encl
		rec.buf = append(rec.buf, byte(c)) // kept if the file ends inside the field
	} else {
		r.push(c)
	}
	// value drops the opening enclosure of an enclosed field.
	value := func() {
		if quote != none {
			rec.buf = append(rec.buf[:start], rec.buf[start+1:]...)
		}
	}
	for {
		c = r.get()
		if c == eof {
			break
		}
		if c == r.escape {
			if c = r.get(); c == eof {
				rec.buf = append(rec.buf, byte(r.escape))
				break
			}
			// With the escape equal to the enclosure it only doubles
			// itself, as quotes do in SQL.
			if r.escape != r.encl || c == r.escape {
				rec.buf = append(rec.buf, r.unescape(byte(c)))
				continue
			}
			r.push(c)
			c = r.escape
		}
		if c == r.lineChar && quote == none && r.terminator(r.lineTerm) {
			r.foundEOL = true
			return false, true
		}
		if c == quote {
			if c = r.get(); c == quote {
				rec.buf = append(rec.buf, byte(c))
				continue
			}
			if c == eof || (c == r.lineChar && r.terminator(r.lineTerm)) {
				r.foundEOL = true
				value()
				return true, true
			}
			if c == r.fieldChar && r.terminator(r.fieldTerm) {
				value()
				return true, true
			}
			r.push(c)
			c = quote
		} else if c == r.fieldChar && quote == none && r.terminator(r.fieldTerm) {
			return false, true
		}
		rec.buf = append(rec.buf, byte(c))
		if r.charLen != nil && !r.tail(rec, byte(c)) {
			break
		}
	}
	// The end of the file: the field is what was read, an opening
	// enclosure included.
	r.foundEOL, r.atEOF = true, true
	return false, true
}

// tail appends the later bytes of a multi-byte character whose first
// byte was b; false at the end of the file.
func (r *Reader) tail(rec *Record, b byte) bool {
	for n := r.charLen(b); n > 1; n-- {
		c := r.get()
		if c == eof {
			return false
		}
		rec.buf = append(rec.buf, byte(c))
	}
	return true
}

func (r *Reader) unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	case 'b':
		return '\b'
	case '0':
		return 0
	case 'Z':
		return 032
	case 'N':
		r.nul = true
	}
	return c
}

// nextLine skips the rest of the line after the fields read, noting in
// lineCut whether there was any; true at the end of the file.
func (r *Reader) nextLine() bool {
	r.lineCut = false
	r.startOfLine = len(r.lineStart) > 0
	if r.foundEOL || r.atEOF {
		r.foundEOL = false
		return r.atEOF
	}
	for {
		c := r.get()
		if c == eof {
			r.atEOF = true
			return true
		}
		if r.charLen != nil && r.charLen(byte(c)) > 1 {
			r.lineCut = true
			for n := r.charLen(byte(c)); n > 1; n-- {
				if r.get() == eof {
					r.atEOF = true
					return true
				}
			}
			continue
		}
		if c == r.escape {
			r.lineCut = true
			if r.get() == eof {
				r.atEOF = true
				return true
			}
			continue
		}
		if c == r.lineChar && r.terminator(r.lineTerm) {
			return false
		}
		r.lineCut = true
	}
}
