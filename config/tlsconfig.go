package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// TLSConfig builds the TLS settings of the data source's connections
// from its rules (DataSourceTLS); nil for DISABLED. The server's
// certificate is verified against the configured CA (else the system
// roots) and, except for VERIFY_CA, must name the host, unless the URL
// said verifyServerCertificate=false.
func (ds DataSource) TLSConfig() (*tls.Config, error) {
	t := ds.TLS
	if t.Mode == 0 || t.Mode == TLSDisabled {
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
	case t.Mode == TLSVerifyCA:
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
