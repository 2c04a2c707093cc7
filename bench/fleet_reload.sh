#!/usr/bin/env bash
# bench/fleet_reload.sh: a fleet of two proxies on one etcd behind HAProxy
# (deploy/haproxy/haproxy.cfg), with sysbench oltp_read_write through
# HAProxy while the rules change every 2 s.
#
# It starts etcd, one MariaDB (databases ds_0 and ds_1), two proxies in
# cluster mode (server.cluster) and HAProxy, loads sbtest1 (sharded over
# ds_${0..1}.sbtest1_${0..3}) with sysbench's prepare, then runs
# oltp_read_write for --time seconds while a loop alternates two
# equivalent rules files (they differ in slowStatementThreshold and the
# data sources' maxPoolSize, so every reload opens new pools and retires
# the old ones) every 2 s, taking turns between
#   1. SIGHUP of proxy 1 (it reloads its file and shares it through etcd),
#   2. RELOAD RULES on proxy 2 (the same, by the admin statement),
#   3. an etcd write of the file (etcdctl put), which both proxies watch,
# and measures after each change how long until both proxies report the
# new digest in shardflake_rules_info. A third of the way in it sends
# DRAIN COMPUTE NODE 'p2' to proxy 1 (HAProxy takes p2 out while its
# sysbench sessions go on), and RESUME two thirds in. It prints
# sysbench's errors and QPS, the convergence times, and each proxy's
# reload counts.
#
# Usage: bench/fleet_reload.sh [--time S] [--threads N] [--table-size N]
#   --time S        sysbench seconds (default 60)
#   --threads N     sysbench threads (default 8)
#   --table-size N  rows of sbtest1 (default 10000)
set -euo pipefail

TIME=60 THREADS=8 TABLE_SIZE=10000
while [[ $# -gt 0 ]]; do
	case "$1" in
	--time) TIME=$2; shift 2 ;;
	--threads) THREADS=$2; shift 2 ;;
	--table-size) TABLE_SIZE=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/fleet_reload.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
	esac
done

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK_NAME=shardflake-fleet
. "$ROOT/bench/lib.sh"
MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)
[[ -x $MARIADBD ]] || die "mariadbd not found (Debian package mariadb-server)"
HAPROXY=$(command -v haproxy || echo /usr/sbin/haproxy)
[[ -x $HAPROXY ]] || die "haproxy not found (Debian package haproxy)"
for c in mariadb-install-db mariadb sysbench go etcd etcdctl curl sha256sum; do
	command -v "$c" >/dev/null || die "$c not found"
done


log "work directory $WORK; starting etcd and MariaDB"
ETCD=$(free_port) ETCD_PEER=$(free_port)
etcd --name fleet --data-dir "$WORK/etcd" --listen-client-urls "http://127.0.0.1:$ETCD" \
	--advertise-client-urls "http://127.0.0.1:$ETCD" --listen-peer-urls "http://127.0.0.1:$ETCD_PEER" \
	--initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER" --initial-cluster "fleet=http://127.0.0.1:$ETCD_PEER" \
	--log-level warn >"$WORK/etcd.log" 2>&1 &
PIDS+=("$!")
export ETCDCTL_API=3
ETCDCTL=(etcdctl --endpoints "http://127.0.0.1:$ETCD")

dir=$WORK/db
mkdir -p "$dir/tmp"
mariadb-install-db --no-defaults --user=root --datadir="$dir/data" --auth-root-authentication-method=normal \
	--skip-test-db --skip-name-resolve >"$dir/install.log" 2>&1 || die "mariadb-install-db: $(tail -3 "$dir/install.log")"
DB=$(free_port)
"$MARIADBD" --no-defaults --user=root --datadir="$dir/data" --port="$DB" --bind-address=127.0.0.1 \
	--socket="$dir/mysqld.sock" --pid-file="$dir/mysqld.pid" --log-error="$dir/mariadbd.log" --tmpdir="$dir/tmp" \
	--skip-name-resolve --innodb-buffer-pool-size=256M --innodb-flush-log-at-trx-commit=2 \
	--performance-schema=OFF --max-connections=1000 --max-prepared-stmt-count=100000 >/dev/null 2>&1 &
PIDS+=("$!")
for _ in $(seq 600); do
	mariadb -h127.0.0.1 -P"$DB" -uroot -e 'SELECT 1' >/dev/null 2>&1 && break
	sleep 0.1
done
mariadb -h127.0.0.1 -P"$DB" -uroot -e 'CREATE DATABASE ds_0; CREATE DATABASE ds_1' || die "MariaDB did not start"
for _ in $(seq 100); do
	"${ETCDCTL[@]}" endpoint health >/dev/null 2>&1 && break
	sleep 0.1
done
"${ETCDCTL[@]}" endpoint health >/dev/null 2>&1 || die "etcd did not start: $(tail -3 "$WORK/etcd.log")"

log "building the proxy"
(cd "$ROOT" && go build -o "$WORK/shardflake" ./cmd/shardflake)

# rules PORT METRICS VARIANT prints a proxy's rules file; the variants
# are equivalent (no row moves).
rules() {
	local slow=5s pool=20
	[[ $3 == 1 ]] && slow=6s pool=21
	cat <<YAML
databaseName: sharding_db
server:
  listen: 127.0.0.1:$1
  metricsListen: 127.0.0.1:$2
  slowStatementThreshold: $slow
  users:
    - { user: app, password: app-secret, rulesAdmin: true }
  cluster: { endpoints: [http://127.0.0.1:$ETCD], prefix: /shardflake/bench, leaseTTL: 2s }
dataSources:
  ds_0: { url: "jdbc:mysql://127.0.0.1:$DB/ds_0", username: root, password: "", maxPoolSize: $pool }
  ds_1: { url: "jdbc:mysql://127.0.0.1:$DB/ds_1", username: root, password: "", maxPoolSize: $pool }
rules:
YAML
	cat "$ROOT/bench/sysbench_mod_rules.yaml"
}

P=() M=() PROXY_PIDS=()
for i in 1 2; do
	P[i]=$(free_port) M[i]=$(free_port)
	rules "${P[i]}" "${M[i]}" 0 >"$WORK/p$i.yaml"
	"$WORK/shardflake" serve --config "$WORK/p$i.yaml" --node-id "p$i" >/dev/null 2>"$WORK/p$i.log" &
	PIDS+=("$!") PROXY_PIDS[i]=$!
	for _ in $(seq 200); do
		mariadb -h127.0.0.1 -P"${P[i]}" -uapp -papp-secret sharding_db -N -B -e 'SELECT 1' >/dev/null 2>&1 && break
		sleep 0.1
	done
	mariadb -h127.0.0.1 -P"${P[i]}" -uapp -papp-secret sharding_db -N -B -e 'SELECT 1' >/dev/null || die "proxy $i did not start: $(tail -3 "$WORK/p$i.log")"
done

HA=$(free_port)
sed -e "s/^    bind :3306$/    bind 127.0.0.1:$HA/" \
	-e "s/^    default-server check port 9307 /    default-server check /" \
	-e "s/^    server shardflake-1 .*/    server shardflake-1 127.0.0.1:${P[1]} port ${M[1]}/" \
	-e "s/^    server shardflake-2 .*/    server shardflake-2 127.0.0.1:${P[2]} port ${M[2]}/" \
	-e '/^listen stats/,$d' "$ROOT/deploy/haproxy/haproxy.cfg" >"$WORK/haproxy.cfg"
"$HAPROXY" -c -f "$WORK/haproxy.cfg" >/dev/null || die "haproxy -c"
"$HAPROXY" -db -f "$WORK/haproxy.cfg" >"$WORK/haproxy.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 100); do
	mariadb -h127.0.0.1 -P"$HA" -uapp -papp-secret sharding_db -N -B -e 'SELECT 1' >/dev/null 2>&1 && break
	sleep 0.1
done

digest() { curl -s "http://127.0.0.1:${M[$1]}/metrics" | sed -n 's/^shardflake_rules_info{.*digest="\([0-9a-f]*\)".*/\1/p'; }
reloads() { curl -s "http://127.0.0.1:${M[$1]}/metrics" | sed -n "s/^shardflake_rules_reloads_total{result=\"$2\"} //p"; }
SB=(sysbench --db-driver=mysql --mysql-host=127.0.0.1 --mysql-port="$HA" --mysql-user=app --mysql-password=app-secret
	--mysql-db=sharding_db --tables=1 --table-size="$TABLE_SIZE" --auto-inc=off)

log "fleet: etcd :$ETCD, proxies :${P[1]} :${P[2]}, HAProxy :$HA; digests $(digest 1) $(digest 2)"
"${SB[@]}" --threads=4 oltp_common prepare >"$WORK/prepare.log" 2>&1 || die "prepare: $(tail -3 "$WORK/prepare.log")"

log "sysbench oltp_read_write through HAProxy: $THREADS threads, ${TIME}s; the rules change every 2 s"
"${SB[@]}" --threads="$THREADS" --time="$TIME" --db-ps-mode=auto --report-interval=10 oltp_read_write run >"$WORK/run.log" 2>&1 &
SBPID=$!
PIDS+=("$SBPID")

n=0 CONV=()
declare -A HOW
while kill -0 "$SBPID" 2>/dev/null; do
	sleep 2
	kill -0 "$SBPID" 2>/dev/null || break
	n=$((n + 1))
	v=$((n % 2))
	rules "${P[1]}" "${M[1]}" "$v" >"$WORK/p1.yaml"
	rules "${P[2]}" "${M[2]}" "$v" >"$WORK/p2.yaml"
	t0=$(date +%s%N)
	case $((n % 3)) in
	1) how=sighup want=$(sha256sum "$WORK/p1.yaml" | cut -c1-16); kill -HUP "${PROXY_PIDS[1]}" ;;
	2) how=reload want=$(sha256sum "$WORK/p2.yaml" | cut -c1-16)
		mariadb -h127.0.0.1 -P"${P[2]}" -uapp -papp-secret sharding_db -N -B -e 'RELOAD RULES' >/dev/null ;;
	0) how=etcd want=$(sha256sum "$WORK/p1.yaml" | cut -c1-16)
		"${ETCDCTL[@]}" put /shardflake/bench/rules <"$WORK/p1.yaml" >/dev/null ;;
	esac
	HOW[$how]=$((${HOW[$how]:-0} + 1))
	if [[ $n == $((TIME / 6)) ]]; then
		mariadb -h127.0.0.1 -P"${P[1]}" -uapp -papp-secret sharding_db -N -B -e "DRAIN COMPUTE NODE 'p2'" >/dev/null
		log "change $n: DRAIN COMPUTE NODE 'p2' sent to proxy 1"
	elif [[ $n == $((TIME / 3)) ]]; then
		mariadb -h127.0.0.1 -P"${P[1]}" -uapp -papp-secret sharding_db -N -B -e "RESUME COMPUTE NODE 'p2'" >/dev/null
		log "change $n: RESUME COMPUTE NODE 'p2' sent to proxy 1"
	fi
	ok=0
	for _ in $(seq 500); do
		if [[ $(digest 1) == "$want" && $(digest 2) == "$want" ]]; then ok=1; break; fi
		sleep 0.01
	done
	ms=$((($(date +%s%N) - t0) / 1000000))
	[[ $ok == 1 ]] || { log "change $n ($how): not converged after ${ms} ms: $(digest 1) $(digest 2), want $want"; ms=-1; }
	CONV+=("$how:$ms")
done
wait "$SBPID" || die "sysbench failed: $(tail -20 "$WORK/run.log")"

echo "sysbench oltp_read_write through HAProxy over two proxies: $THREADS threads, ${TIME}s, table-size $TABLE_SIZE, $(nproc) CPUs"
grep -E '^\s+(queries|transactions|ignored errors|reconnects):' "$WORK/run.log"
# sysbench stops at the first error it does not ignore (FATAL); it
# ignores and retries deadlocks (1213) by default: "ignored errors".
echo "client errors (sysbench FATAL lines): $(grep -c 'FATAL' "$WORK/run.log" || true)"
echo "rules changes: $n (sighup ${HOW[sighup]:-0}, reload ${HOW[reload]:-0}, etcd ${HOW[etcd]:-0})"
echo "time until both proxies reported the new digest (ms): ${CONV[*]}"
printf '%s\n' "${CONV[@]}" | awk -F: '$2 >= 0 {s += $2; if ($2 > m) m = $2; c++} $2 < 0 {bad++} END {printf "convergence: %d changes, mean %.0f ms, max %d ms, %d not converged within 5 s\n", c, s / c, m, bad}'
for i in 1 2; do
	echo "proxy $i: digest $(digest "$i"), reloads applied $(reloads "$i" applied), refused $(reloads "$i" refused)"
done
echo "HAProxy: $(grep -c 'shardflake-2 is DOWN' "$WORK/haproxy.log" || true) time(s) p2 DOWN (the drain), $(grep -c 'shardflake-2 is UP' "$WORK/haproxy.log" || true) UP (the resume)"
