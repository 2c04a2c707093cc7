package proxy

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"

	"github.com/shardflake/shardflake/config"
)

// ServerVersion is the version the proxy announces when the rules file
// sets no server.version and the default data source's version is not
// known (config.DefaultVersion says why a 5.7 number).
const ServerVersion = config.DefaultVersion

// authHandler checks logins against the rules file's users.
type authHandler struct {
	// users are the accounts by name; a reload replaces the map.
	users  atomic.Pointer[map[string]server.Credential]
	plugin string
	log    *slog.Logger
	// failures throttles addresses that keep failing (admission.go).
	failures *loginFailures
}

func newAuthHandler(users []config.User, plugin config.AuthPlugin, log *slog.Logger) *authHandler {
	h := &authHandler{plugin: authPluginName(plugin), log: log}
	h.setUsers(users)
	return h
}

// setUsers makes users the accounts later logins are checked against.
func (h *authHandler) setUsers(users []config.User) {
	m := map[string]server.Credential{}
	for _, u := range users {
		m[u.Name] = server.Credential{Passwords: []string{u.Password}, AuthPluginName: h.plugin}
	}
	h.users.Store(&m)
}

func authPluginName(p config.AuthPlugin) string {
	if p == config.AuthCachingSHA2 {
		return mysql.AUTH_CACHING_SHA2_PASSWORD
	}
	return mysql.AUTH_NATIVE_PASSWORD
}

// GetCredential returns the user's password for go-mysql to check. An
// unknown user gets a password nobody knows, so the client sees 1045
// "Access denied" as for a wrong password, and cannot tell the two apart.
func (h *authHandler) GetCredential(username string) (server.Credential, bool, error) {
	if c, ok := (*h.users.Load())[username]; ok {
		return c, true, nil
	}
	return server.Credential{Passwords: []string{rand.Text()}, AuthPluginName: h.plugin}, true, nil
}

// OnAuthSuccess admits a user that passed the password check: its login
// schema must exist and a maxConnections slot be free (admission.go). The
// OK that ends the login says AUTOCOMMIT, as MariaDB's does.
func (h *authHandler) OnAuthSuccess(c *server.Conn) error {
	if lc := loginConnOf(c.Conn.Conn); lc != nil {
		if err := lc.admit(); err != nil {
			return err
		}
		h.failures.succeeded(hostOf(c.RemoteAddr()))
	}
	c.SetStatus(greetingStatus)
	return nil
}

// OnAuthFailure logs the failed login (never the password) and counts a
// wrong password against the client's address. A session's handler
// (sessionAuth) logs it under the id its greeting announced instead.
func (h *authHandler) OnAuthFailure(c *server.Conn, err error) {
	h.loginFailed(c, c.ConnectionID(), err)
}

func (h *authHandler) loginFailed(c *server.Conn, id uint32, err error) {
	h.log.Info("login failed", "conn", id, "user", c.GetUser(), "remote", c.RemoteAddr().String(), "err", errLine(err))
	var my *mysql.MyError
	if errors.As(err, &my) && my.Code == mysql.ER_ACCESS_DENIED_ERROR && h.failures != nil {
		h.failures.failed(hostOf(c.RemoteAddr()))
	}
}

// newMySQLServer builds go-mysql's server settings: version, the default
// authentication plugin and TLS when a certificate is configured.
// caching_sha2_password without TLS needs an RSA key to exchange the
// password; one is generated for the life of the process.
func newMySQLServer(cfg config.Server) (*server.Server, error) {
	var tlsConfig *tls.Config
	if cfg.TLSCert != "" || cfg.TLSKey != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TLSCert, cfg.TLSKey)
		if err != nil {
			return nil, fmt.Errorf("server.tls: %w", err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	plugin := authPluginName(cfg.AuthPlugin)
	var key *rsa.PrivateKey
	if plugin == mysql.AUTH_CACHING_SHA2_PASSWORD {
		if tlsConfig != nil {
			key, _ = tlsConfig.Certificates[0].PrivateKey.(*rsa.PrivateKey)
		}
		if key == nil {
			var err error
			if key, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
				return nil, fmt.Errorf("RSA key for caching_sha2_password: %w", err)
			}
		}
	}
	version := cfg.Version
	if version == "" {
		version = ServerVersion
	}
	srv := server.NewServer(version, charsetUTF8MB4, plugin, key, tlsConfig)
	// LOAD DATA LOCAL INFILE: the proxy relays the client's file
	// (loaddata.go); a client still decides whether it sends one.
	if err := srv.SetCapability(mysql.CLIENT_LOCAL_FILES); err != nil {
		return nil, err
	}
	return srv, nil
}
