package wire

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// streamConn is a net.Conn that reads a fixed byte stream and discards
// writes; the fuzz target feeds ReadPacket with it.
type streamConn struct {
	r io.Reader
	w bytes.Buffer
}

func (c *streamConn) Read(b []byte) (int, error)       { return c.r.Read(b) }
func (c *streamConn) Write(b []byte) (int, error)      { return c.w.Write(b) }
func (c *streamConn) Close() error                     { return nil }
func (c *streamConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *streamConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *streamConn) SetDeadline(time.Time) error      { return nil }
func (c *streamConn) SetReadDeadline(time.Time) error  { return nil }
func (c *streamConn) SetWriteDeadline(time.Time) error { return nil }

// header returns a packet header.
func header(n int, seq byte) []byte { return []byte{byte(n), byte(n >> 8), byte(n >> 16), seq} }

// refPacket is the reference reading of one payload from stream at off:
// the payload, the offset after it and the next sequence number, or the
// error ReadPacket must give (a short stream, a wrong sequence number, a
// payload over the limit).
func refPacket(stream []byte, off int, seq byte, limit int) (payload []byte, next int, nextSeq byte, err error) {
	for {
		if len(stream)-off < 4 {
			return nil, 0, 0, io.ErrUnexpectedEOF
		}
		n := int(stream[off]) | int(stream[off+1])<<8 | int(stream[off+2])<<16
		if stream[off+3] != seq {
			return nil, 0, 0, ErrSequence
		}
		seq++
		off += 4
		if limit > 0 && len(payload)+n > limit {
			return nil, 0, 0, ErrPacketTooLarge
		}
		if len(stream)-off < n {
			return nil, 0, 0, io.ErrUnexpectedEOF
		}
		payload = append(payload, stream[off:off+n]...)
		off += n
		if n < MaxPayload {
			return payload, off, seq, nil
		}
	}
}

// FuzzReadPacket reads arbitrary byte streams as packets: lengths up to
// 16 MB announced with few bytes behind them, continuations, wrong
// sequence numbers, a payload limit. Each payload must equal the
// reference reading, a stream the reference refuses must fail, the joined
// buffer may hold at most about twice what arrived, and a payload written
// back must read the same.
func FuzzReadPacket(f *testing.F) {
	f.Add(byte(0), byte(0), append(header(3, 0), 0x03, 'S', ';'))
	f.Add(byte(0), byte(0), append(header(0, 0), header(1, 1)...))
	f.Add(byte(0xff), byte(0), append(header(2, 0), 0x0e, 0x0e, 0, 0, 0, 0))
	f.Add(byte(0), byte(0), header(MaxPayload, 0))                            // a 16 MB header and no bytes
	f.Add(byte(0), byte(0), append(header(MaxPayload, 0), 1, 2))              // a few bytes of it
	f.Add(byte(0), byte(0), append(header(1, 7), 1))                          // wrong sequence number
	f.Add(byte(0), byte(3), append(header(70000, 0), make([]byte, 70000)...)) // over a limit of 3000
	f.Add(byte(0), byte(80), append(header(70000, 0), make([]byte, 70000)...))
	// Streams of 16 MB and more are not seeds: the fuzzing engine copies
	// every input it runs to a worker and back, so one such seed took the
	// whole -fuzztime of make test to gather its baseline coverage on a
	// loaded machine, with no fuzzing done. TestReadPacketStreams runs them
	// through the same checks.
	f.Fuzz(checkStream)
}

// TestReadPacketStreams runs the fuzz target's checks (checkStream) over
// streams too long to be fuzzing seeds: payloads continued over packets
// of exactly MaxPayload, with a continuation longer than the read buffer.
func TestReadPacketStreams(t *testing.T) {
	continued := func(parts ...int) []byte {
		var s []byte
		for i, n := range parts {
			s = append(s, header(n, byte(i))...)
			s = append(s, bytes.Repeat([]byte{byte('a' + i)}, n)...)
		}
		return s
	}
	tests := []struct {
		name   string
		limitK byte
		stream []byte
	}{
		{"16MB+2", 0, continued(MaxPayload, 2)},
		{"16MB+64KiB+1", 0, continued(MaxPayload, 64<<10+1)},
		{"exactly 16MB", 0, continued(MaxPayload, 0)},
		{"continuation cut short", 0, continued(MaxPayload, 70000)[:MaxPayload+4+100]},
		{"over a limit", 100, continued(MaxPayload, 2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkStream(t, 0, tt.limitK, tt.stream)
		})
	}
}

// checkStream reads stream as packets (FuzzReadPacket): each payload must
// equal the reference reading, a stream the reference refuses must fail,
// the joined buffer may hold at most about twice what arrived, the budget
// must account for it, and a payload written back must read the same.
// resets' bits say before which packets the sequence restarts; limitK is
// the payload limit in thousands of bytes (0: none).
func checkStream(t *testing.T, resets, limitK byte, stream []byte) {
	sc := &streamConn{r: bytes.NewReader(stream)}
	c := NewConn(sc)
	limit := int(limitK) * 1000
	c.SetMaxPayload(limit)
	budget := NewBudget(64 << 20)
	c.SetBudget(budget)
	off, seq := 0, byte(0)
	for i := 0; ; i++ {
		if resets&(1<<(i%8)) != 0 {
			c.ResetSeq()
			seq = 0
		}
		want, next, nextSeq, wantErr := refPacket(stream, off, seq, limit)
		got, err := c.ReadPacket()
		if wantErr != nil {
			if wantErr == io.ErrUnexpectedEOF && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)) {
				return
			}
			if !errors.Is(err, wantErr) {
				t.Fatalf("packet %d at %d: %d bytes, %v; want %v", i, off, len(got), err, wantErr)
			}
			return
		}
		if err != nil {
			t.Fatalf("packet %d at %d: %v, want %d bytes", i, off, err, len(want))
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("packet %d at %d: %d bytes differ from the %d of the reference", i, off, len(got), len(want))
		}
		if held := cap(c.joined); held > 2*(next-off)+readChunk {
			t.Fatalf("packet %d: %d bytes held for a %d-byte packet", i, held, next-off)
		}
		if budget.Used() != int64(cap(c.joined)) {
			t.Fatalf("budget says %d bytes held, the buffer has %d", budget.Used(), cap(c.joined))
		}
		checkWriteBack(t, got)
		off, seq = next, nextSeq
	}
}

// checkWriteBack writes p as packets and reads it back.
func checkWriteBack(t *testing.T, p []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := NewConn(&streamConn{r: &buf})
	w.bw.Reset(&buf)
	if err := w.WritePacket(p); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := NewConn(&streamConn{r: &buf}).ReadPacket()
	if err != nil || !bytes.Equal(got, p) {
		t.Fatalf("written back: %d bytes, %v; want %d bytes", len(got), err, len(p))
	}
}
