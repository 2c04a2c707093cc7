package proxy

import (
	"fmt"
	"strings"

	"github.com/shardflake/shardflake/idgen"
)

// keygenStateText is the state column of SHOW SHARDING KEY GENERATORS for
// SEGMENT and TICKET generators: their blocks or servers, counters and
// why they cannot issue; NULL for the others.
func keygenStateText(g idgen.KeyGenerator) any {
	st, ok := g.(idgen.Stater)
	if !ok {
		return nil
	}
	s := st.State()
	var b strings.Builder
	if s.Err != "" {
		fmt.Fprintf(&b, "cannot issue: %s; ", s.Err)
	}
	if s.Step > 0 {
		left := max(0, s.BlockEnd-s.BlockNext+1)
		fmt.Fprintf(&b, "block %d..%d (%d left)", s.BlockNext, s.BlockEnd, left)
		if s.NextBlockEnd > 0 {
			fmt.Fprintf(&b, ", next block up to %d loaded", s.NextBlockEnd)
		}
		fmt.Fprintf(&b, ", step %d; ", s.Step)
	}
	b.WriteString("servers: ")
	for i, srv := range s.Servers {
		if i > 0 {
			b.WriteString(", ")
		}
		health := "up"
		if !srv.Healthy {
			health = "down (" + srv.Err + ")"
		}
		b.WriteString(srv.Addr + " " + health)
		if srv.Increment > 0 {
			fmt.Fprintf(&b, " increment %d offset %d issued %d", srv.Increment, srv.Offset, srv.Issued)
		}
	}
	fmt.Fprintf(&b, "; issued %d, round trips %d, failures %d, waited %d ms", s.Issued, s.RoundTrips, s.Failures, s.Waited.Milliseconds())
	if s.Floor > 0 {
		fmt.Fprintf(&b, ", adopted above %d", s.Floor)
	}
	return b.String()
}

// stateHealth is a SEGMENT or TICKET generator's line of /readyz: not OK
// once it cannot issue (its buffer drained with the segment data source
// down, every ticket server down or refused, a table above its next key).
func stateHealth(name string, g idgen.Stater) KeyGeneratorHealth {
	st := g.State()
	return KeyGeneratorHealth{Name: name, LeaseState: idgen.LeaseNone.String(), OK: st.Err == "", Error: st.Err}
}

// maskURLPasswords hides the password of every scheme://user:password@
// in v (a SEGMENT or TICKET generator's url or urls prop).
func maskURLPasswords(v string) string {
	var b strings.Builder
	for {
		i := strings.Index(v, "://")
		if i < 0 {
			b.WriteString(v)
			return b.String()
		}
		b.WriteString(v[:i+3])
		v = v[i+3:]
		end := strings.IndexAny(v, "/,")
		if end < 0 {
			end = len(v)
		}
		at := strings.LastIndexByte(v[:end], '@')
		if colon := strings.IndexByte(v[:max(at, 0)], ':'); at > 0 && colon >= 0 {
			b.WriteString(v[:colon+1] + "******")
			v = v[at:]
		}
	}
}
