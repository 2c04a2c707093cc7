package sqlarg

import (
	"reflect"
	"testing"
)

func TestSplitInto(t *testing.T) {
	tests := []struct {
		give     string
		wantBase string
		wantVars []string
		wantLast bool
		wantOK   bool
	}{
		{give: "SELECT COUNT(*) INTO @n FROM t_order WHERE user_id = 3", wantBase: "SELECT COUNT(*) FROM t_order WHERE user_id = 3", wantVars: []string{"n"}, wantOK: true},
		{give: "SELECT MAX(order_id), MIN(order_id) INTO @hi, @lo FROM t_order", wantBase: "SELECT MAX(order_id), MIN(order_id) FROM t_order", wantVars: []string{"hi", "lo"}, wantOK: true},
		{give: "SELECT COUNT(*) FROM t_order INTO @n;", wantBase: "SELECT COUNT(*) FROM t_order ;", wantVars: []string{"n"}, wantLast: true, wantOK: true},
		{give: "select 1 into @`a b` ,@'c'", wantBase: "select 1", wantVars: []string{"a b", "c"}, wantOK: true},
		{give: "/* c */ SELECT 'into @x' INTO @y", wantBase: "/* c */ SELECT 'into @x'", wantVars: []string{"y"}, wantOK: true},
		{give: "SELECT (SELECT 1 INTO @x) INTO @y", wantBase: "SELECT (SELECT 1 INTO @x)", wantVars: []string{"y"}, wantOK: true},
		{give: "SELECT a INTO OUTFILE '/tmp/x' FROM t"},
		{give: "SELECT a INTO DUMPFILE '/tmp/x' FROM t"},
		{give: "SELECT a INTO x FROM t"},
		{give: "SELECT a INTO @@x FROM t"},
		{give: "SELECT a FROM t WHERE b = @x"},
		{give: "INSERT INTO t SELECT @x"},
		{give: "SELECT 1 INTO @x; SELECT @x"},
		{give: "SELECT `into` FROM t WHERE c = @x"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			base, vars, last, ok := SplitInto(tt.give)
			if ok != tt.wantOK || base != tt.wantBase || !reflect.DeepEqual(vars, tt.wantVars) || last != tt.wantLast {
				t.Errorf("SplitInto(%q) = %q, %q, %v, %v; want %q, %q, %v, %v", tt.give, base, vars, last, ok, tt.wantBase, tt.wantVars, tt.wantLast, tt.wantOK)
			}
		})
	}
}
