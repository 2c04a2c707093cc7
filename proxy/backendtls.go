package proxy

import (
	"crypto/tls"
	"strings"

	"github.com/shardflake/shardflake/config"
)

// errServerWithoutTLS is go-mysql's answer when the server's greeting
// does not offer TLS; PREFERRED then connects in plain text.
func serverWithoutTLS(err error) bool {
	return err != nil && strings.Contains(err.Error(), "does not support TLS")
}

// tlsMode is the data source's TLS mode with its verification, for SHOW
// STORAGE UNITS: "VERIFY_IDENTITY", "REQUIRED (certificate not
// verified)", "DISABLED".
func (p *pool) tlsMode() string {
	t := p.ds.TLS
	if t.Mode == 0 {
		return config.TLSDisabled.String()
	}
	if t.Mode != config.TLSDisabled && !t.Verify() {
		return t.Mode.String() + " (certificate not verified)"
	}
	return t.Mode.String()
}

// lastTLS is the encryption of the pool's last login: "TLS 1.3", "off",
// or nil before the first.
func (p *pool) lastTLS() any {
	if s := p.tlsState.Load(); s != nil {
		return *s
	}
	return nil
}

// tlsState describes a backend connection's encryption for SHOW STORAGE
// UNITS: "TLS 1.3", or "off".
func tlsState(version uint16, on bool) string {
	if !on {
		return "off"
	}
	return tls.VersionName(version)
}
