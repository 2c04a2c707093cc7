package proxy

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

func TestAuthentication(t *testing.T) {
	cert, key := writeCert(t)
	mysql.RegisterTLSConfig("shardflake-test", &tls.Config{InsecureSkipVerify: true})
	tests := []struct {
		name   string
		server string
		params []string
	}{
		{"native", "", nil},
		{"native over TLS", fmt.Sprintf("tls: { cert: %s, key: %s }", cert, key), []string{"tls=shardflake-test"}},
		{"caching_sha2 with RSA", "authPlugin: caching_sha2_password", nil},
		{"caching_sha2 over TLS", fmt.Sprintf("authPlugin: caching_sha2_password\ntls: { cert: %s, key: %s }", cert, key), []string{"tls=shardflake-test"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startEnv(t, envOptions{server: tt.server, planner: toDefault})
			// Twice: caching_sha2's second login takes the fast path.
			for range 2 {
				db, err := sql.Open("mysql", e.dsn("app", "app-secret", tt.params...))
				if err != nil {
					t.Fatal(err)
				}
				var user string
				if err := db.QueryRow("SELECT CURRENT_USER()").Scan(&user); err != nil {
					t.Fatalf("login: %v", err)
				}
				if user != "app@%" {
					t.Errorf("CURRENT_USER() = %q, want app@%%", user)
				}
				db.Close()
			}
			db, _ := sql.Open("mysql", e.dsn("app", "wrong", tt.params...))
			defer db.Close()
			if err := db.Ping(); errCode(err) != 1045 {
				t.Errorf("wrong password: got %v, want 1045", err)
			}
			db2, _ := sql.Open("mysql", e.dsn("nobody", "x", tt.params...))
			defer db2.Close()
			if err := db2.Ping(); errCode(err) != 1045 {
				t.Errorf("unknown user: got %v, want 1045", err)
			}
		})
	}
}

// writeCert writes a self-signed certificate and its key for 127.0.0.1.
func writeCert(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "shardflake-test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func TestTLSIsReallyUsed(t *testing.T) {
	cert, key := writeCert(t)
	e := startEnv(t, envOptions{server: fmt.Sprintf("tls: { cert: %s, key: %s }", cert, key), planner: toDefault})
	nc, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	// The greeting must offer CLIENT_SSL (0x800 in the low capability bytes).
	buf := make([]byte, 256)
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := nc.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	greeting := buf[4:n]
	end := 1 + strings.IndexByte(string(greeting[1:]), 0) + 1 // protocol version, server version NUL
	capLow := int(greeting[end+4+8+1]) | int(greeting[end+4+8+2])<<8
	if capLow&0x800 == 0 {
		t.Errorf("greeting does not offer TLS (capabilities %#x)", capLow)
	}
}

// TestSslStatusIsTheClients: SHOW STATUS LIKE 'Ssl%' is how a client
// checks that its connection is encrypted (MariaDB's KB, MySQL's manual);
// the proxy answers it with the TLS of the client's own connection, not
// the default data source's session (plain here: empty before).
func TestSslStatusIsTheClients(t *testing.T) {
	cert, key := writeCert(t)
	var mu sync.Mutex
	var state tls.ConnectionState
	mysql.RegisterTLSConfig("shardflake-ssl-status", &tls.Config{InsecureSkipVerify: true, VerifyConnection: func(cs tls.ConnectionState) error {
		mu.Lock()
		state = cs
		mu.Unlock()
		return nil
	}})
	e := startEnv(t, envOptions{server: fmt.Sprintf("tls: { cert: %s, key: %s }", cert, key), planner: toDefault})
	status := func(db *sql.DB, q string) map[string]string {
		t.Helper()
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		got := map[string]string{}
		for rows.Next() {
			var name, value string
			if err := rows.Scan(&name, &value); err != nil {
				t.Fatal(err)
			}
			got[name] = value
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return got
	}
	tlsDB, err := sql.Open("mysql", e.dsn("app", "app-secret", "tls=shardflake-ssl-status"))
	if err != nil {
		t.Fatal(err)
	}
	defer tlsDB.Close()
	tlsDB.SetMaxOpenConns(1)
	for _, q := range []string{"SHOW STATUS LIKE 'Ssl%'", "SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_cipher', 'Ssl_version')"} {
		got := status(tlsDB, q)
		mu.Lock()
		want := map[string]string{"Ssl_cipher": tls.CipherSuiteName(state.CipherSuite), "Ssl_version": map[uint16]string{tls.VersionTLS12: "TLSv1.2", tls.VersionTLS13: "TLSv1.3"}[state.Version]}
		mu.Unlock()
		for k, v := range want {
			if v == "" || got[k] != v {
				t.Errorf("%s over TLS: %s = %q, want %q", q, k, got[k], v)
			}
		}
	}
	// A plain connection shows them empty, as MariaDB does.
	plain := e.open(t)
	got := status(plain, "SHOW STATUS LIKE 'Ssl_%'")
	for _, k := range []string{"Ssl_cipher", "Ssl_version"} {
		if v, ok := got[k]; !ok || v != "" {
			t.Errorf("plain connection: %s = %q (listed %v), want empty", k, v, ok)
		}
	}
	direct := status(e.backends[0].Open(t, ""), "SHOW STATUS LIKE 'Ssl_%'")
	if len(direct) != len(got) {
		t.Errorf("proxy lists %d Ssl_ status variables, MariaDB %d", len(got), len(direct))
	}
}

func TestConnectionLimitAndIDs(t *testing.T) {
	e := startEnv(t, envOptions{server: "maxConnections: 3", planner: toDefault})
	db := e.open(t)
	db.SetMaxIdleConns(10)
	ctx := context.Background()
	var conns []*sql.Conn
	ids := map[int64]bool{}
	for range 3 {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		var id int64
		if err := c.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		if ids[id] {
			t.Errorf("connection id %d given twice", id)
		}
		ids[id] = true
	}
	_, err := db.Conn(ctx)
	if code := errCode(err); code != 1040 {
		t.Fatalf("fourth connection: got %v, want 1040", err)
	}
	db.SetMaxIdleConns(0) // a connection given back is closed
	conns[0].Close()
	// The slot frees once the proxy notices the client left.
	deadline := time.Now().Add(5 * time.Second)
	for {
		db2 := e.open(t)
		err := db2.Ping()
		db2.Close()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no connection after one was closed: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range conns[1:] {
		c.Close()
	}
}

func TestHandshakeTimeout(t *testing.T) {
	e := startEnv(t, envOptions{server: "handshakeTimeout: 300ms", planner: toDefault})
	nc, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	start := time.Now()
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 1024)
	// Read the greeting, answer nothing, and wait for the proxy to hang up.
	for {
		if _, err := nc.Read(buf); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("the proxy kept a silent client past its handshake timeout")
			}
			break
		}
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("hung up after %s", took)
	}
}

func TestUnknownDatabaseAtLogin(t *testing.T) {
	e := startEnv(t, envOptions{planner: toDefault})
	dsn := strings.Replace(e.dsn("app", "app-secret"), "/sharding_db", "/nope", 1)
	db, _ := sql.Open("mysql", dsn)
	defer db.Close()
	if err := db.Ping(); errCode(err) != 1049 {
		t.Errorf("got %v, want 1049", err)
	}
}

func TestPanicAnswers1105AndServerStaysUp(t *testing.T) {
	e := startEnv(t, envOptions{planner: toDefault, hook: func(sql string) {
		if strings.Contains(sql, "boom") {
			panic("injected failure")
		}
	}})
	c := e.conn(t)
	ctx := context.Background()
	_, err := c.ExecContext(ctx, "SELECT 'boom'")
	if errCode(err) != 1105 || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("got %v, want 1105 naming the panic", err)
	}
	var n int
	if err := c.QueryRowContext(ctx, "SELECT 41 + 1").Scan(&n); err != nil || n != 42 {
		t.Errorf("same connection after the panic: %d, %v", n, err)
	}
	if err := e.open(t).Ping(); err != nil {
		t.Errorf("new connection after the panic: %v", err)
	}
	for _, st := range e.srv.PoolStats() {
		if st.InUse != 0 {
			t.Errorf("%s: %d backend connections leaked", st.DataSource, st.InUse)
		}
	}
}

func TestShutdownDrainsStatementsInFlight(t *testing.T) {
	e := startEnv(t, envOptions{planner: toDefault})
	busy := e.conn(t)
	idle := e.conn(t)
	ctx := context.Background()
	if err := idle.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	var busyID string
	if err := busy.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&busyID); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var got int
	var qerr error
	wg.Go(func() { qerr = busy.QueryRowContext(ctx, "SELECT SLEEP(1) + 7").Scan(&got) })
	// Let the statement start before shutting down. (A command the
	// session has not read yet when the proxy shuts down is lost with
	// the connection, as an idle connection's would be.)
	waitFor(t, func() bool {
		return collectProcessList(e)[busyID] == "Query" && backendRunning(t, e, "SLEEP(1) + 7") == 1
	})
	start := time.Now()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	wg.Wait()
	if qerr != nil || got != 7 {
		t.Errorf("statement in flight: got %d, %v; want 7", got, qerr)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("shutdown took %s", took)
	}
	if err := idle.PingContext(ctx); err == nil {
		t.Error("idle connection still open after shutdown")
	}
	if _, err := net.DialTimeout("tcp", e.addr, time.Second); err == nil {
		t.Error("still accepting connections after shutdown")
	}
}

// collectProcessList returns the Command of each session by id.
func collectProcessList(e *testEnv) map[string]string {
	rows, _ := drain(e.srv.processList("", false))
	out := map[string]string{}
	for _, r := range rows {
		out[string(r[0])] = string(r[4])
	}
	return out
}

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	waitEvery(t, 10*time.Millisecond, cond)
}

// waitEvery is waitFor polling every period.
func waitEvery(t *testing.T, period time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(period)
	}
}
