package proxy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	path string // the CA certificate, PEM
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func newTestCA(t *testing.T, dir, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &testCA{cert: cert, key: key, path: filepath.Join(dir, name+".pem")}
	writePEM(t, ca.path, "CERTIFICATE", der)
	return ca
}

// startTLSOnlyServer starts a MariaDB with a certificate of a new CA that
// refuses connections without TLS (--require-secure-transport); it
// returns the server and the CA (ca.path is its PEM file).
func startTLSOnlyServer(t *testing.T, name string, databases ...string) (*mariadbtest.Server, *testCA) {
	t.Helper()
	dir := t.TempDir()
	ca := newTestCA(t, dir, name)
	cert, key := ca.issue(t, dir, "mariadb")
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	b := mariadbtest.Start(t, mariadbtest.Options{
		Args:      []string{"--ssl-cert=" + cert, "--ssl-key=" + key, "--ssl-ca=" + ca.path, "--require-secure-transport=ON"},
		ClientTLS: &tls.Config{RootCAs: roots, ServerName: "127.0.0.1"},
		Databases: databases,
	})
	return b, ca
}

// issue makes a server certificate for 127.0.0.1 and localhost; it
// returns the certificate and key files.
func (ca *testCA) issue(t *testing.T, dir, name string) (certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	writePEM(t, certPath, "CERTIFICATE", der)
	writePEM(t, keyPath, "PRIVATE KEY", pk)
	return certPath, keyPath
}

// tlsRules is the test rules file with ds_0 and ds_1 on b, each with its
// own URL parameters and tls: settings (what follows the database name in
// the URL), as root unless they name a username.
func tlsRules(b *mariadbtest.Server, prefix, ds0, ds1 string) string {
	withUser := func(ds string) string {
		if strings.Contains(ds, "username:") {
			return ds
		}
		return ds + `, username: root, password: ""`
	}
	ds0, ds1 = withUser(ds0), withUser(ds1)
	return fmt.Sprintf(`databaseName: sharding_db
server:
  listen: 127.0.0.1:0
  metricsListen: 127.0.0.1:1
  users:
    - { user: app, password: app-secret, hints: true, otherSchemas: true }
dataSources:
  ds_0: { url: "jdbc:mysql://%[1]s/%[2]s_0%[3]s }
  ds_1: { url: "jdbc:mysql://%[1]s/%[2]s_1%[4]s }
rules:
%[5]s`, b.Addr(), prefix, ds0, ds1, defaultTestRules)
}

// onDataSource runs a query on one data source through the proxy and
// returns its one value.
func onDataSource(db *sql.DB, ds, query string) (string, error) {
	var v string
	err := db.QueryRow(fmt.Sprintf("/* SHARDINGSPHERE_HINT: DATA_SOURCE_NAME=%s */ %s", ds, query)).Scan(&v)
	return v, err
}

// TestBackendTLS runs the proxy against a MariaDB started with its own
// certificate and --require-secure-transport: the modes that verify
// accept it only with the right CA (and host name, but for VERIFY_CA),
// the proxy's sessions are encrypted on the server's side, SHOW STORAGE
// UNITS and the metrics say so, and a plain or unverifiable data source
// fails alone, naming the cause.
func TestBackendTLS(t *testing.T) {
	b, ca := startTLSOnlyServer(t, "shardflake-test-ca")
	dir := t.TempDir()
	other := newTestCA(t, dir, "someone-else")
	backends := []*mariadbtest.Server{b, b} // ds_0 and ds_1 both on b

	// Both verifying modes accept the server; VERIFY_CA with a name the
	// certificate does not carry too.
	e := startOpsEnv(t, opsOptions{backends: backends, prefix: "tlsok", rules: tlsRules(b, "tlsok",
		`?sslMode=VERIFY_IDENTITY", tls: { ca: `+ca.path+` }`,
		`?sslMode=VERIFY_CA", tls: { ca: `+ca.path+`, serverName: not-the-host.example }`)})
	db := e.open(t)
	for _, ds := range []string{"ds_0", "ds_1"} {
		version, err := onDataSource(db, ds, "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'SSL_VERSION'")
		if err != nil || !strings.HasPrefix(version, "TLSv1.") {
			t.Errorf("%s: the backend session's Ssl_version = %q, %v; want TLSv1.x", ds, version, err)
		}
	}
	if _, err := db.Exec("CREATE TABLE t_order (order_id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, status VARCHAR(32))"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO t_order (order_id, user_id, status) VALUES (1, 0, 'a'), (2, 1, 'b')"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM t_order").Scan(&n); err != nil || n != 2 {
		t.Errorf("rows over both TLS data sources: %d, %v", n, err)
	}
	rows, err := db.Query("SHOW STORAGE UNITS")
	if err != nil {
		t.Fatal(err)
	}
	units := map[string][2]string{}
	cols, _ := rows.Columns()
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		units[vals[0].String] = [2]string{vals[len(cols)-2].String, vals[len(cols)-1].String}
	}
	rows.Close()
	if cols[len(cols)-2] != "tls_mode" || cols[len(cols)-1] != "tls" ||
		units["ds_0"][0] != "VERIFY_IDENTITY" || !strings.HasPrefix(units["ds_0"][1], "TLS 1.") ||
		units["ds_1"][0] != "VERIFY_CA" || !strings.HasPrefix(units["ds_1"][1], "TLS 1.") {
		t.Errorf("SHOW STORAGE UNITS TLS columns %v: %v", cols[len(cols)-2:], units)
	}
	m := e.scrape(t)
	if v := m[series("shardflake_datasource_tls", "datasource", "ds_0", "mode", "VERIFY_IDENTITY")]; v != 1 {
		t.Errorf("shardflake_datasource_tls{ds_0} = %v, want 1", v)
	}

	// An account that requires a client certificate: tls cert and key.
	clientCert, clientKey := ca.issue(t, dir, "shardflake-client")
	b.Exec(t, "", "CREATE DATABASE IF NOT EXISTS tlsx509_0", "CREATE DATABASE IF NOT EXISTS tlsx509_1",
		"CREATE USER sf_x509@'%' IDENTIFIED BY 'x509-secret' REQUIRE X509", "GRANT ALL ON tlsx509_0.* TO sf_x509@'%'")
	e = startOpsEnv(t, opsOptions{backends: backends, prefix: "tlsx509", rules: tlsRules(b, "tlsx509",
		`?sslMode=VERIFY_IDENTITY", username: sf_x509, password: x509-secret, tls: { ca: `+ca.path+`, cert: `+clientCert+`, key: `+clientKey+` }`,
		`?sslMode=VERIFY_IDENTITY", username: sf_x509, password: x509-secret, tls: { ca: `+ca.path+` }`)})
	db = e.open(t)
	if v, err := onDataSource(db, "ds_0", "SELECT CURRENT_USER()"); err != nil || !strings.HasPrefix(v, "sf_x509@") {
		t.Errorf("ds_0 with a client certificate for a REQUIRE X509 account: %q, %v", v, err)
	}
	if _, err := onDataSource(db, "ds_1", "SELECT 1"); err == nil {
		t.Errorf("ds_1 without a client certificate for a REQUIRE X509 account: no error")
	}

	// A certificate from a CA not configured, a host name the certificate
	// does not carry, and plain text (which the server refuses) each fail
	// their data source alone; REQUIRED without verification connects.
	e = startOpsEnv(t, opsOptions{backends: backends, prefix: "tlsbad", rules: tlsRules(b, "tlsbad",
		`?sslMode=VERIFY_IDENTITY", tls: { ca: `+other.path+` }`,
		`?useSSL=true&requireSSL=true&verifyServerCertificate=false"`)})
	db = e.open(t)
	if _, err := onDataSource(db, "ds_0", "SELECT 1"); err == nil || !strings.Contains(err.Error(), "certificate") || !strings.Contains(err.Error(), "ds_0") {
		t.Errorf("ds_0 with a CA that did not sign the server's certificate: %v, want a certificate error naming ds_0", err)
	}
	if v, err := onDataSource(db, "ds_1", "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'SSL_VERSION'"); err != nil || !strings.HasPrefix(v, "TLSv1.") {
		t.Errorf("ds_1 REQUIRED without verification: %q, %v", v, err)
	}
	e = startOpsEnv(t, opsOptions{backends: backends, prefix: "tlsname", rules: tlsRules(b, "tlsname",
		`?sslMode=VERIFY_IDENTITY", tls: { ca: `+ca.path+`, serverName: not-the-host.example }`,
		`"`)})
	db = e.open(t)
	if _, err := onDataSource(db, "ds_0", "SELECT 1"); err == nil || !strings.Contains(err.Error(), "not-the-host.example") {
		t.Errorf("ds_0 VERIFY_IDENTITY with the wrong name: %v, want a host name error", err)
	}
	// MariaDB answers the plain login with 1045, which the client sees.
	if _, err := onDataSource(db, "ds_1", "SELECT 1"); err == nil {
		t.Errorf("ds_1 in plain text to a server that requires TLS: %v, want an error", err)
	}
}

// TestBackendTLSPreferredFallsBack: PREFERRED (useSSL=true) to a server
// without TLS connects in plain text and says so.
func TestBackendTLSPreferredFallsBack(t *testing.T) {
	b := sharedServers(t)[0]
	e := startOpsEnv(t, opsOptions{backends: []*mariadbtest.Server{b, b}, prefix: "tlspref", rules: tlsRules(b, "tlspref", `?useSSL=true"`, `?useSSL=true"`)})
	db := e.open(t)
	if v, err := onDataSource(db, "ds_0", "SELECT 1"); err != nil || v != "1" {
		t.Fatalf("PREFERRED to a server without TLS: %q, %v", v, err)
	}
	if st := e.srv.current().pools["ds_0"].stats(); st.Encrypted || st.TLSMode != "PREFERRED" {
		t.Errorf("pool stats: %+v, want PREFERRED, not encrypted", st)
	}
	if s := e.srv.current().pools["ds_0"].lastTLS(); s != "off" {
		t.Errorf("last login's TLS = %v, want off", s)
	}
}
