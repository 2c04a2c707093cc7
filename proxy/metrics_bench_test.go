package proxy

import "testing"

// BenchmarkMatchAdminMiss is what the admin statement check costs a
// query that is not one (every COM_QUERY the plan cache misses).
func BenchmarkMatchAdminMiss(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, _ := matchAdmin("/* app */ SELECT order_id, status FROM t_order WHERE user_id = 42 AND order_id = 7"); ok {
			b.Fatal("matched")
		}
	}
}
