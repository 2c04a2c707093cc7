package proxy

import (
	"crypto/subtle"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// changeUser answers COM_CHANGE_USER, as mysqljs's changeUser and
// MariaDB's connectors send it: the client logs in again on its
// connection, answering the greeting's scramble, and the session starts
// afresh as after COM_RESET_CONNECTION (its transaction rolled back, its
// variables, temporary tables and prepared statements gone), as the
// account and in the schema the command names. The password is checked
// as mysql_native_password; a client that answers for another plugin
// (caching_sha2_password) is refused with 1235. As MariaDB, the session
// is reset before the password is checked, and a wrong one gets 1045 and
// leaves the connection open, as the user it was; the failure counts
// against the client's address as a failed login does (admission.go).
func (s *Session) changeUser(data []byte) error {
	cu, err := wire.ParseChangeUser(data, s.clientFlags)
	if err != nil {
		return mysql.NewError(mysql.ER_MALFORMED_PACKET, "Malformed communication packet")
	}
	if len(s.scrambles) == 0 {
		// Over TLS the greeting went by under the encryption.
		return &NotSupportedError{What: "COM_CHANGE_USER on a connection whose login scramble the proxy did not see (TLS)"}
	}
	if cu.Plugin != "" && cu.Plugin != mysql.AUTH_NATIVE_PASSWORD {
		return &NotSupportedError{What: fmt.Sprintf("COM_CHANGE_USER answered for %s (mysql_native_password only)", cu.Plugin)}
	}
	s.resetConnection()
	if !s.passwordMatches(cu.User, cu.Auth) {
		using := "YES"
		if len(cu.Auth) == 0 {
			using = "NO"
		}
		err := mysql.NewDefaultError(mysql.ER_ACCESS_DENIED_ERROR, cu.User, hostOf(s.nc.RemoteAddr()), using)
		s.log.Info("change user failed", "to", cu.User, "err", errLine(err))
		if s.srv.loginFailures != nil {
			s.srv.loginFailures.failed(hostOf(s.nc.RemoteAddr()))
		}
		return err
	}
	s.setUser(cu.User)
	s.priv = nil
	s.log = s.srv.log.With("conn", s.id, "user", s.user)
	s.db = ""
	s.mu.Lock()
	s.shown.db = ""
	s.mu.Unlock()
	if cs, collation, ok := handshakeNames(uint8(cu.Charset)); cu.Charset != 0 && ok {
		s.vars.setNames(cs, collation)
	}
	if cu.DB != "" {
		if err := s.UseDB(cu.DB); err != nil {
			return err
		}
	}
	return s.writeOK(wire.OK{}, false)
}

// passwordMatches reports whether auth answers one of the login's
// scrambles with user's password (mysql_native_password).
func (s *Session) passwordMatches(user string, auth []byte) bool {
	cred, ok := (*s.srv.auth.users.Load())[user]
	if !ok {
		return false
	}
	for _, password := range cred.Passwords {
		if password == "" {
			if len(auth) == 0 {
				return true
			}
			continue
		}
		for _, scramble := range s.scrambles {
			if subtle.ConstantTimeCompare(auth, mysql.CalcNativePassword(scramble, []byte(password))) == 1 {
				return true
			}
		}
	}
	return false
}

// setUser makes name the session's user, for itself and as other
// sessions see it (SHOW PROCESSLIST, KILL).
func (s *Session) setUser(name string) {
	s.mu.Lock()
	s.user = name
	s.shown.user = name
	s.mu.Unlock()
}

// shownUser is the session's user, read from another session.
func (s *Session) shownUser() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shown.user
}
