package proxy

// share counts one more live snapshot using p and returns p.
func (p *pool) share() *pool {
	p.snapshots.Add(1)
	return p
}

// unshare counts one snapshot less; the last one closes the pool, in the
// background (close waits for the connections in use). reason, when set,
// is the error a session still using the pool gets.
func (p *pool) unshare(reason string) {
	if p.snapshots.Add(-1) > 0 {
		return
	}
	p.closeWith(reason)
}

// unshareAll closes p whatever the count: its base pool is closed.
func (p *pool) unshareAll(reason string) {
	p.snapshots.Store(0)
	p.closeWith(reason)
}

func (p *pool) closeWith(reason string) {
	p.mu.Lock()
	if p.closeReason == "" {
		p.closeReason = reason
	}
	p.mu.Unlock()
	go p.close()
}

// closedNow reports whether no live snapshot uses p any more.
func (p *pool) closedNow() bool { return p.snapshots.Load() <= 0 }

// share counts one more live snapshot using rw and returns rw.
func (rw *readwriteSplit) share() *readwriteSplit {
	if rw != nil {
		rw.snapshots.Add(1)
	}
	return rw
}

// unshare counts one snapshot less; the last one closes the groups.
func (rw *readwriteSplit) unshare() {
	if rw == nil || rw.snapshots.Add(-1) > 0 {
		return
	}
	go rw.close()
}
