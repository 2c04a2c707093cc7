package proxy

import (
	"sync"

	"github.com/shardflake/shardflake/config"
)

// liveSnapshots are the rules snapshots not dead yet: the one in force
// and those a session still holds for a transaction. XA recovery asks
// the data sources of all of them, so a transaction prepared on a data
// source a reload removed is still resolved.
type liveSnapshots struct {
	mu  sync.Mutex
	set map[*snapshot]bool
}

func (l *liveSnapshots) add(sn *snapshot) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.set == nil {
		l.set = map[*snapshot]bool{}
	}
	l.set[sn] = true
}

func (l *liveSnapshots) remove(sn *snapshot) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.set, sn)
}

// dataSources returns the data sources of the snapshot in force, then
// those only older live snapshots have (by name, the newest definition).
func (srv *Server) dataSources() []config.DataSource {
	cur := srv.current()
	out := append([]config.DataSource(nil), cur.rules.DataSources...)
	seen := map[string]bool{}
	for _, ds := range out {
		seen[ds.Name] = true
	}
	srv.live.mu.Lock()
	defer srv.live.mu.Unlock()
	for sn := range srv.live.set {
		for _, ds := range sn.rules.DataSources {
			if !seen[ds.Name] {
				seen[ds.Name] = true
				out = append(out, ds)
			}
		}
	}
	return out
}

// dataSource returns data source name's definition from the live
// snapshots, the one in force first; nil when none has it.
func (srv *Server) dataSource(name string) *config.DataSource {
	for _, ds := range srv.dataSources() {
		if ds.Name == name {
			return &ds
		}
	}
	return nil
}
