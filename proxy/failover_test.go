package proxy

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shardflake/shardflake/internal/mariadbtest"
)

func TestDataSourceDownAndBack(t *testing.T) {
	// Servers of its own: this test kills one.
	backends := mariadbtest.StartN(t, 2, mariadbtest.Options{Databases: []string{"ds_0", "ds_1"}})
	e := startEnv(t, envOptions{backends: backends})
	createTables(t, e)
	ctx := context.Background()
	c := e.conn(t)
	if _, err := c.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id) VALUES (1, 0), (2, 1)"); err != nil {
		t.Fatal(err)
	}
	onDS0 := "SELECT order_id FROM t_order WHERE user_id = 0 AND order_id = 1"
	onDS1 := "SELECT order_id FROM t_order WHERE user_id = 1 AND order_id = 2"

	if err := backends[1].Kill(); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		start := time.Now()
		_, err := c.QueryContext(ctx, onDS1)
		code := errCode(err)
		if code != 1105 || !strings.Contains(err.Error(), "ds_1") {
			t.Fatalf("attempt %d on the dead data source: got %v, want 1105 naming ds_1", i, err)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("attempt %d took %s: not failing fast", i, took)
		}
		t.Logf("attempt %d: %v", i, err)
		if got := queryInts(t, c, onDS0); len(got) != 1 || got[0] != 1 {
			t.Errorf("ds_0 while ds_1 is down: %v", got)
		}
	}
	// A statement that needs both fails, naming the one that is down.
	if _, err := c.ExecContext(ctx, "UPDATE t_order SET status = 'x'"); err == nil || !strings.Contains(err.Error(), "ds_1") {
		t.Errorf("scatter write while ds_1 is down: %v", err)
	}
	if _, err := c.ExecContext(ctx, "INSERT INTO t_order (order_id, user_id) VALUES (3, 0)"); err != nil {
		t.Errorf("write to ds_0 while ds_1 is down: %v", err)
	}

	if err := backends[1].Restart(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		rows, err := c.QueryContext(ctx, onDS1)
		if err == nil {
			rows.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ds_1 not used again 15 s after it came back: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := queryInts(t, c, onDS1); len(got) != 1 || got[0] != 2 {
		t.Errorf("ds_1 after restart: %v", got)
	}
	if got := queryInts(t, c, "SELECT order_id FROM t_order"); len(got) != 3 {
		t.Errorf("scatter read after restart: %v", got)
	}
}
