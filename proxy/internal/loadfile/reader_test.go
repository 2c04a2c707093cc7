package loadfile

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"
)

// records reads every record of file (n fields at most), each as its
// fields joined by "|", NULL as <NULL>, a cut line marked with "+".
func records(t *testing.T, f Format, file string, n int, ignore uint64) []string {
	t.Helper()
	r := NewReader(iotest.OneByteReader(strings.NewReader(file)), f)
	r.SkipLines(ignore)
	var out []string
	var rec Record
	for r.Read(&rec, n) {
		var fields []string
		for i := range rec.Len() {
			v, null := rec.Field(i)
			if null {
				fields = append(fields, "<NULL>")
			} else {
				fields = append(fields, string(v))
			}
		}
		s := strings.Join(fields, "|")
		if rec.Cut {
			s += "+"
		}
		out = append(out, s)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReader(t *testing.T) {
	csv := Format{FieldTerm: ",", Enclosed: `"`, Escaped: `\`, LineTerm: "\n"}
	tests := []struct {
		name   string
		f      Format
		file   string
		n      int
		ignore uint64
		want   []string
	}{
		{"default", Default, "a\tb\n\\N\tx\\ty\n", 2, 0, []string{"a|b", "<NULL>|x\ty"}},
		{"escapes", Default, `\0\b\n\r\t\Z\\\N\q` + "\n", 1, 0, []string{"\x00\b\n\r\t\x1a\\Nq"}},
		{"missing and surplus", Default, "a\nb\tc\td\ne\tf\t\n", 2, 0, []string{"a", "b|c+", "e|f"}},
		{"surplus on the last line", Default, "a\tb\tc", 2, 0, []string{"a|b"}},
		{"empty line", Default, "a\n\nb\n", 2, 0, []string{"a", "", "b"}},
		{"escaped line end", Default, "a\\\nb\n", 1, 0, []string{"a\nb"}},
		{"enclosed", csv, `"a,b","c""d",NULL,"NULL"` + "\n", 4, 0, []string{`a,b|c"d|<NULL>|NULL`}},
		{"enclosed line break", csv, "\"a\nb\",c\n", 2, 0, []string{"a\nb|c"}},
		{"quote inside", csv, `"a"b",c` + "\n" + `x"y,z` + "\n", 2, 0, []string{`a"b|c`, `x"y|z`}},
		{"unterminated", csv, `1,"open`, 2, 0, []string{`1|"open`}},
		{"ignore lines", csv, "h\"1\nh2\\\nstill\n1,2\n", 2, 2, []string{"1|2"}},
		{"starting by", Format{FieldTerm: ",", Escaped: `\`, LineTerm: "\n", LineStart: "xx"}, "xxa,b\nzz xxc\nd\nxxe\n", 2, 0, []string{"a|b", "c", "e"}},
		{"long terminators", Format{FieldTerm: "||", Escaped: `\`, LineTerm: "##\n"}, "a|b||c#||d##\ne", 3, 0, []string{"a|b|c#|d", "e"}},
		{"quote as escape", Format{FieldTerm: ",", Enclosed: `"`, Escaped: `"`, LineTerm: "\n"}, `"fie""ld",x\n` + "\n", 2, 0, []string{`fie"ld|x\n`}},
		{"multi-byte", Format{FieldTerm: ",", Escaped: `\`, LineTerm: "\n", CharLen: func(b byte) int {
			if b >= 0x81 {
				return 2
			}
			return 1
		}}, "\x81\\,a\n", 2, 0, []string{"\x81\\|a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.f.Check(); err != nil {
				t.Fatal(err)
			}
			got := records(t, tt.f, tt.file, tt.n, tt.ignore)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("records:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestCanonicalRoundTrip: a record written with AppendRecord reads back
// with Default as the same fields, NULLs and surplus.
func TestCanonicalRoundTrip(t *testing.T) {
	csv := Format{FieldTerm: ",", Enclosed: `"`, Escaped: `\`, LineTerm: "\r\n"}
	file := "\"a\tb\",\\N,\"x\\\\y\"\r\n\"line\nbreak\",N,\"\\N\",extra\r\n\"\",NULL\r\n"
	want := records(t, csv, file, 3, 0)
	r := NewReader(strings.NewReader(file), csv)
	var rec Record
	var canon []byte
	for r.Read(&rec, 3) {
		canon = AppendRecord(canon, &rec, nil)
	}
	if got := records(t, Default, string(canon), 3, 0); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("round trip:\n got %q\nwant %q\ncanonical %q", got, want, canon)
	}
}

func TestCheck(t *testing.T) {
	for _, f := range []Format{
		{FieldTerm: "", Enclosed: "", LineTerm: "\n"},
		{FieldTerm: ",", LineTerm: ""},
		{FieldTerm: ",", Enclosed: "ab", LineTerm: "\n"},
	} {
		if err := f.Check(); !errors.Is(err, ErrFormat) {
			t.Errorf("Check(%+v) = %v, want ErrFormat", f, err)
		}
	}
}

// TestReaderSourceError: a source that fails ends the records with its
// error, not as a clean end of file.
func TestReaderSourceError(t *testing.T) {
	boom := errors.New("client gone")
	r := NewReader(iotest.TimeoutReader(strings.NewReader("a\tb\n")), Default)
	var rec Record
	for r.Read(&rec, 2) {
	}
	if r.Err() == nil {
		t.Errorf("no error from a failing source")
	}
	r = NewReader(errReader{boom}, Default)
	if r.Read(&rec, 2) || !errors.Is(r.Err(), boom) {
		t.Errorf("Read from a failed source: %v", r.Err())
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
