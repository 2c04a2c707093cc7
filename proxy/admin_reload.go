package proxy

import (
	"context"
	"fmt"
	"strings"

	"github.com/shardflake/shardflake/proxy/internal/wire"
)

// The rules reload's admin statements (reload.go):
//
//	RELOAD RULES [FORCE]
//	PREVIEW RELOAD [RULES]
//	DRAIN COMPUTE NODE, RESUME COMPUTE NODE
//
// All need server.users rulesAdmin: true. DRAIN makes /readyz answer 503
// so a load balancer sends new connections to other proxies while the
// sessions here finish; RESUME undoes it. RELOAD RULES answers OK with
// the new digest, or 1105 with why the reload was refused (the rules in
// force then stay); PREVIEW RELOAD answers a row per change and whether
// it would apply live.
const (
	adminReload adminKind = 200 + iota
	adminPreviewReload
	adminDrain  // DRAIN COMPUTE NODE
	adminResume // RESUME COMPUTE NODE
)

// reloadSyntax lists the reload statements for syntax errors.
const reloadSyntax = "RELOAD RULES [FORCE]; PREVIEW RELOAD [RULES]; DRAIN | RESUME COMPUTE NODE ['id']"

// matchReloadAdmin recognises RELOAD RULES after its first word, and
// PREVIEW RELOAD (which PREVIEW <statement> would otherwise take).
func matchReloadAdmin(lx adminLexer, first string) (st adminStmt, ok bool, err error) {
	switch {
	case strings.EqualFold(first, "RELOAD"):
		st.kind = adminReload
		if !lx.keywords("RULES") {
			return st, true, lx.syntaxError("the reload statements are " + reloadSyntax)
		}
		if lx.keywords("FORCE") {
			st.body = "FORCE"
		}
		return st, true, lx.end()
	case strings.EqualFold(first, "DRAIN") && lx.keywords("COMPUTE", "NODE"):
		st.kind = adminDrain
		st.table = nodeID(&lx)
		return st, true, lx.end()
	case strings.EqualFold(first, "RESUME") && lx.keywords("COMPUTE", "NODE"):
		st.kind = adminResume
		st.table = nodeID(&lx)
		return st, true, lx.end()
	case strings.EqualFold(first, "PREVIEW") && lx.keywords("RELOAD"):
		st.kind = adminPreviewReload
		lx.keywords("RULES")
		return st, true, lx.end()
	}
	return st, false, nil
}

// runReloadAdmin answers RELOAD RULES and PREVIEW RELOAD.
func (s *Session) runReloadAdmin(st adminStmt) error {
	if !s.privileges().RulesAdmin {
		return privilegeNeeded("RULES ADMIN (server.users rulesAdmin: true)")
	}
	ctx := context.Background()
	switch st.kind {
	case adminDrain:
		if here, err := s.srv.drainNode(ctx, st.table, true); err != nil || !here {
			if err != nil {
				return err
			}
			return s.writeOK(wire.OK{Info: fmt.Sprintf("compute node %s is draining: its /readyz answers 503", st.table)}, false)
		}
		s.log.Info("draining: /readyz answers 503 until RESUME COMPUTE NODE", "sessions", s.srv.Clients())
		return s.writeOK(wire.OK{Info: fmt.Sprintf("draining: /readyz answers 503; %d session(s) still connected", s.srv.Clients())}, false)
	case adminResume:
		if here, err := s.srv.drainNode(ctx, st.table, false); err != nil || !here {
			if err != nil {
				return err
			}
			return s.writeOK(wire.OK{}, false)
		}
		s.log.Info("resumed: /readyz reports readiness again")
		return s.writeOK(wire.OK{}, false)
	}
	if st.kind == adminPreviewReload {
		rep, err := s.srv.PreviewReload(ctx)
		if err != nil {
			return err
		}
		cols := stringColumns("kind", "name", "old", "new", "applies", "note")
		rows := []Row{{[]byte("digest"), []byte("rules"), []byte(rep.OldDigest), []byte(rep.NewDigest), []byte(verdict(rep)), nil}}
		for _, c := range rep.Changes {
			rows = append(rows, Row{[]byte(c.Kind), []byte(c.Name), nullIfEmpty(c.Old), nullIfEmpty(c.New), []byte(c.Applies), nullIfEmpty(c.Note)})
		}
		return s.writeRows(newMemStream(cols, rows), textOutput)
	}
	rep, err := s.srv.Reload(ctx, st.body == "FORCE")
	if err != nil {
		return err
	}
	info := fmt.Sprintf("rules reloaded: digest %s (was %s), %d change(s)", rep.NewDigest, rep.OldDigest, len(rep.Changes))
	if rep.OldDigest == rep.NewDigest {
		info = fmt.Sprintf("rules reloaded: digest %s, unchanged", rep.NewDigest)
	}
	if rep.Note != "" {
		info += "; " + rep.Note
	}
	return s.writeOK(wire.OK{Info: info}, false)
}

// verdict sums up a preview: whether RELOAD RULES would apply it.
func verdict(rep ReloadReport) string {
	v := string(AppliesLive)
	for _, c := range rep.Changes {
		switch c.Applies {
		case AppliesRestart:
			return string(AppliesRestart)
		case AppliesMoves:
			v = string(AppliesMoves)
		}
	}
	return v
}

func nullIfEmpty(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}

// nodeID reads the optional compute node id of DRAIN and RESUME COMPUTE
// NODE: a quoted string or a name; "" for this proxy.
func nodeID(lx *adminLexer) string {
	if id, ok := lx.quoted(); ok {
		return id
	}
	if id, ok := lx.ident(); ok {
		return id
	}
	return ""
}
