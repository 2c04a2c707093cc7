package config

import (
	"strings"
)

// TLSMode is how the proxy encrypts its connections to a data source,
// named as MySQL Connector/J's sslMode.
type TLSMode int

// TLS modes. PREFERRED, REQUIRED, VERIFY_CA and VERIFY_IDENTITY all
// verify the server's certificate chain (against DataSourceTLS.CA, else
// the system roots) and, except VERIFY_CA, that it names the host,
// unless the URL says verifyServerCertificate=false (PREFERRED and
// REQUIRED only): Connector/J's REQUIRED does not verify, shardflake does
// unless told not to.
const (
	TLSDisabled       TLSMode = iota + 1 // plain TCP (the default)
	TLSPreferred                         // TLS when the server offers it, else plain
	TLSRequired                          // TLS or no connection
	TLSVerifyCA                          // TLS, chain verified, any host name
	TLSVerifyIdentity                    // TLS, chain and host name verified
)

// String returns the mode as Connector/J spells it.
func (m TLSMode) String() string {
	switch m {
	case TLSDisabled:
		return "DISABLED"
	case TLSPreferred:
		return "PREFERRED"
	case TLSRequired:
		return "REQUIRED"
	case TLSVerifyCA:
		return "VERIFY_CA"
	case TLSVerifyIdentity:
		return "VERIFY_IDENTITY"
	}
	return "unknown"
}

// DataSourceTLS is how the proxy secures its connections to one data
// source: from the URL's useSSL, requireSSL, sslMode and
// verifyServerCertificate, and the data source's tls: {mode, ca, cert,
// key, serverName} (PEM file paths).
type DataSourceTLS struct {
	Mode TLSMode
	// SkipVerify: the URL said verifyServerCertificate=false (only with
	// PREFERRED or REQUIRED): encrypted, but to whichever server answers.
	SkipVerify bool
	// CA verifies the server's certificate (default: the system roots).
	CA string
	// Cert and Key are the proxy's client certificate, for servers that
	// require one (REQUIRE X509).
	Cert, Key string
	// ServerName is the name the certificate must carry (default: the
	// URL's host).
	ServerName string
}

// Verify reports whether the server's certificate chain is checked.
func (t DataSourceTLS) Verify() bool { return t.Mode != TLSDisabled && !t.SkipVerify }

// tlsModeNames maps what Connector/J (sslMode) and MariaDB Connector/J
// (sslMode=disable/trust/verify-ca/verify-full) write to a mode; trust is
// REQUIRED without verification.
var tlsModeNames = map[string]TLSMode{
	"disabled": TLSDisabled, "disable": TLSDisabled, "preferred": TLSPreferred, "required": TLSRequired,
	"trust": TLSRequired, "verify_ca": TLSVerifyCA, "verify-ca": TLSVerifyCA,
	"verify_identity": TLSVerifyIdentity, "verify-full": TLSVerifyIdentity,
}

// param returns the URL parameter named key in any case.
func param(params map[string]string, key string) (string, bool) {
	for k, v := range params {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return "", false
}

// urlTLS reads the TLS settings a data source URL's parameters spell
// (useSSL, requireSSL, sslMode, verifyServerCertificate,
// trustServerCertificate, serverSslCert): the settings and the mode the
// URL asked for (0 for none), or the sslMode value it does not know.
func urlTLS(params map[string]string) (t DataSourceTLS, urlMode TLSMode, unknown string) {
	t = DataSourceTLS{Mode: TLSDisabled}
	isTrue := func(v string) bool { return strings.EqualFold(v, "true") || v == "1" || strings.EqualFold(v, "yes") }
	if v, ok := param(params, "useSSL"); ok && isTrue(v) {
		urlMode = TLSPreferred
	} else if v, ok := param(params, "useSsl"); ok && isTrue(v) {
		urlMode = TLSPreferred
	}
	if v, ok := param(params, "requireSSL"); ok && isTrue(v) {
		urlMode = TLSRequired
	}
	if v, ok := param(params, "sslMode"); ok {
		m, known := tlsModeNames[strings.ToLower(v)]
		if !known {
			unknown = v
		}
		urlMode = m
		if strings.EqualFold(v, "trust") {
			t.SkipVerify = true
		}
	}
	if v, ok := param(params, "verifyServerCertificate"); ok && !isTrue(v) {
		t.SkipVerify = true
	}
	if v, ok := param(params, "trustServerCertificate"); ok && isTrue(v) {
		t.SkipVerify = true
	}
	if v, ok := param(params, "serverSslCert"); ok {
		t.CA = v
	}
	if urlMode != 0 {
		t.Mode = urlMode
	}
	return t, urlMode, unknown
}

// dataSourceTLS reads a data source's TLS settings: the URL's parameters,
// then its tls: key, which must agree with them.
func (d *decoder) dataSourceTLS(ds *DataSource, g *fieldSet, what string) {
	t, urlMode, unknown := urlTLS(ds.Params)
	if unknown != "" {
		d.errorf(g.get("url"), "%s: url sslMode=%s: want DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY", what, unknown)
	}
	if f := d.fields(g.get("tls"), what+" tls", "mode", "ca", "cert", "key", "serverName"); f != nil {
		if f.has("mode") {
			v := d.str(f.get("mode"), what+" tls mode")
			m, known := tlsModeNames[strings.ToLower(v)]
			switch {
			case !known || strings.EqualFold(v, "trust"):
				d.errorf(f.get("mode"), "%s: tls mode %q: want DISABLED, PREFERRED, REQUIRED, VERIFY_CA or VERIFY_IDENTITY", what, v)
			case urlMode != 0 && m != urlMode:
				d.errorf(f.get("mode"), "%s: tls mode %s differs from the url's %s", what, m, urlMode)
			}
			t.Mode = m
		} else if urlMode == 0 {
			t.Mode = TLSVerifyIdentity // a tls: section asks for TLS
		}
		if ca := d.str(f.get("ca"), what+" tls ca"); ca != "" {
			t.CA = ca
		}
		t.Cert = d.str(f.get("cert"), what+" tls cert")
		t.Key = d.str(f.get("key"), what+" tls key")
		t.ServerName = d.str(f.get("serverName"), what+" tls serverName")
		if (t.Cert == "") != (t.Key == "") {
			d.errorf(g.keyNode("tls"), "%s: tls needs both cert and key (PEM file paths), or neither", what)
		}
	}
	if t.SkipVerify && t.Mode >= TLSVerifyCA {
		d.errorf(g.keyNode(urlKeyOf(g)), "%s: sslMode %s verifies the server's certificate; verifyServerCertificate=false contradicts it", what, t.Mode)
	}
	if t.Mode == TLSDisabled && (t.CA != "" || t.Cert != "") {
		d.errorf(g.keyNode(urlKeyOf(g)), "%s: TLS settings (ca, cert) with sslMode DISABLED; set a mode", what)
	}
	ds.TLS = t
}

func urlKeyOf(g *fieldSet) string {
	if g.has("jdbcUrl") {
		return "jdbcUrl"
	}
	return "url"
}
