package wire

import (
	"bytes"
	"encoding/binary"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// ChangeUser is a decoded COM_CHANGE_USER: the account a client logs in
// as again on its connection, answering the greeting's scramble.
type ChangeUser struct {
	User    string
	Auth    []byte // the scramble's answer; aliases the packet
	DB      string
	Charset uint16 // 0 when the client sent none
	Plugin  string // the authentication plugin Auth is for; "" when not named
}

// ParseChangeUser decodes the payload of COM_CHANGE_USER (without the
// command byte) sent by a client that logged in with capabilities caps:
// the user, the scramble's answer (length-prefixed with
// CLIENT_SECURE_CONNECTION, else up to a NUL), the schema, then,
// optionally, the character set and the plugin name; connection
// attributes after them are ignored.
func ParseChangeUser(p []byte, caps uint32) (ChangeUser, error) {
	var cu ChangeUser
	cut := func() (string, bool) {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			return "", false
		}
		s := string(p[:i])
		p = p[i+1:]
		return s, true
	}
	var ok bool
	if cu.User, ok = cut(); !ok {
		return cu, ErrMalformed
	}
	if caps&mysql.CLIENT_SECURE_CONNECTION != 0 {
		if len(p) < 1 || len(p) < 1+int(p[0]) {
			return cu, ErrMalformed
		}
		cu.Auth, p = p[1:1+int(p[0])], p[1+int(p[0]):]
	} else {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			return cu, ErrMalformed
		}
		cu.Auth, p = p[:i], p[i+1:]
	}
	if cu.DB, ok = cut(); !ok {
		// The schema may end the packet without its NUL.
		cu.DB, p = string(p), nil
	}
	if len(p) >= 2 {
		cu.Charset, p = binary.LittleEndian.Uint16(p), p[2:]
	}
	if caps&mysql.CLIENT_PLUGIN_AUTH != 0 && len(p) > 0 {
		if cu.Plugin, ok = cut(); !ok {
			cu.Plugin = string(p)
		}
	}
	return cu, nil
}

// AuthSwitchScramble returns the scramble of an authentication switch
// request payload p (0xfe, the plugin's name, NUL, the scramble and a
// NUL), or false when p is none.
func AuthSwitchScramble(p []byte) ([]byte, bool) {
	if len(p) < 9 || p[0] != HeaderEOF {
		return nil, false
	}
	i := bytes.IndexByte(p[1:], 0)
	if i < 0 {
		return nil, false
	}
	return bytes.Clone(bytes.TrimSuffix(p[1+i+1:], []byte{0})), true
}

// GreetingScramble returns the scramble a protocol-10 greeting payload p
// carries (its two parts joined, without the NUL that ends the second),
// or false when p is no such greeting.
func GreetingScramble(p []byte) ([]byte, bool) {
	at := greetingCapsAt(p)
	if at < 0 {
		return nil, false
	}
	// The first 8 bytes stand before the filler; the rest after the
	// reserved bytes and the extended capabilities, its length given
	// (with its NUL) by the auth data length byte.
	scramble := bytes.Clone(p[at-1-8 : at-1])
	rest := p[at+18:]
	n := max(13, int(p[at+7])-8)
	if len(rest) < n-1 {
		return nil, false
	}
	return append(scramble, rest[:n-1]...), true
}
