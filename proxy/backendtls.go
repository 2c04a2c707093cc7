package proxy

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/shardflake/shardflake/config"
)

// backendTLSConfig builds the TLS settings of a data source's connections
// from its rules (config.DataSourceTLS); nil for DISABLED. The server's
// certificate is verified against the configured CA (else the system
// roots) and, except for VERIFY_CA, must name the host, unless the URL
// said verifyServerCertificate=false.
func backendTLSConfig(ds config.DataSource) (*tls.Config, error) {
	t := ds.TLS
	if t.Mode == 0 || t.Mode == config.TLSDisabled {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if cfg.ServerName == "" {
		cfg.ServerName = ds.Host
	}
	if t.CA != "" {
		pem, err := os.ReadFile(t.CA)
		if err != nil {
			return nil, fmt.Errorf("data source %s: tls ca: %w", ds.Name, err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("data source %s: tls ca %s holds no PEM certificate", ds.Name, t.CA)
		}
	}
	if t.Cert != "" {
		cert, err := tls.LoadX509KeyPair(t.Cert, t.Key)
		if err != nil {
			return nil, fmt.Errorf("data source %s: tls cert/key: %w", ds.Name, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	switch {
	case !t.Verify():
		cfg.InsecureSkipVerify = true
	case t.Mode == config.TLSVerifyCA:
		// The chain, not the name: Go verifies both or neither, so the
		// chain is checked here.
		cfg.InsecureSkipVerify = true
		roots := cfg.RootCAs
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the server sent no certificate")
			}
			inter := x509.NewCertPool()
			for _, c := range cs.PeerCertificates[1:] {
				inter.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter})
			return err
		}
	}
	return cfg, nil
}

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
