package config

import (
	"strings"
	"testing"
)

// TestParseDataSourceURLTLS: a key generator's store URL carries its TLS
// settings in its parameters, read as a data source URL's are.
func TestParseDataSourceURLTLS(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want DataSourceTLS
		err  string
	}{
		{url: "jdbc:mysql://h:3306/ids", want: DataSourceTLS{Mode: TLSDisabled}},
		{url: "jdbc:mysql://h:3306/ids?useSSL=true", want: DataSourceTLS{Mode: TLSPreferred}},
		{url: "jdbc:mysql://h:3306/ids?sslMode=VERIFY_IDENTITY&serverSslCert=/ca.pem", want: DataSourceTLS{Mode: TLSVerifyIdentity, CA: "/ca.pem"}},
		{url: "jdbc:mysql://h:3306/ids?sslMode=trust", want: DataSourceTLS{Mode: TLSRequired, SkipVerify: true}},
		{url: "jdbc:mysql://h:3306/ids?sslMode=sometimes", err: "sslMode=sometimes"},
		{url: "jdbc:mysql://h:3306/ids?sslMode=VERIFY_CA&verifyServerCertificate=false", err: "contradicts"},
	} {
		ds, err := ParseDataSourceURL(tc.url)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one saying %q", tc.url, err, tc.err)
			}
			continue
		}
		if err != nil || ds.TLS != tc.want {
			t.Errorf("%s: TLS %+v, %v; want %+v", tc.url, ds.TLS, err, tc.want)
		}
	}
}
