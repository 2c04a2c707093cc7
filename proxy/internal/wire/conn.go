package wire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"
)

// MaxPayload is the largest payload of one packet; longer payloads continue
// in further packets.
const MaxPayload = 1<<24 - 1

// ErrSequence means the peer sent a packet out of order: the connection is
// no longer usable.
var ErrSequence = errors.New("wire: packet out of sequence")

// ErrPacketTooLarge means the peer sent a payload above the limit set with
// SetMaxPayload; the rest of it is unread, so the connection is no longer
// usable.
var ErrPacketTooLarge = errors.New("wire: packet too large")

// Conn reads and writes packets on one connection. Reads are buffered and
// return slices of the read buffer where possible; writes are buffered until
// Flush, so a whole response costs one write system call.
type Conn struct {
	nc  net.Conn
	src pushback
	br  *bufio.Reader
	bw  *bufio.Writer
	seq uint8

	joined     []byte  // payload longer than the read buffer, or split over several packets
	maxPayload int     // largest joined payload accepted; 0: no limit
	budget     *Budget // what joined draws on; nil: no limit
	// idleTimeout and readTimeout bound reads (SetReadTimeouts).
	idleTimeout time.Duration
	readTimeout time.Duration
	deadlineSet bool // a read deadline of theirs is set
	// idleAt is the idle deadline that is set (zero: the deadline set, if
	// any, is the read timeout's). It outlives ReadPacket and is moved
	// only when it falls short of the idle timeout from now, so a command
	// read does not reset a runtime timer every time (idleDeadline).
	idleAt  time.Time
	scratch []byte  // for callers building packets (Scratch)
	hdr     [4]byte // a packet header being written (here, not on the heap per packet)
}

// NewConn wraps nc, which must have finished its handshake. Nothing may be
// buffered elsewhere for nc: the handshake protocols guarantee it, because
// the peer waits for the handshake's last packet before sending more.
func NewConn(nc net.Conn) *Conn {
	c := &Conn{nc: nc}
	c.src.r = nc
	var w io.Writer = nc
	if r := newRawIO(nc); r != nil {
		c.src.r, w = r, r
	}
	c.br = bufio.NewReaderSize(&c.src, 64<<10)
	c.bw = bufio.NewWriterSize(w, 64<<10)
	return c
}

// NetConn returns the underlying connection.
func (c *Conn) NetConn() net.Conn { return c.nc }

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// ResetSeq starts a new command: the next packet read or written has
// sequence number 0.
func (c *Conn) ResetSeq() { c.seq = 0 }

// SetSeq sets the sequence number the next packet read or written must
// have: 1 to read the response to a command written elsewhere (a
// pipelined command).
func (c *Conn) SetSeq(seq byte) { c.seq = seq }

// Seq returns the sequence number the next packet read or written must
// have: after writing a command, the one its response starts with.
func (c *Conn) Seq() byte { return c.seq }

// ReadPacket reads one payload, joining continuation packets. The slice is
// only valid until the next read on c. A payload that fits the read buffer
// is returned in place; a longer one, or one that continues in further
// packets, is copied into a buffer of c's that grows as its bytes arrive,
// never by what a header announces, so a peer that announces a large packet
// and sends nothing holds no memory for it.
func (c *Conn) ReadPacket() ([]byte, error) {
	c.dropJoined()
	if c.readTimeout > 0 {
		defer c.clearReadTimeout()
	}
	if c.idleTimeout > 0 {
		if c.br.Buffered() < 4 {
			c.idleDeadline()
		} else {
			// The header has arrived: the idle deadline, which may have
			// passed while a statement ran, has no say in this read.
			c.clearDeadline()
		}
	}
	n, err := c.readHeader()
	if err != nil {
		return nil, err
	}
	if n < MaxPayload && n <= c.br.Size() {
		if c.maxPayload > 0 && n > c.maxPayload {
			return nil, fmt.Errorf("%w: more than %d bytes", ErrPacketTooLarge, c.maxPayload)
		}
		if c.readTimeout > 0 && c.br.Buffered() < n {
			c.deadline(c.readTimeout)
		}
		p, err := c.br.Peek(n)
		if err != nil {
			return nil, readErr(err)
		}
		c.br.Discard(n)
		return p, nil
	}
	c.joined = c.joined[:0]
	for {
		if c.maxPayload > 0 && len(c.joined)+n > c.maxPayload {
			return nil, fmt.Errorf("%w: more than %d bytes", ErrPacketTooLarge, c.maxPayload)
		}
		if err := c.appendPayload(n); err != nil {
			return nil, err
		}
		if n < MaxPayload {
			return c.joined, nil
		}
		if c.readTimeout > 0 && c.br.Buffered() < 4 {
			c.deadline(c.readTimeout)
		}
		if n, err = c.readHeader(); err != nil {
			return nil, err
		}
	}
}

// readChunk is how much of a long payload is read (and allocated) at a time.
const readChunk = 1 << 20

// appendPayload reads the n bytes of one packet's payload onto c.joined,
// a chunk at a time: the buffer grows as bytes arrive, and each chunk
// must arrive within the read timeout.
func (c *Conn) appendPayload(n int) error {
	for n > 0 {
		k := min(n, readChunk)
		if err := c.grow(k); err != nil {
			return err
		}
		if c.readTimeout > 0 && c.br.Buffered() < k {
			c.deadline(c.readTimeout)
		}
		dst := c.joined
		m, err := io.ReadFull(c.br, dst[len(dst):len(dst)+k])
		c.joined = dst[:len(dst)+m]
		if err != nil {
			return readErr(err)
		}
		n -= k
	}
	return nil
}

// readHeader reads one packet header, checks its sequence number and
// returns the payload length.
func (c *Conn) readHeader() (int, error) {
	hdr, err := c.br.Peek(4)
	if err != nil {
		return 0, readErr(err)
	}
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	seq := hdr[3]
	if _, err := c.br.Discard(4); err != nil {
		return 0, readErr(err)
	}
	if seq != c.seq {
		return 0, fmt.Errorf("%w: got %d, want %d", ErrSequence, seq, c.seq)
	}
	c.seq++
	return n, nil
}

// SetMaxPayload limits the payload ReadPacket accepts, joined over its
// packets (0: no limit); a longer one is refused with ErrPacketTooLarge
// as soon as a header announces it, before its bytes are read.
func (c *Conn) SetMaxPayload(n int) { c.maxPayload = n }

// readErr marks read errors as coming from this package; errors.Is still
// finds io.EOF, net.ErrClosed and timeouts underneath.
func readErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("wire: read: %w", err)
}

// Buffered reports whether the peer has sent bytes that are not read yet.
func (c *Conn) Buffered() bool { return c.br.Buffered() > 0 || len(c.src.pending) > 0 }

// WritePacket buffers one payload, splitting it into continuation packets
// when it is MaxPayload bytes or longer.
func (c *Conn) WritePacket(payload []byte) error {
	for {
		n := min(len(payload), MaxPayload)
		c.hdr = [4]byte{byte(n), byte(n >> 8), byte(n >> 16), c.seq}
		c.seq++
		if _, err := c.bw.Write(c.hdr[:]); err != nil {
			return fmt.Errorf("wire: write: %w", err)
		}
		if _, err := c.bw.Write(payload[:n]); err != nil {
			return fmt.Errorf("wire: write: %w", err)
		}
		payload = payload[n:]
		if n < MaxPayload {
			return nil
		}
	}
}

// Flush sends everything buffered.
func (c *Conn) Flush() error {
	if err := c.bw.Flush(); err != nil {
		return fmt.Errorf("wire: write: %w", err)
	}
	return nil
}

// Scratch returns an empty slice with the capacity of earlier packets, for
// building the next packet; give it back with SetScratch so its capacity is
// kept.
func (c *Conn) Scratch() []byte { return c.scratch[:0] }

// SetScratch keeps b's storage for the next Scratch.
func (c *Conn) SetScratch(b []byte) {
	if cap(b) <= 1<<20 {
		c.scratch = b[:0]
	}
}

// SetDeadline sets the read and write deadlines of the connection.
func (c *Conn) SetDeadline(t time.Time) error { return c.nc.SetDeadline(t) }

// SetReadDeadline sets the read deadline of the connection.
func (c *Conn) SetReadDeadline(t time.Time) error { return c.nc.SetReadDeadline(t) }

// SetWriteDeadline sets the write deadline of the connection.
func (c *Conn) SetWriteDeadline(t time.Time) error { return c.nc.SetWriteDeadline(t) }

// Watch notices the peer closing the connection while its owner is busy
// elsewhere (running a statement the client waits for): it reads on a
// goroutine of its own and calls gone if the read fails. Bytes the peer sends
// meanwhile are kept for the next ReadPacket. stop ends the watch and must be
// called, by the owner, before the owner reads again.
func (c *Conn) Watch(gone func()) (stop func()) {
	if c.Buffered() || c.src.err != nil {
		// The peer has already sent its next command: it is alive, and
		// reading further would only reorder its bytes.
		return func() {}
	}
	// The idle deadline left by ReadPacket must not end the watching
	// read of a statement that runs longer than it.
	c.clearDeadline()
	var stopping atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		var b [512]byte
		n, err := c.nc.Read(b[:])
		c.src.pending = append(c.src.pending, b[:n]...)
		if err == nil {
			return
		}
		var ne net.Error
		if stopping.Load() && errors.As(err, &ne) && ne.Timeout() {
			return
		}
		c.src.err = err
		gone()
	}()
	return func() {
		stopping.Store(true)
		c.nc.SetReadDeadline(time.Unix(1, 0))
		<-done
		c.nc.SetReadDeadline(time.Time{})
	}
}

// pushback is the reader under the buffered reader: it hands out what a
// Watch read first, then the error that read got, then reads nc.
type pushback struct {
	r       io.Reader // nc, or its rawIO
	pending []byte
	err     error
}

func (p *pushback) Read(b []byte) (int, error) {
	if len(p.pending) > 0 {
		n := copy(b, p.pending)
		p.pending = p.pending[n:]
		return n, nil
	}
	if p.err != nil {
		return 0, p.err
	}
	return p.r.Read(b)
}

// ErrOverOnePacket is a payload AppendPacket cannot frame as one packet.
var ErrOverOnePacket = errors.New("wire: payload does not fit one packet")

// AppendPacket appends to dst one packet of sequence id seq whose payload
// build appends (to the slice it is given, returning it): the header goes
// in front once the length is known, so commands of several clients can
// be queued in one buffer and written at once. A payload of MaxPayload
// bytes or more is ErrOverOnePacket, and dst is given back unchanged.
func AppendPacket(dst []byte, seq byte, build func([]byte) ([]byte, error)) ([]byte, error) {
	start := len(dst)
	buf, err := build(append(dst, 0, 0, 0, 0))
	if err != nil {
		return dst[:start], err
	}
	n := len(buf) - start - 4
	if n >= MaxPayload {
		return dst[:start], ErrOverOnePacket
	}
	buf[start], buf[start+1], buf[start+2], buf[start+3] = byte(n), byte(n>>8), byte(n>>16), seq
	return buf, nil
}
