package proxy

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// What a logged-in client may make the proxy hold (server: Limits): a
// command up to maxAllowedPacket, joined in memory drawn from the
// server's packetMemoryBytes, arriving without stalls longer than
// netReadTimeout, after at most waitTimeout of silence; up to
// maxPreparedStatements prepared statements.

// errPacketTooLarge is MySQL's ER_NET_PACKET_TOO_LARGE: a command
// longer than server.maxAllowedPacket. MariaDB sends it and closes the
// connection, as the proxy does.
var errPacketTooLarge = &mysql.MyError{Code: mysql.ER_NET_PACKET_TOO_LARGE, State: "08S01",
	Message: "Got a packet bigger than 'max_allowed_packet' bytes"}

// errLongDataTooLarge: COM_STMT_SEND_LONG_DATA sent more than
// maxAllowedPacket for the parameters of one connection; the execute
// that would use them fails, the connection stays usable.
var errLongDataTooLarge = &mysql.MyError{Code: mysql.ER_NET_PACKET_TOO_LARGE, State: "HY000",
	Message: "Parameter of prepared statement which is set through mysql_send_long_data() is longer than 'max_allowed_packet' bytes"}

// packetMemoryError: the long commands of all connections already hold
// server.packetMemoryBytes.
func packetMemoryError(budget int64) *mysql.MyError {
	return &mysql.MyError{Code: mysql.ER_OUTOFMEMORY, State: "HY001",
		Message: fmt.Sprintf("Out of memory: the long commands of all connections hold server.packetMemoryBytes (%d bytes); try again later", budget)}
}

// tooManyPreparedError is MySQL's ER_MAX_PREPARED_STMT_COUNT_REACHED.
func tooManyPreparedError(max int) *mysql.MyError {
	return &mysql.MyError{Code: 1461, State: "42000",
		Message: fmt.Sprintf("Can't create more than max_prepared_stmt_count statements (current value: %d)", max)}
}

// limits returns the server's limits, defaults for those a hand-built
// Rules left zero.
func (s *Server) limits() config.Limits {
	l := s.current().rules.Server.Limits
	if l.MaxAllowedPacket == 0 {
		l.MaxAllowedPacket = config.DefaultMaxAllowedPacket
	}
	if l.PacketMemoryBytes == 0 {
		l.PacketMemoryBytes = config.DefaultPacketMemoryBytes
	}
	if l.WaitTimeout == 0 {
		l.WaitTimeout = config.DefaultWaitTimeout
	}
	if l.NetReadTimeout == 0 {
		l.NetReadTimeout = config.DefaultNetReadTimeout
	}
	if l.MaxHandshakes == 0 {
		l.MaxHandshakes = config.DefaultMaxHandshakes
	}
	if l.MaxPreparedStatements == 0 {
		l.MaxPreparedStatements = config.DefaultMaxPreparedStatements
	}
	return l
}

// applyLimits bounds what the session's connection reads.
func (s *Session) applyLimits() {
	l := s.srv.limits()
	s.wc.SetMaxPayload(int(l.MaxAllowedPacket))
	s.wc.SetBudget(s.srv.packetBudget)
	s.wc.SetReadTimeouts(l.WaitTimeout, l.NetReadTimeout)
}

// drainFor is how long a connection closed for a command too large keeps
// reading (and dropping) what the client still sends, so the client
// gets to read the error instead of a reset connection.
const drainFor = time.Second

// readFailed ends a session whose command could not be read: a command
// too large, or over the memory budget, gets its error first.
func (s *Session) readFailed(err error) {
	var answer *mysql.MyError
	switch {
	case errors.Is(err, wire.ErrPacketTooLarge):
		answer = errPacketTooLarge
	case errors.Is(err, wire.ErrBudget):
		answer = packetMemoryError(s.srv.packetBudget.Limit())
	case errors.Is(err, os.ErrDeadlineExceeded):
		s.log.Debug("closing a connection idle past server.waitTimeout or stalled past server.netReadTimeout", "err", errLine(err))
		return
	default:
		return
	}
	s.log.Info("closing a connection whose command is too large", "err", errLine(err))
	s.srv.obs.Error(answer.Code)
	s.wc.ReleaseBudget()
	s.nc.SetWriteDeadline(time.Now().Add(drainFor))
	s.wc.WritePacket(wire.AppendErr(s.wc.Scratch(), answer.Code, answer.State, answer.Message))
	if s.wc.Flush() != nil {
		return
	}
	s.nc.SetReadDeadline(time.Now().Add(drainFor))
	io.Copy(io.Discard, io.LimitReader(s.nc, 1<<30))
}

// addLongData appends a COM_STMT_SEND_LONG_DATA chunk to a parameter,
// within maxAllowedPacket for the connection and the server's memory
// budget; past them the statement's next execute fails.
func (s *Session) addLongData(ps *preparedStmt, param int, chunk []byte) {
	if ps.longDataErr != nil {
		return
	}
	if s.longData+len(chunk) > int(s.srv.limits().MaxAllowedPacket) {
		ps.longDataErr = errLongDataTooLarge
		s.dropLongData(ps)
		return
	}
	if !s.srv.packetBudget.Reserve(len(chunk)) {
		ps.longDataErr = packetMemoryError(s.srv.packetBudget.Limit())
		s.dropLongData(ps)
		return
	}
	s.longData += len(chunk)
	ps.longDataBytes += len(chunk)
	if ps.longData == nil {
		ps.longData = make([][]byte, ps.params)
	}
	if ps.longData[param] == nil {
		ps.longData[param] = []byte{}
	}
	ps.longData[param] = append(ps.longData[param], chunk...)
}

// dropLongData forgets a statement's long data and gives its memory back.
func (s *Session) dropLongData(ps *preparedStmt) {
	s.srv.packetBudget.Release(ps.longDataBytes)
	s.longData -= ps.longDataBytes
	ps.longDataBytes = 0
	ps.longData = nil
}

// dropAllLongData forgets the long data of every statement (the session
// ends or is reset).
func (s *Session) dropAllLongData() {
	for _, ps := range s.stmts {
		s.dropLongData(ps)
	}
}
