package proxy

import (
	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// longDataChunk is the most of one argument a COM_STMT_SEND_LONG_DATA
// packet carries to a data source, and the length from which an argument
// goes that way rather than inside COM_STMT_EXECUTE: well below any
// max_allowed_packet a server runs with (MariaDB's default is 16 MB), so
// a LONGBLOB the client sent in pieces reaches the data source in pieces
// too instead of as one packet it refuses with 1153.
const longDataChunk = 1 << 20

// sendLongData sends, ahead of COM_STMT_EXECUTE of st, every argument
// longer than longDataChunk as COM_STMT_SEND_LONG_DATA packets (the
// server does not answer them), and returns the arguments for the
// execute packet, with wire.LongData in their place. args is not
// modified.
func (bc *backendConn) sendLongData(st *backendStmt, args []any) ([]any, error) {
	var out []any
	for i, a := range args {
		var data []byte
		var long wire.LongData
		switch x := a.(type) {
		case string:
			if len(x) <= longDataChunk {
				continue
			}
			data = []byte(x)
		case []byte:
			if len(x) <= longDataChunk {
				continue
			}
			data, long.Binary = x, true
		default:
			continue
		}
		if out == nil {
			out = append([]any(nil), args...)
		}
		out[i] = long
		for len(data) > 0 {
			n := min(len(data), longDataChunk)
			bc.wc.ResetSeq()
			buf := wire.AppendSendLongData(bc.wc.Scratch(), st.id, uint16(i), data[:n])
			err := bc.wc.WritePacket(buf)
			bc.wc.SetScratch(buf)
			if err != nil {
				return nil, bc.lost(err)
			}
			data = data[n:]
		}
	}
	if out == nil {
		return args, nil
	}
	return out, nil
}
