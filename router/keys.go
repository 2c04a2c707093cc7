package router

import (
	"fmt"

	"github.com/shardflake/shardflake/algorithm"
	"github.com/shardflake/shardflake/idgen"
)

// AppendKeys asks gen for k keys (k at most gen.MaxBatch()) and appends
// them to keys: int64 values from an integer generator, strings (or the
// raw bytes of a BINARY(16) column) from a UUID generator. INSERT and the
// proxy's LOAD DATA both fill key columns with it.
func AppendKeys(gen idgen.KeyGenerator, k int, keys *[]algorithm.Value) error {
	switch g := gen.(type) {
	case idgen.BlockGenerator:
		first, err := g.NextN(k)
		if err != nil {
			return err
		}
		for i := 0; i < k; i++ {
			*keys = append(*keys, first+int64(i))
		}
	case idgen.ListGenerator:
		ids := make([]int64, k)
		if err := g.NextKeys(ids); err != nil {
			return err
		}
		for _, id := range ids {
			*keys = append(*keys, id)
		}
	case idgen.UUIDGenerator:
		ids := make([]idgen.UUID, k)
		if err := g.NextUUIDs(ids); err != nil {
			return err
		}
		enc := g.Encoding()
		for _, id := range ids {
			if enc == idgen.UUIDBinary16 {
				*keys = append(*keys, id[:])
			} else {
				*keys = append(*keys, enc.Text(id))
			}
		}
	default:
		return fmt.Errorf("generator %T issues no keys the router knows", gen)
	}
	return nil
}
