package config

import (
	"strings"
	"testing"
)

func TestDataSourceTLS(t *testing.T) {
	tests := []struct {
		give string // ds_1's value
		want DataSourceTLS
	}{
		{`{url: "jdbc:mysql://db:3306/ds_1", username: root}`, DataSourceTLS{Mode: TLSDisabled}},
		{`{url: "jdbc:mysql://db:3306/ds_1?useSSL=false", username: root}`, DataSourceTLS{Mode: TLSDisabled}},
		{`{url: "jdbc:mysql://db:3306/ds_1?useSSL=true", username: root}`, DataSourceTLS{Mode: TLSPreferred}},
		{`{url: "jdbc:mysql://db:3306/ds_1?useSSL=true&requireSSL=true", username: root}`, DataSourceTLS{Mode: TLSRequired}},
		{`{url: "jdbc:mysql://db:3306/ds_1?useSSL=true&verifyServerCertificate=false", username: root}`, DataSourceTLS{Mode: TLSPreferred, SkipVerify: true}},
		{`{url: "jdbc:mysql://db:3306/ds_1?sslMode=REQUIRED", username: root}`, DataSourceTLS{Mode: TLSRequired}},
		{`{url: "jdbc:mysql://db:3306/ds_1?sslmode=verify_ca", username: root}`, DataSourceTLS{Mode: TLSVerifyCA}},
		{`{url: "jdbc:mariadb://db:3306/ds_1?sslMode=verify-full&serverSslCert=/ca.pem", username: root}`, DataSourceTLS{Mode: TLSVerifyIdentity, CA: "/ca.pem"}},
		{`{url: "jdbc:mariadb://db:3306/ds_1?sslMode=trust", username: root}`, DataSourceTLS{Mode: TLSRequired, SkipVerify: true}},
		{`{url: "jdbc:mysql://db:3306/ds_1", username: root, tls: {ca: /ca.pem}}`, DataSourceTLS{Mode: TLSVerifyIdentity, CA: "/ca.pem"}},
		{`{url: "jdbc:mysql://db:3306/ds_1?sslMode=VERIFY_CA", username: root, tls: {mode: VERIFY_CA, ca: /ca.pem, cert: /c.pem, key: /k.pem, serverName: db.internal}}`,
			DataSourceTLS{Mode: TLSVerifyCA, CA: "/ca.pem", Cert: "/c.pem", Key: "/k.pem", ServerName: "db.internal"}},
	}
	for _, tt := range tests {
		doc := edit(t, `ds_1: {url: "jdbc:mysql://127.0.0.1:3306/ds_1", username: root}`, "ds_1: "+tt.give)
		r, err := Parse([]byte(doc), "rules.yaml")
		if err != nil {
			t.Errorf("%s: %v", tt.give, err)
			continue
		}
		if got := r.DataSource("ds_1").TLS; got != tt.want {
			t.Errorf("%s: TLS = %+v, want %+v", tt.give, got, tt.want)
		}
	}
	if r, err := Parse([]byte(baseRules), "base.yaml"); err != nil || r.DataSource("ds_0").TLS.Verify() {
		t.Errorf("default TLS verifies: %v", err)
	}
}

func TestDataSourceTLSErrors(t *testing.T) {
	tests := []struct{ give, want string }{
		{`{url: "jdbc:mysql://db:3306/ds_1?sslMode=SOMETIMES", username: root}`, `url sslMode=SOMETIMES: want DISABLED, PREFERRED`},
		{`{url: "jdbc:mysql://db:3306/ds_1?sslMode=REQUIRED", username: root, tls: {mode: DISABLED}}`, `tls mode DISABLED differs from the url's REQUIRED`},
		{`{url: "jdbc:mysql://db:3306/ds_1", username: root, tls: {cert: /c.pem}}`, `tls needs both cert and key`},
		{`{url: "jdbc:mysql://db:3306/ds_1?sslMode=VERIFY_CA&verifyServerCertificate=false", username: root}`, `contradicts it`},
		{`{url: "jdbc:mysql://db:3306/ds_1", username: root, tls: {mode: DISABLED, ca: /ca.pem}}`, `with sslMode DISABLED`},
		{`{url: "jdbc:mysql://db:3306/ds_1", username: root, tls: {verify: true}}`, `unknown key "verify"`},
	}
	for _, tt := range tests {
		doc := edit(t, `ds_1: {url: "jdbc:mysql://127.0.0.1:3306/ds_1", username: root}`, "ds_1: "+tt.give)
		if _, err := Parse([]byte(doc), "rules.yaml"); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.give, err, tt.want)
		}
	}
}
