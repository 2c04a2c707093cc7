package wire

import (
	"encoding/binary"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// LongData stands, in AppendExecute's arguments, for a parameter whose
// value went ahead in COM_STMT_SEND_LONG_DATA packets: the execute packet
// gives its type and no value, so a value of any length travels in
// chunks that each fit the server's max_allowed_packet.
type LongData struct {
	// Binary sends the type BLOB (a []byte value), else VARCHAR (a
	// string, read in the connection's character set).
	Binary bool
}

// AppendSendLongData appends a COM_STMT_SEND_LONG_DATA (the server does
// not answer it) carrying chunk for parameter param (0-based) of
// statement stmtID; the server appends successive chunks.
func AppendSendLongData(dst []byte, stmtID uint32, param uint16, chunk []byte) []byte {
	dst = append(dst, mysql.COM_STMT_SEND_LONG_DATA)
	dst = binary.LittleEndian.AppendUint32(dst, stmtID)
	dst = binary.LittleEndian.AppendUint16(dst, param)
	return append(dst, chunk...)
}
