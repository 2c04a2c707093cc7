package proxy

import (
	"container/list"
	"sync"
)

// planCache keeps prepared plans by schema and SQL text, least recently
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

func planKey(db, sql string) string { return db + "\x00" + sql }

func (c *planCache) get(db, sql string) PreparedPlan {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[planKey(db, sql)]
	if !ok {
		return nil
	}
	c.ll.MoveToFront(e)
	return e.Value.(*planEntry).pp
}

func (c *planCache) put(db, sql string, pp PreparedPlan) {
	key := planKey(db, sql)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[key]; ok {
		e.Value.(*planEntry).pp = pp
		c.ll.MoveToFront(e)
		return
	}
	c.items[key] = c.ll.PushFront(&planEntry{key: key, pp: pp})
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
