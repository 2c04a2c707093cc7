package proxy

import (
	"container/list"
	"encoding/binary"
	"errors"
	"sync"

	tidbmysql "github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/shardflake/shardflake/router"
)

// maxCachedSQL bounds the text of a statement whose plan is cached: a
// bulk INSERT's plan is rarely reused and its key alone would be large.
const maxCachedSQL = 8 << 10

// planCache keeps prepared plans by key (appendPlanKey), least recently
// used first out. Plans are immutable, so sessions share them.
type planCache struct {
	mu    sync.Mutex
	max   int
	ll    *list.List // front: most recently used
	items map[string]*list.Element
}

type planEntry struct {
	key string
	pp  PreparedPlan
}

func newPlanCache(max int) *planCache {
	if max <= 0 {
		max = 4096
	}
	return &planCache{max: max, ll: list.New(), items: map[string]*list.Element{}}
}

// appendPlanKey appends the key of a statement's plan without its text,
// which the caller appends: one SQL text gives different plans in another
// logical schema, and under another sql_mode (PIPES_AS_CONCAT,
// HIGH_NOT_PRECEDENCE change how it parses). A plan is cached once its
// statement was authorized for a user, so class (privilegeClass) keeps it
// from users with other privileges.
func appendPlanKey(dst []byte, db string, mode tidbmysql.SQLMode, class byte) []byte {
	dst = append(dst, db...)
	dst = append(dst, 0, class)
	return binary.LittleEndian.AppendUint64(dst, uint64(mode))
}

// get returns the plan cached under key, or nil.
func (c *planCache) get(key []byte) PreparedPlan {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[string(key)]
	if !ok {
		return nil
	}
	c.ll.MoveToFront(e)
	return e.Value.(*planEntry).pp
}

func (c *planCache) put(key []byte, pp PreparedPlan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[string(key)]; ok {
		e.Value.(*planEntry).pp = pp
		c.ll.MoveToFront(e)
		return
	}
	k := string(key)
	c.items[k] = c.ll.PushFront(&planEntry{key: k, pp: pp})
	for c.ll.Len() > c.max {
		last := c.ll.Back()
		c.ll.Remove(last)
		delete(c.items, last.Value.(*planEntry).key)
	}
}

func (c *planCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ll.Init()
	c.items = map[string]*list.Element{}
}

func (c *planCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}

// noPlan is cached for a normalized statement shape that has no plan of
// its own (it does not parse with placeholders, or the session answers
// it): statements of that shape are planned from their own text, without
// trying the shape again.
type noPlan struct{}

var errNoPlan = errors.New("no plan for this statement shape")

func (noPlan) Kind() router.StatementKind       { return router.KindOther }
func (noPlan) Bind([]any) (*router.Plan, error) { return nil, errNoPlan }
