package proxy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/shardflake/shardflake/config"
	"github.com/shardflake/shardflake/proxy/metrics"
)

// A fleet of proxies on etcd (server.cluster).
//
// Keys, under the cluster prefix:
//
//	rules              the fleet's rules file, as text; every proxy
//	                   watches it and reloads through the same path as
//	                   RELOAD RULES (same validation, same refusals)
//	rules.force        the digest of a rules text published by RELOAD
//	                   RULES FORCE, written in the same transaction: the
//	                   others apply that text forced too
//	members/ID         a proxy's record (fleetNode, JSON), under its lease
//	connids/N          connection-id prefix N, taken by a proxy under its
//	                   lease, so connection ids are unique in the fleet
//	kill/ID/REQ        a KILL for a connection of proxy ID, from another
//	kill-reply/REQ     its answer, written by the owner
//
// What is per proxy (listen, metricsListen, cluster) comes from the
// proxy's local file and overrides the copy in etcd (RulesParser).

// RulesParser turns a rules text read from etcd into rules to serve: it
// decodes and validates it and applies the proxy's own settings.
type RulesParser func(src []byte, name string) (*config.Rules, error)

// connIDBits is how many low bits of a connection id count connections;
// the bits above carry the proxy's prefix (its worker id).
const connIDBits = 22

// maxConnPrefix is the largest connection-id prefix.
const maxConnPrefix = 1<<(32-connIDBits) - 1

// fleetKillTimeout bounds a KILL forwarded to another proxy.
const fleetKillTimeout = 5 * time.Second

// Node states, as SHOW COMPUTE NODES and the member records say them.
const (
	nodeReady    = "ready"
	nodeDraining = "draining"
	nodeStopping = "stopping"
)

// fleetNode is one proxy as SHOW COMPUTE NODES lists it and as its
// member record in etcd holds it.
type fleetNode struct {
	ID         string    `json:"id"`
	MySQL      string    `json:"mysql"`
	Admin      string    `json:"admin"`
	Digest     string    `json:"digest"`
	WorkerID   int       `json:"workerId"` // -1: no Snowflake generator
	ConnPrefix int       `json:"connIdPrefix"`
	Sessions   int       `json:"sessions"`
	State      string    `json:"state"`
	Started    time.Time `json:"started"`
	// Note is why the rules in etcd are not in force here, when so.
	Note string `json:"note,omitempty"`
}

// Fleet is a proxy's membership of a fleet: its lease, the watches of
// the rules and of KILLs sent to it, its member record. Made by
// DialFleet, joined by Join, ended by Close.
type Fleet struct {
	cfg    config.Cluster
	cli    *clientv3.Client
	log    *slog.Logger
	parse  RulesParser
	nodeID string
	srv    *Server
	lease  atomic.Int64 // clientv3.LeaseID; replaced when etcd lost it
	rev    int64        // the revision the rules were read at (Rules)

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	wake   chan struct{} // publish the member record now

	etcdDigest atomic.Pointer[string] // the digest of the rules in etcd
	note       atomic.Pointer[string] // why they are not in force here
	refused    atomic.Int64
}

// DialFleet connects to the cluster's etcd. parse reads the rules texts
// found there.
func DialFleet(c *config.Cluster, parse RulesParser, log *slog.Logger) (*Fleet, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints, DialTimeout: c.DialTimeout})
	if err != nil {
		return nil, fmt.Errorf("cluster: etcd client for %v: %w", c.Endpoints, err)
	}
	id := c.NodeID
	if id == "" {
		host, _ := os.Hostname()
		var nonce [2]byte
		rand.Read(nonce[:])
		id = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(nonce[:]))
	}
	f := &Fleet{cfg: *c, cli: cli, log: log.With("node", id), parse: parse, nodeID: id, wake: make(chan struct{}, 1)}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	return f, nil
}

// NodeID is the proxy's id in the fleet.
func (f *Fleet) NodeID() string { return f.nodeID }

func (f *Fleet) key(parts ...string) string {
	return f.cfg.Prefix + "/" + strings.Join(parts, "/")
}

// Rules returns the fleet's rules: the text in etcd, or local (the
// proxy's own file, already parsed as rules) after seeding etcd with it
// when the key is empty.
func (f *Fleet) Rules(ctx context.Context, rules *config.Rules, local []byte) (*config.Rules, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.DialTimeout)
	defer cancel()
	key := f.cfg.RulesKey()
	resp, err := f.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(local))).
		Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return nil, nil, fmt.Errorf("cluster: reading the rules from etcd %v key %s: %w", f.cfg.Endpoints, key, err)
	}
	f.rev = resp.Header.Revision
	if resp.Succeeded {
		f.log.Info("cluster: etcd held no rules; seeded them from the local file", "key", key, "file", rules.File, "digest", metrics.RulesDigest(nil, local))
		f.setEtcdDigest(metrics.RulesDigest(nil, local))
		return rules, local, nil
	}
	kv := resp.Responses[0].GetResponseRange().Kvs[0]
	src := kv.Value
	f.rev = kv.ModRevision
	f.setEtcdDigest(metrics.RulesDigest(nil, src))
	got, err := f.parse(src, "etcd:"+key)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster: the rules in etcd key %s (revision %d) are invalid: %w", key, kv.ModRevision, err)
	}
	f.log.Info("cluster: rules read from etcd", "key", key, "revision", kv.ModRevision, "digest", metrics.RulesDigest(nil, src))
	return got, src, nil
}

func (f *Fleet) setEtcdDigest(d string) { f.etcdDigest.Store(&d) }

// Join makes srv a member: it takes a lease, a connection-id prefix
// (the worker id when free), writes the member record, and starts the
// watches. mysqlAddr and adminAddr are what the others are told unless
// the cluster section advertises others.
func (f *Fleet) Join(srv *Server, mysqlAddr, adminAddr string) error {
	ctx, cancel := context.WithTimeout(f.ctx, f.cfg.DialTimeout)
	defer cancel()
	lease, err := f.cli.Grant(ctx, int64(f.cfg.LeaseTTL/time.Second))
	if err != nil {
		return fmt.Errorf("cluster: lease: %w", err)
	}
	f.lease.Store(int64(lease.ID))
	want := srv.connPrefix()
	prefix, err := f.claimConnPrefix(ctx, want)
	if err != nil {
		return err
	}
	if prefix != want {
		f.log.Warn("cluster: connection-id prefix taken by another proxy; using another", "wanted", want, "prefix", prefix)
	}
	if f.cfg.Advertise != "" {
		mysqlAddr = f.cfg.Advertise
	}
	if f.cfg.AdvertiseAdmin != "" {
		adminAddr = f.cfg.AdvertiseAdmin
	}
	srv.node.mu.Lock()
	srv.node.id, srv.node.mysql, srv.node.admin = f.nodeID, mysqlAddr, adminAddr
	srv.node.mu.Unlock()
	srv.connIDs.prefix.Store(uint32(prefix))
	f.srv = srv
	srv.fleetRef.Store(f)
	if err := f.putMember(ctx); err != nil {
		return err
	}
	keep, err := f.cli.KeepAlive(f.ctx, f.leaseID())
	if err != nil {
		return fmt.Errorf("cluster: lease keep-alive: %w", err)
	}
	f.wg.Add(4)
	go f.keepLease(keep)
	go f.watchRules()
	go f.watchKills()
	go f.refreshMember()
	f.log.Info("cluster: joined", "prefix", f.cfg.Prefix, "mysql", mysqlAddr, "admin", adminAddr, "connIdPrefix", prefix)
	return nil
}

func (f *Fleet) leaseID() clientv3.LeaseID { return clientv3.LeaseID(f.lease.Load()) }

// keepLease keeps the membership lease alive. When etcd lost it (etcd
// was out of reach longer than leaseTTL), the member record and the
// connection-id prefix went with it: it takes a new lease, the same
// prefix when still free, and writes the record again.
func (f *Fleet) keepLease(keep <-chan *clientv3.LeaseKeepAliveResponse) {
	defer f.wg.Done()
	for {
		for range keep {
		}
		if f.ctx.Err() != nil {
			return
		}
		f.log.Warn("cluster: the membership lease was lost; joining again")
		for f.ctx.Err() == nil {
			var err error
			if keep, err = f.rejoin(); err == nil {
				break
			}
			f.log.Warn("cluster: joining again failed; retrying", "err", err)
			select {
			case <-f.ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}
}

func (f *Fleet) rejoin() (<-chan *clientv3.LeaseKeepAliveResponse, error) {
	ctx, cancel := context.WithTimeout(f.ctx, f.cfg.DialTimeout)
	defer cancel()
	lease, err := f.cli.Grant(ctx, int64(f.cfg.LeaseTTL/time.Second))
	if err != nil {
		return nil, err
	}
	f.lease.Store(int64(lease.ID))
	was := f.srv.connPrefix()
	prefix, err := f.claimConnPrefix(ctx, was)
	if err != nil {
		return nil, err
	}
	if prefix != was {
		f.log.Error("cluster: this proxy's connection-id prefix was taken while its lease was lost; new connections get another (KILL of the older ones through other proxies may miss them)", "was", was, "prefix", prefix)
		f.srv.connIDs.prefix.Store(uint32(prefix))
	}
	if err := f.putMember(ctx); err != nil {
		return nil, err
	}
	return f.cli.KeepAlive(f.ctx, lease.ID)
}

// claimConnPrefix takes connids/N for the first free N from want on.
func (f *Fleet) claimConnPrefix(ctx context.Context, want int) (int, error) {
	for i := 0; i <= maxConnPrefix; i++ {
		n := (want + i) % (maxConnPrefix + 1)
		key := f.key("connids", strconv.Itoa(n))
		resp, err := f.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, f.nodeID, clientv3.WithLease(f.leaseID()))).Commit()
		if err != nil {
			return 0, fmt.Errorf("cluster: connection-id prefix: %w", err)
		}
		if resp.Succeeded {
			return n, nil
		}
	}
	return 0, errors.New("cluster: every connection-id prefix is taken")
}

// putMember writes the member record.
func (f *Fleet) putMember(ctx context.Context) error {
	b, _ := json.Marshal(f.srv.localNode())
	if _, err := f.cli.Put(ctx, f.key("members", f.nodeID), string(b), clientv3.WithLease(f.leaseID())); err != nil {
		return fmt.Errorf("cluster: member record: %w", err)
	}
	return nil
}

// refreshMember writes the member record when it changed: at once when
// woken (a reload, a drain), else at most every second.
func (f *Fleet) refreshMember() {
	defer f.wg.Done()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last fleetNode
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-tick.C:
		case <-f.wake:
		}
		n := f.srv.localNode()
		if n == last {
			continue
		}
		ctx, cancel := context.WithTimeout(f.ctx, f.cfg.DialTimeout)
		if err := f.putMember(ctx); err != nil {
			f.log.Warn("cluster: member record not written", "err", err)
		} else {
			last = n
		}
		cancel()
	}
}

// poke asks refreshMember to write the record now.
func (f *Fleet) poke() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

// watchRules reloads every rules text written to etcd after the one read
// at start.
func (f *Fleet) watchRules() {
	defer f.wg.Done()
	key := f.cfg.RulesKey()
	rev := f.rev + 1
	for f.ctx.Err() == nil {
		wch := f.cli.Watch(clientv3.WithRequireLeader(f.ctx), key, clientv3.WithRev(rev))
		for resp := range wch {
			if resp.CompactRevision != 0 {
				// The revisions between were compacted: start from the
				// text there is now.
				rev = resp.CompactRevision
				break
			}
			if err := resp.Err(); err != nil {
				f.log.Warn("cluster: rules watch", "err", err)
				break
			}
			for _, ev := range resp.Events {
				rev = ev.Kv.ModRevision + 1
				if ev.Type == clientv3.EventTypeDelete {
					f.log.Warn("cluster: the rules key was deleted in etcd; the rules in force stay", "key", key)
					continue
				}
				f.applyRules(ev.Kv.Value, ev.Kv.ModRevision)
			}
		}
		if f.ctx.Err() == nil {
			select {
			case <-f.ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

// applyRules reloads a rules text read from etcd at revision rev.
func (f *Fleet) applyRules(src []byte, rev int64) {
	digest := metrics.RulesDigest(nil, src)
	f.setEtcdDigest(digest)
	if digest == f.srv.RulesDigest() {
		f.note.Store(nil)
		f.poke()
		return
	}
	force := false
	ctx, cancel := context.WithTimeout(f.ctx, f.cfg.DialTimeout)
	if resp, err := f.cli.Get(ctx, f.cfg.RulesKey()+".force", clientv3.WithRev(rev)); err == nil && len(resp.Kvs) == 1 {
		force = string(resp.Kvs[0].Value) == digest && resp.Kvs[0].ModRevision == rev
	}
	cancel()
	rules, perr := f.parse(src, "etcd:"+f.cfg.RulesKey())
	load := func() (*config.Rules, []byte, error) { return rules, src, perr }
	rep, err := f.srv.reloadCounted(f.ctx, force, load, "etcd")
	if err != nil {
		f.refused.Add(1)
		note := fmt.Sprintf("rules %s (etcd revision %d) refused: %v", digest, rev, err)
		f.note.Store(&note)
		f.log.Error("cluster: the rules written to etcd were refused; the rules in force stay", "revision", rev, "digest", digest, "err", err)
	} else {
		f.note.Store(nil)
		f.log.Info("cluster: rules from etcd in force", "revision", rev, "digest", rep.NewDigest, "previous", rep.OldDigest, "changes", len(rep.Changes), "forced", force)
	}
	f.poke()
}

// publish writes a rules text applied here by RELOAD RULES or SIGHUP to
// etcd, for the other proxies.
func (f *Fleet) publish(ctx context.Context, src []byte, force bool) error {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.DialTimeout)
	defer cancel()
	key := f.cfg.RulesKey()
	ops := []clientv3.Op{clientv3.OpPut(key, string(src))}
	if force {
		ops = append(ops, clientv3.OpPut(key+".force", metrics.RulesDigest(nil, src)))
	} else {
		ops = append(ops, clientv3.OpDelete(key+".force"))
	}
	if _, err := f.cli.Txn(ctx).Then(ops...).Commit(); err != nil {
		return fmt.Errorf("the rules were not written to etcd key %s: %w", key, err)
	}
	f.setEtcdDigest(metrics.RulesDigest(nil, src))
	f.note.Store(nil)
	f.poke()
	return nil
}

// members lists the member records in etcd, this proxy's live.
func (f *Fleet) members(ctx context.Context) ([]fleetNode, error) {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.DialTimeout)
	defer cancel()
	resp, err := f.cli.Get(ctx, f.key("members")+"/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return nil, fmt.Errorf("cluster: reading the members from etcd: %w", err)
	}
	var out []fleetNode
	for _, kv := range resp.Kvs {
		var n fleetNode
		if err := json.Unmarshal(kv.Value, &n); err != nil {
			continue
		}
		if n.ID == f.nodeID {
			n = f.srv.localNode()
		}
		out = append(out, n)
	}
	return out, nil
}

// killRequest is a KILL forwarded to the proxy owning the connection,
// or (Op) a DRAIN or RESUME COMPUTE NODE sent to the proxy it names.
type killRequest struct {
	Op    string `json:"op,omitempty"` // "" (KILL), "drain", "resume"
	Conn  uint32 `json:"conn"`
	Query bool   `json:"query"`
	User  string `json:"user"`
	Admin bool   `json:"admin"` // the sender may kill any user's connection
	From  string `json:"from"`
}

func (r killRequest) what() string {
	if r.Op != "" {
		return strings.ToUpper(r.Op) + " COMPUTE NODE"
	}
	return fmt.Sprintf("KILL %d", r.Conn)
}

// killReply is the owner's answer; Code 0 is done.
type killReply struct {
	Code    uint16 `json:"code"`
	State   string `json:"state,omitempty"`
	Message string `json:"message,omitempty"`
}

// forwardKill sends a KILL to the proxy whose prefix connection id
// carries and waits for its answer.
func (f *Fleet) forwardKill(ctx context.Context, req killRequest) error {
	prefix := int(req.Conn >> connIDBits)
	nodes, err := f.members(ctx)
	if err != nil {
		return err
	}
	owner := ""
	for _, n := range nodes {
		if n.ConnPrefix == prefix && n.ID != f.nodeID {
			owner = n.ID
		}
	}
	if owner == "" {
		return &UnknownThreadError{ID: uint64(req.Conn)}
	}
	return f.forward(ctx, owner, req)
}

// forwardNodeOp sends DRAIN or RESUME (op) to compute node id.
func (f *Fleet) forwardNodeOp(ctx context.Context, id, op string) error {
	nodes, err := f.members(ctx)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if n.ID == id {
			return f.forward(ctx, id, killRequest{Op: op, From: f.nodeID})
		}
	}
	return unknownNode(id)
}

// unknownNode is the answer for a compute node id no proxy has.
func unknownNode(id string) error {
	return &FleetPeerError{Code: errUnknown, State: "HY000", Msg: fmt.Sprintf("Unknown compute node '%s' (SHOW COMPUTE NODES lists them)", id)}
}

// forward writes req for proxy owner and waits for its answer.
func (f *Fleet) forward(ctx context.Context, owner string, req killRequest) error {
	var nonce [8]byte
	rand.Read(nonce[:])
	reqID := hex.EncodeToString(nonce[:])
	b, _ := json.Marshal(req)
	ctx, cancel := context.WithTimeout(ctx, fleetKillTimeout)
	defer cancel()
	replyKey := f.key("kill-reply", reqID)
	// Watch from before the request, so a quick answer is not missed.
	put, err := f.cli.Put(ctx, f.key("kill", owner, reqID), string(b), clientv3.WithLease(f.leaseID()))
	if err != nil {
		return &InternalError{Msg: fmt.Sprintf("%s: forwarding to compute node %s failed: %v", req.what(), owner, err)}
	}
	defer func() {
		dctx, dcancel := context.WithTimeout(context.Background(), time.Second)
		f.cli.Delete(dctx, f.key("kill", owner, reqID))
		f.cli.Delete(dctx, replyKey)
		dcancel()
	}()
	for resp := range f.cli.Watch(ctx, replyKey, clientv3.WithRev(put.Header.Revision)) {
		for _, ev := range resp.Events {
			if ev.Type != clientv3.EventTypePut {
				continue
			}
			var r killReply
			if err := json.Unmarshal(ev.Kv.Value, &r); err != nil {
				return &InternalError{Msg: fmt.Sprintf("%s: compute node %s answered %q", req.what(), owner, ev.Kv.Value)}
			}
			if r.Code == 0 {
				return nil
			}
			return &FleetPeerError{Code: r.Code, State: r.State, Msg: r.Message}
		}
	}
	return &InternalError{Msg: fmt.Sprintf("%s: compute node %s did not answer within %s", req.what(), owner, fleetKillTimeout)}
}

// FleetPeerError is another proxy's answer to a forwarded request, passed
// on as that proxy gave it.
type FleetPeerError struct {
	Code  uint16
	State string
	Msg   string
}

func (e *FleetPeerError) Error() string { return e.Msg }

// watchKills runs the KILLs other proxies forward to this one.
func (f *Fleet) watchKills() {
	defer f.wg.Done()
	prefix := f.key("kill", f.nodeID) + "/"
	for f.ctx.Err() == nil {
		for resp := range f.cli.Watch(clientv3.WithRequireLeader(f.ctx), prefix, clientv3.WithPrefix()) {
			for _, ev := range resp.Events {
				if ev.Type != clientv3.EventTypePut || ev.IsModify() {
					continue
				}
				f.runKill(strings.TrimPrefix(string(ev.Kv.Key), prefix), ev.Kv.Value)
			}
		}
		if f.ctx.Err() == nil {
			select {
			case <-f.ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

func (f *Fleet) runKill(reqID string, body []byte) {
	var req killRequest
	reply := killReply{}
	if err := json.Unmarshal(body, &req); err != nil {
		reply = killReply{Code: errUnknown, State: "HY000", Message: "malformed KILL request"}
	} else if req.Op == "drain" || req.Op == "resume" {
		f.srv.setDraining(req.Op == "drain")
		f.log.Info("cluster: "+strings.ToUpper(req.Op)+" COMPUTE NODE from another compute node", "from", req.From, "sessions", f.srv.Clients())
	} else if err := f.srv.killLocal(nil, uint64(req.Conn), req.Query, req.User, req.Admin); err != nil {
		m := mysqlError(err)
		reply = killReply{Code: m.Code, State: m.State, Message: m.Message}
	}
	if req.Op == "" {
		f.log.Info("cluster: KILL from another compute node", "from", req.From, "conn", req.Conn, "query", req.Query, "user", req.User, "code", reply.Code)
	}
	b, _ := json.Marshal(reply)
	ctx, cancel := context.WithTimeout(f.ctx, f.cfg.DialTimeout)
	defer cancel()
	if _, err := f.cli.Put(ctx, f.key("kill-reply", reqID), string(b), clientv3.WithLease(f.leaseID())); err != nil {
		f.log.Warn("cluster: KILL answer not written", "err", err)
	}
}

// errUnknown is MariaDB's ER_UNKNOWN_ERROR.
const errUnknown = 1105

// Close leaves the fleet: the watches stop and the lease is revoked, so
// the member record and the connection-id prefix go at once.
func (f *Fleet) Close() error {
	f.cancel()
	f.wg.Wait()
	if id := f.leaseID(); id != 0 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		f.cli.Revoke(ctx, id)
		cancel()
	}
	return f.cli.Close()
}

// RegisterMetrics adds the fleet's gauges to reg: whether the rules in
// force are the fleet's (shardflake_cluster_rules_in_sync) and the
// refused etcd rules (shardflake_cluster_rules_refused_total).
func (f *Fleet) RegisterMetrics(reg prometheus.Registerer) error {
	inSync := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "shardflake_cluster_rules_in_sync",
		Help: "1 when the rules in force are the rules in etcd (same digest), 0 while a change is being applied or after it was refused (see the log and SHOW COMPUTE NODES).",
	}, func() float64 {
		if d := f.etcdDigest.Load(); d != nil && f.srv != nil && *d == f.srv.RulesDigest() {
			return 1
		}
		return 0
	})
	refused := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "shardflake_cluster_rules_refused_total",
		Help: "Rules texts written to etcd that this proxy refused (the rules in force stayed); the reason is logged and shown by SHOW COMPUTE NODES.",
	}, func() float64 { return float64(f.refused.Load()) })
	for _, c := range []prometheus.Collector{inSync, refused} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
