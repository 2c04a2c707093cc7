package proxy

import "testing"

func TestMaskURLPasswords(t *testing.T) {
	tests := []struct{ give, want string }{
		{"jdbc:mysql://127.0.0.1:3306/ids", "jdbc:mysql://127.0.0.1:3306/ids"},
		{"mysql://root:s3cret@10.0.0.1:3306/ids", "mysql://root:******@10.0.0.1:3306/ids"},
		{"mysql://a:x@h1/t,mysql://b@h2/t, mysql://c:p:q@h3/t", "mysql://a:******@h1/t,mysql://b@h2/t, mysql://c:******@h3/t"},
		{"1000", "1000"},
	}
	for _, tt := range tests {
		if got := maskURLPasswords(tt.give); got != tt.want {
			t.Errorf("maskURLPasswords(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
	if got := propList(map[string]string{"url": "mysql://u:pw@h/ids", "password": "x"}); got != "password=******,url=mysql://u:******@h/ids" {
		t.Errorf("propList: %v", got)
	}
}
