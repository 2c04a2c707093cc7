#!/usr/bin/env bash
# bench/sysbench.sh measures shardflake against MariaDB directly, on one
# machine, in one run, and prints one table.
#
# It starts two MariaDB servers (same flags for both), builds the proxy,
# shards sbtest1 over 2 data sources x 4 tables through the proxy, loads it
# with sysbench's oltp_common prepare through the proxy, loads an unsharded
# sbtest1 of the same size on server 0 directly, then runs each workload in
# each --db-ps-mode against the direct server and against the proxy,
# interleaved, --repeats times, and reports medians. See the README
# ("Benchmarks") for what the columns mean and what to expect.
#
# Usage: bench/sysbench.sh [flags]
#   --time S          seconds per run (default 30)
#   --repeats N       runs per workload, mode and target; medians (default 3)
#   --threads N       sysbench threads (default 8)
#   --table-size N    rows of sbtest1 (default 100000)
#   --workloads LIST  space-separated (default: oltp_point_select oltp_read_only
#                     oltp_write_only oltp_insert oltp_read_write). A read
#                     workload may name one kind of its statements:
#                     oltp_read_only/KIND or oltp_read_write/KIND, KIND one
#                     of points (the 10 point selects), simple, sum, order,
#                     distinct (the one range read of that kind), runs the
#                     workload with only those reads (its writes, BEGIN and
#                     COMMIT as usual), so each kind's cost per statement
#                     is measured on its own
#   --modes LIST      --db-ps-mode values (default: "auto disable")
#   --layout L        how sbtest1 is sharded: mod (default: id % 8, the rows
#                     of any id range spread over all 8 data nodes, so range
#                     queries scan all of them) or range (8 contiguous id
#                     blocks, BOUNDARY_RANGE: a range query reads 1-2 nodes)
#   --buffer-pool S   innodb_buffer_pool_size of both servers (default 512M)
#   --skip-trx        run oltp_read_only and oltp_read_write with
#                     --skip_trx=on (autocommit statements, no BEGIN/COMMIT)
#   --lock-wait S     innodb_lock_wait_timeout of both servers (default 1): a
#                     deadlock between transactions that span both data
#                     sources is invisible to each server and only ends when
#                     a lock wait times out (sysbench retries on 1205)
#   --quick           smoke: --time 5 --repeats 1 --table-size 10000
#   --profile DIR     also save the CPU and allocation profiles of each
#                     shardflake target's runs of the first repeat into DIR
#                     (WORKLOAD-MODE.cpu for proxy, WORKLOAD-MODE-TARGET.cpu
#                     for passthru, shard1, passmux, mux)
#   --proxy-bin PATH  use this shardflake binary instead of building one
#   --keep            keep the work directory (logs, rules, raw outputs)
#   --raw FILE        also write every run's figures as TSV to FILE
#   --hold            set up and load, print how to connect, and wait for
#                     Ctrl-C instead of running (profiling by hand)
#   --no-union        run the proxy with server.unionRoutes: false (one
#                     backend statement per data node, not per data source)
#   --no-relay        skip the relay target: by default every run is also
#                     measured through bench/relay, a byte-copying TCP relay
#                     in front of the direct server, the floor of what any
#                     proxy in its own process costs on this machine
#   --targets LIST    which targets to run, of: direct direct-half relay
#                     relay2 passthru shard1 proxy passmux mux peer (default:
#                     direct relay proxy, plus peer with --peer-bin).
#                     passthru is shardflake in front of the direct
#                     server's unsharded sbtest1 (no sharded tables);
#                     shard1 is sbtest1 sharded 2 x 4 as for proxy, but both
#                     data sources on server 0; proxy is 2 x 4 over both
#                     servers; passmux and mux are passthru and proxy with
#                     server.multiplex: on (plain reads of stateless
#                     autocommit sessions pipelined on shared backend
#                     connections; MUX_CONNS of them per data source,
#                     default the proxy's; MUX_MAXWAIT sets multiplexMaxWait,
#                     default the proxy's). relay2 is the floor of any hop that
#                     spreads the statements over two servers: two byte
#                     relays, one in front of each server, each server
#                     holding its own unsharded sbtest1 (sbdirect), and
#                     two sysbench processes of --threads/2 each, one per
#                     relay; QPS and statements are summed over both, the
#                     hop's CPU is both relays'. direct-half is direct with
#                     --threads/2 (one server, half the client threads)
#   --decompose       where each statement's time goes: every target of
#                     --targets (default all but peer), and per run the CPU
#                     per statement of the hop (relay or proxy) and of each
#                     MariaDB, their syscalls and context switches per
#                     statement (perf stat, when perf is installed), and the
#                     commands each MariaDB ran per statement (Com_* and
#                     Questions of SHOW GLOBAL STATUS); prints a second table
#                     (default workloads: oltp_point_select oltp_insert),
#                     and a third, per server: the statements it served per
#                     second, its CPU, context switches and CPU migrations
#                     per statement it served, how many of its threads ran
#                     (used CPU in the run) and how many carried 90% of its
#                     CPU (/proc/PID/task/*/stat), Threads_connected and
#                     Threads_running (sampled every second, the sampler's
#                     own connection not counted)
#   --slow-reads R    during the measured runs, one more client per hop
#                     target (relay and every shardflake) sends R slow
#                     single-route plain reads per second, all to server 0
#                     (--slow-read-sql, default a SELECT of sbtest1's row 2
#                     that runs BENCHMARK(20000, MD5(c))): the same load on
#                     MariaDB for every cell, and a read that a multiplexer
#                     queues point selects behind
#   --slow-read-sql Q the statement of --slow-reads
#   --peer-bin PATH   also measure another proxy, whose binary you supply
#                     (nothing is downloaded): target peer
#   --peer-config F   the peer's config file as a template: @PORT@ (where it
#                     listens), @DB0_PORT@, @DB1_PORT@ (the two servers,
#                     user root without a password) are replaced; database
#                     sbpeer exists on both servers for it; sbtest1 is
#                     loaded through the peer
#   --peer-args ARGS  the peer's command line (default: -config @CONFIG@;
#                     @PORT@, @DB0_PORT@, @DB1_PORT@ are replaced here too)
#   --peer-user U, --peer-password P, --peer-db D: how sysbench logs in to
#                     the peer (default root, none, sbpeer)
# Environment: GOGC, GOMEMLIMIT, GOMAXPROCS are passed to the proxy as set.
set -euo pipefail

TIME=30 REPEATS=3 THREADS=8 TABLE_SIZE=100000 BUFFER_POOL=512M LOCK_WAIT=1
WORKLOADS="oltp_point_select oltp_read_only oltp_write_only oltp_insert oltp_read_write"
MODES="auto disable"
PROFILE_DIR="" PROXY_BIN="" KEEP=0 RAW_OUT="" HOLD=0 LAYOUT=mod RELAY=1 UNION=true
TARGETS_SET="" DECOMPOSE=0 WORKLOADS_SET=0 SKIP_TRX=0
SLOW_RATE=0 SLOW_SQL="SELECT id, BENCHMARK(20000, MD5(c)) FROM sbtest1 WHERE id = 2"
PEER_BIN="" PEER_CONFIG="" PEER_ARGS="-config @CONFIG@" PEER_USER=root PEER_PASSWORD="" PEER_DB=sbpeer

while [[ $# -gt 0 ]]; do
	case "$1" in
	--time) TIME=$2; shift 2 ;;
	--repeats) REPEATS=$2; shift 2 ;;
	--threads) THREADS=$2; shift 2 ;;
	--table-size) TABLE_SIZE=$2; shift 2 ;;
	--workloads) WORKLOADS=$2 WORKLOADS_SET=1; shift 2 ;;
	--modes) MODES=$2; shift 2 ;;
	--buffer-pool) BUFFER_POOL=$2; shift 2 ;;
	--layout) LAYOUT=$2; shift 2 ;;
	--lock-wait) LOCK_WAIT=$2; shift 2 ;;
	--quick) TIME=5 REPEATS=1 TABLE_SIZE=10000; shift ;;
	--profile) PROFILE_DIR=$(realpath -m "$2"); shift 2 ;;
	--proxy-bin) PROXY_BIN=$(realpath "$2"); shift 2 ;;
	--keep) KEEP=1; shift ;;
	--raw) RAW_OUT=$(realpath -m "$2"); shift 2 ;;
	--hold) HOLD=1; shift ;;
	--no-relay) RELAY=0; shift ;;
	--no-union) UNION=false; shift ;;
	--targets) TARGETS_SET=$2; shift 2 ;;
	--decompose) DECOMPOSE=1; shift ;;
	--skip-trx) SKIP_TRX=1; shift ;;
	--slow-reads) SLOW_RATE=$2; shift 2 ;;
	--slow-read-sql) SLOW_SQL=$2; shift 2 ;;
	--peer-bin) PEER_BIN=$(realpath "$2"); shift 2 ;;
	--peer-config) PEER_CONFIG=$(realpath "$2"); shift 2 ;;
	--peer-args) PEER_ARGS=$2; shift 2 ;;
	--peer-user) PEER_USER=$2; shift 2 ;;
	--peer-password) PEER_PASSWORD=$2; shift 2 ;;
	--peer-db) PEER_DB=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/sysbench.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
	esac
done

[[ $LAYOUT == mod || $LAYOUT == range ]] || { echo "bench/sysbench.sh: --layout mod or range" >&2; exit 2; }
if [[ -n $TARGETS_SET ]]; then
	TARGETS=$TARGETS_SET
elif [[ $DECOMPOSE == 1 ]]; then
	TARGETS="direct relay relay2 passthru shard1 proxy"
else
	TARGETS="direct relay proxy"
fi
[[ $RELAY == 0 ]] && TARGETS=$(echo " $TARGETS " | sed 's/ relay / /; s/^ //; s/ $//')
[[ -n $PEER_BIN && " $TARGETS " != *" peer "* ]] && TARGETS="$TARGETS peer"
for t in $TARGETS; do
	case $t in
	direct | direct-half | relay | relay2 | passthru | shard1 | proxy | passmux | mux) ;;
	peer) [[ -n $PEER_BIN && -n $PEER_CONFIG ]] || { echo "bench/sysbench.sh: target peer needs --peer-bin and --peer-config" >&2; exit 2; } ;;
	*) echo "bench/sysbench.sh: unknown target $t" >&2; exit 2 ;;
	esac
done
[[ " $TARGETS " == *" direct "* ]] || { echo "bench/sysbench.sh: the targets must include direct (ratios are against it)" >&2; exit 2; }
[[ $DECOMPOSE == 1 && $WORKLOADS_SET == 0 ]] && WORKLOADS="oltp_point_select oltp_insert"
has_target() { [[ " $TARGETS " == *" $1 "* ]]; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib.sh"

need() { command -v "$1" >/dev/null || die "$1 not found ($2)"; }
MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)
[[ -x $MARIADBD ]] || die "mariadbd not found (Debian package mariadb-server)"
need mariadb-install-db "Debian package mariadb-server"
need mariadb "Debian package mariadb-client"
need sysbench "Debian package sysbench"
[[ -n $PROXY_BIN ]] && ! has_target relay && ! has_target relay2 || need go "Go 1.26 or later"
PERF=0
if [[ $DECOMPOSE == 1 ]] && command -v perf >/dev/null &&
	perf stat -e raw_syscalls:sys_enter,context-switches,cpu-migrations true >/dev/null 2>&1; then
	PERF=1
fi


# Both servers get exactly these flags: the direct figures and the sharded
# ones come from identically tuned MariaDBs.
mariadb_flags() {
	local dir=$1 port=$2
	echo --no-defaults --user=root --datadir="$dir/data" --port="$port" \
		--bind-address=127.0.0.1 --socket="$dir/mysqld.sock" --pid-file="$dir/mysqld.pid" \
		--log-error="$dir/mariadbd.log" --tmpdir="$dir/tmp" --skip-name-resolve --skip-log-bin \
		--innodb-buffer-pool-size="$BUFFER_POOL" --innodb-log-file-size=256M \
		--innodb-flush-log-at-trx-commit=2 --innodb-doublewrite=0 --innodb-use-native-aio=0 \
		--performance-schema=OFF --character-set-server=utf8mb4 \
		--collation-server=utf8mb4_general_ci --max-connections=1000 \
		--table-open-cache=1000 --max-prepared-stmt-count=100000 \
		--innodb-lock-wait-timeout="$LOCK_WAIT"
}

DB_PORT=() DB_PID=()
start_mariadb() {
	local i=$1 dir port pid
	dir=$WORK/db$i
	mkdir -p "$dir/tmp"
	mariadb-install-db --no-defaults --user=root --datadir="$dir/data" \
		--auth-root-authentication-method=normal --skip-test-db --skip-name-resolve \
		--innodb-log-file-size=256M --innodb-buffer-pool-size="$BUFFER_POOL" \
		>"$dir/install.log" 2>&1 || die "mariadb-install-db failed: $(tail -5 "$dir/install.log")"
	for _ in 1 2 3 4 5; do
		port=$(free_port)
		# shellcheck disable=SC2046
		"$MARIADBD" $(mariadb_flags "$dir" "$port") &
		pid=$!
		PIDS+=("$pid")
		for _ in $(seq 600); do
			if mariadb -h127.0.0.1 -P"$port" -uroot -e 'SELECT 1' >/dev/null 2>&1; then
				DB_PORT[i]=$port DB_PID[i]=$pid
				return
			fi
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		grep -q "Address already in use" "$dir/mariadbd.log" 2>/dev/null || die "mariadbd $i did not start: $(tail -5 "$dir/mariadbd.log")"
	done
	die "mariadbd $i: no free port"
}

sql() { # sql PORT USER PASSWORD SQL
	mariadb -h127.0.0.1 -P"$1" -u"$2" ${3:+-p"$3"} -N -B -e "$4"
}

log "work directory $WORK; starting two MariaDB servers (buffer pool $BUFFER_POOL each)"
start_mariadb 0
start_mariadb 1
sql "${DB_PORT[0]}" root "" "CREATE DATABASE ds_0; CREATE DATABASE sbdirect; CREATE DATABASE s1_0; CREATE DATABASE s1_1"
sql "${DB_PORT[1]}" root "" "CREATE DATABASE ds_1"
has_target relay2 && sql "${DB_PORT[1]}" root "" "CREATE DATABASE sbdirect"
has_target peer && for i in 0 1; do sql "${DB_PORT[i]}" root "" "CREATE DATABASE $PEER_DB"; done
MARIADB_VERSION=$(sql "${DB_PORT[0]}" root "" "SELECT VERSION()")

if [[ -z $PROXY_BIN ]]; then
	log "building the proxy"
	(cd "$ROOT" && go build -o "$WORK/shardflake" ./cmd/shardflake)
	PROXY_BIN=$WORK/shardflake
fi

# HOP_PID[TARGET], HOP_PORT[TARGET]: the process between sysbench and
# MariaDB (relay, a shardflake, the peer) and where it listens. relay2 has
# two: HOP_PID[relay2] is "PID0,PID1" (perf stat -p takes the list), and
# its relays listen on HOP_PORT[relay2.0] and HOP_PORT[relay2.1].
declare -A HOP_PID HOP_PORT
RELAY_PORT=""
# start_relay NAME SERVER: a byte relay in front of MariaDB SERVER.
start_relay() {
	local port
	port=$(free_port)
	"$WORK/relay" -listen "127.0.0.1:$port" -to "127.0.0.1:${DB_PORT[$2]}" 2>"$WORK/$1.log" &
	PIDS+=("$!")
	HOP_PID[$1]=$! HOP_PORT[$1]=$port
}
if has_target relay || has_target relay2; then
	(cd "$ROOT" && go build -o "$WORK/relay" ./bench/relay)
fi
if has_target relay; then
	log "starting the relay in front of the direct server"
	start_relay relay 0
	RELAY_PORT=${HOP_PORT[relay]}
fi
if has_target relay2; then
	log "starting relay2: a relay in front of each server"
	start_relay relay2.0 0
	start_relay relay2.1 1
	HOP_PID[relay2]=${HOP_PID[relay2.0]},${HOP_PID[relay2.1]}
fi

# sharding_rules DS0_URL DS1_URL: the rules section of sbtest1 over two
# data sources x 4 tables, in the --layout chosen.
sharding_rules() {
	cat <<YAML
dataSources:
  ds_0: { url: "$1", username: root, password: "", maxPoolSize: 64 }
  ds_1: { url: "$2", username: root, password: "", maxPoolSize: 64 }
rules:
YAML
	if [[ $LAYOUT == mod ]]; then
		cat "$ROOT/bench/sysbench_mod_rules.yaml"
	else
		# 8 blocks of table-size/8 consecutive ids, sbtest1_0..3 on ds_0 and
		# sbtest1_4..7 on ds_1; ids below the first boundary (oltp_insert's
		# negative ones) go to sbtest1_0.
		local b=$(((TABLE_SIZE + 7) / 8))
		cat <<YAML
  - !SHARDING
    tables:
      sbtest1:
        actualDataNodes: ds_0.sbtest1_\${0..3},ds_1.sbtest1_\${4..7}
        databaseStrategy:
          standard: { shardingColumn: id, shardingAlgorithmName: sb_db }
        tableStrategy:
          standard: { shardingColumn: id, shardingAlgorithmName: sb_table }
    shardingAlgorithms:
      sb_db:    { type: BOUNDARY_RANGE, props: { sharding-ranges: "$((4 * b))" } }
      sb_table: { type: BOUNDARY_RANGE, props: { sharding-ranges: "$b,$((2 * b)),$((3 * b)),$((4 * b)),$((5 * b)),$((6 * b)),$((7 * b))" } }
YAML
	fi
}

# start_proxy TARGET: a shardflake for TARGET with its own rules file.
declare -A PPROF_PORT=() METRICS_PORT=()
start_proxy() {
	local target=$1 port metrics rules=$WORK/rules-$1.yaml pid pprof=() mux=off
	[[ $target == passmux || $target == mux ]] && mux=on
	port=$(free_port) metrics=$(free_port)
	cat >"$rules" <<YAML
databaseName: sharding_db
server:
  listen: 127.0.0.1:$port
  metricsListen: 127.0.0.1:$metrics
  users:
    - { user: app, password: app-secret }
  unionRoutes: $UNION
  multiplex: $mux
${MUX_CONNS:+  multiplexConnections: $MUX_CONNS}
${MUX_MAXWAIT:+  multiplexMaxWait: $MUX_MAXWAIT}
YAML
	case $target in
	passthru | passmux)
		cat >>"$rules" <<YAML
dataSources:
  ds_0: { url: "jdbc:mysql://127.0.0.1:${DB_PORT[0]}/sbdirect", username: root, password: "", maxPoolSize: 64 }
rules: []
YAML
		;;
	shard1) sharding_rules "jdbc:mysql://127.0.0.1:${DB_PORT[0]}/s1_0" "jdbc:mysql://127.0.0.1:${DB_PORT[0]}/s1_1" >>"$rules" ;;
	proxy | mux) sharding_rules "jdbc:mysql://127.0.0.1:${DB_PORT[0]}/ds_0" "jdbc:mysql://127.0.0.1:${DB_PORT[1]}/ds_1" >>"$rules" ;;
	esac
	if [[ -n $PROFILE_DIR ]]; then
		PPROF_PORT[$target]=$(free_port)
		pprof=(--pprof "127.0.0.1:${PPROF_PORT[$target]}")
	fi
	log "starting the proxy for $target on port $port"
	"$PROXY_BIN" serve --config "$rules" --log-level warn "${pprof[@]}" 2>"$WORK/proxy-$target.log" &
	pid=$!
	PIDS+=("$pid")
	HOP_PID[$target]=$pid HOP_PORT[$target]=$port METRICS_PORT[$target]=$metrics
	for _ in $(seq 300); do
		sql "$port" app app-secret "SELECT 1" >/dev/null 2>&1 && return
		kill -0 "$pid" 2>/dev/null || die "the proxy for $target exited: $(tail -5 "$WORK/proxy-$target.log")"
		sleep 0.1
	done
	die "the proxy for $target does not answer"
}
for t in passthru shard1 proxy passmux mux; do
	has_target "$t" && start_proxy "$t"
done
PROXY_PID=${HOP_PID[proxy]:-}

if has_target peer; then
	port=$(free_port)
	sed -e "s/@PORT@/$port/g" -e "s/@DB0_PORT@/${DB_PORT[0]}/g" -e "s/@DB1_PORT@/${DB_PORT[1]}/g" "$PEER_CONFIG" >"$WORK/peer.conf"
	log "starting the peer $PEER_BIN on port $port"
	args=$(echo "$PEER_ARGS" | sed -e "s|@CONFIG@|$WORK/peer.conf|g" -e "s/@PORT@/$port/g" -e "s/@DB0_PORT@/${DB_PORT[0]}/g" -e "s/@DB1_PORT@/${DB_PORT[1]}/g")
	# shellcheck disable=SC2086
	(cd "$WORK" && exec "$PEER_BIN" $args) >"$WORK/peer.log" 2>&1 &
	PIDS+=("$!")
	HOP_PID[peer]=$! HOP_PORT[peer]=$port
	for _ in $(seq 300); do
		sql "$port" "$PEER_USER" "$PEER_PASSWORD" "SELECT 1" >/dev/null 2>&1 && break
		kill -0 "${HOP_PID[peer]}" 2>/dev/null || die "the peer exited: $(tail -5 "$WORK/peer.log")"
		sleep 0.1
	done
	sql "$port" "$PEER_USER" "$PEER_PASSWORD" "SELECT 1" >/dev/null || die "the peer does not answer"
fi

# Targets: direct and relay are sbdirect on server 0, the proxies
# sharding_db, the peer what --peer-db says.
target_args() {
	case $1 in
	direct | direct-half) echo --mysql-port="${DB_PORT[0]}" --mysql-user=root --mysql-db=sbdirect ;;
	direct1) echo --mysql-port="${DB_PORT[1]}" --mysql-user=root --mysql-db=sbdirect ;;
	relay) echo --mysql-port="$RELAY_PORT" --mysql-user=root --mysql-db=sbdirect ;;
	relay2.0 | relay2.1) echo --mysql-port="${HOP_PORT[$1]}" --mysql-user=root --mysql-db=sbdirect ;;
	passthru | shard1 | proxy | passmux | mux) echo --mysql-port="${HOP_PORT[$1]}" --mysql-user=app --mysql-password=app-secret --mysql-db=sharding_db ;;
	peer) echo --mysql-port="${HOP_PORT[peer]}" --mysql-user="$PEER_USER" ${PEER_PASSWORD:+--mysql-password="$PEER_PASSWORD"} --mysql-db="$PEER_DB" ;;
	esac
}

sb() { # sb TARGET ARGS... ; sysbench with the common flags
	local target=$1
	shift
	# shellcheck disable=SC2046
	sysbench --db-driver=mysql --mysql-host=127.0.0.1 $(target_args "$target") \
		--tables=1 --table-size="$TABLE_SIZE" --auto-inc=off "$@"
}

# node_tables I: the physical tables of data source I.
node_tables() {
	if [[ $LAYOUT == mod ]]; then
		echo 0 1 2 3
	else
		seq $((4 * $1)) $((4 * $1 + 3))
	fi
}
# sharded_dbs TARGET: SERVER:DATABASE of each data source of a sharded
# target.
sharded_dbs() {
	case $1 in
	shard1) echo 0:s1_0 0:s1_1 ;;
	proxy | mux) echo 0:ds_0 1:ds_1 ;;
	esac
}

log "loading sbtest1 ($TABLE_SIZE rows): directly, then through each sharded target"
sb direct oltp_common prepare >"$WORK/prepare-direct.log" 2>&1 || die "prepare direct: $(tail -5 "$WORK/prepare-direct.log")"
sql "${DB_PORT[0]}" root "" "ANALYZE TABLE sbdirect.sbtest1" >/dev/null
if has_target relay2; then
	sb direct1 oltp_common prepare >"$WORK/prepare-direct1.log" 2>&1 || die "prepare on server 1: $(tail -5 "$WORK/prepare-direct1.log")"
	sql "${DB_PORT[1]}" root "" "ANALYZE TABLE sbdirect.sbtest1" >/dev/null
fi
for t in shard1 proxy mux peer; do
	has_target "$t" || continue
	# mux serves proxy's databases: loaded once.
	[[ $t == mux ]] && has_target proxy && continue
	sb "$t" oltp_common prepare >"$WORK/prepare-$t.log" 2>&1 || die "prepare through $t: $(tail -5 "$WORK/prepare-$t.log")"
	[[ $t == peer ]] && continue
	rows=0 i=0
	for sd in $(sharded_dbs "$t"); do
		server=${sd%%:*} db=${sd#*:}
		for j in $(node_tables "$i"); do
			n=$(sql "${DB_PORT[server]}" root "" "SELECT COUNT(*) FROM $db.sbtest1_$j")
			[[ $n -gt 0 ]] || die "$db.sbtest1_$j is empty after prepare through $t"
			rows=$((rows + n))
			sql "${DB_PORT[server]}" root "" "ANALYZE TABLE $db.sbtest1_$j" >/dev/null
		done
		i=$((i + 1))
	done
	[[ $rows == "$TABLE_SIZE" ]] || die "the data nodes of $t hold $rows rows, want $TABLE_SIZE"
done

if [[ $HOLD == 1 ]]; then
	echo "direct: mariadb -h127.0.0.1 -P${DB_PORT[0]} -uroot sbdirect   (pid ${DB_PID[0]}; ds_1 server pid ${DB_PID[1]} port ${DB_PORT[1]})"
	has_target relay && echo "relay: mariadb -h127.0.0.1 -P${HOP_PORT[relay]} -uroot sbdirect   (pid ${HOP_PID[relay]})"
	has_target relay2 && echo "relay2: mariadb -h127.0.0.1 -P${HOP_PORT[relay2.0]} -uroot sbdirect and -P${HOP_PORT[relay2.1]} (server 1's sbdirect)   (pids ${HOP_PID[relay2]})"
	for t in passthru shard1 proxy passmux mux; do
		has_target "$t" && echo "$t:  mariadb -h127.0.0.1 -P${HOP_PORT[$t]} -uapp -papp-secret sharding_db   (pid ${HOP_PID[$t]}, rules $WORK/rules-$t.yaml)"
	done
	echo "holding; Ctrl-C stops everything"
	while :; do sleep 3600; done
fi

# trim deletes what oltp_insert added, so every run sees the same table.
trim() {
	local where="id < 1 OR id > $TABLE_SIZE" t sd j i
	sql "${DB_PORT[0]}" root "" "DELETE FROM sbdirect.sbtest1 WHERE $where"
	has_target relay2 && sql "${DB_PORT[1]}" root "" "DELETE FROM sbdirect.sbtest1 WHERE $where"
	for t in shard1 proxy mux; do
		has_target "$t" || continue
		i=0
		for sd in $(sharded_dbs "$t"); do
			for j in $(node_tables "$i"); do
				sql "${DB_PORT[${sd%%:*}]}" root "" "DELETE FROM ${sd#*:}.sbtest1_$j WHERE $where"
			done
			i=$((i + 1))
		done
	done
	if has_target peer; then
		sql "${HOP_PORT[peer]}" "$PEER_USER" "$PEER_PASSWORD" "DELETE FROM $PEER_DB.sbtest1 WHERE $where"
	fi
}

CLK_TCK=$(getconf CLK_TCK)
cpu_ticks() { # cpu_ticks PID[,PID...]: utime+stime, in clock ticks, summed
	local stat pid sum=0
	for pid in ${1//,/ }; do
		stat=$(<"/proc/$pid/stat")
		stat=${stat##*) }
		# shellcheck disable=SC2086
		set -- $stat
		sum=$((sum + ${12} + ${13}))
	done
	echo "$sum"
}
# thread_ticks PID: "TID TICKS" for each of the process's threads.
thread_ticks() {
	awk '{tid = FILENAME; sub(/\/stat$/, "", tid); sub(/.*\//, "", tid); sub(/^.*\) /, ""); print tid, $12 + $13}' \
		/proc/"$1"/task/*/stat 2>/dev/null || true
}
# busy_threads BEFORE AFTER: "threads that ran<TAB>threads carrying 90% of
# the CPU" between two thread_ticks snapshots.
busy_threads() {
	awk 'NR == FNR {b[$1] = $2; next} {d = $2 - b[$1]; if (d > 0) {n++; t += d; print d}} END {print "total", n + 0, t + 0}' "$1" "$2" |
		sort -k1,1nr | awk '$1 == "total" {n = $2; t = $3; next} {v[++m] = $1}
		END {s = 0; h = 0; for (i = 1; i <= m && s < 0.9 * t; i++) {s += v[i]; h++} printf "%d\t%d", n, h}'
}
peak_rss_kib() { # summed over PID[,PID...]
	local pid sum=0
	for pid in ${1//,/ }; do sum=$((sum + $(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status"))); done
	echo "$sum"
}
# reset_peak_rss starts a new VmHWM measurement (Linux 4.0+, as root).
reset_peak_rss() {
	local pid
	for pid in ${1//,/ }; do echo 5 >"/proc/$pid/clear_refs" 2>/dev/null || true; done
}
# per_stmt_us TICKS QUERIES: CPU microseconds per statement.
per_stmt_us() { awk -v t="$1" -v hz="$CLK_TCK" -v q="$2" 'BEGIN {printf "%.1f", t / hz / q * 1e6}'; }

# Counters of one process over a run (--decompose): perf stat counts the
# syscalls and context switches of all its threads, including the ones it
# starts during the run (MariaDB's per-connection threads).
COUNTER_PIDS=()
start_counters() { # start_counters NAME PID
	COUNTER_PIDS+=("")
	[[ $PERF == 1 ]] || return 0
	perf stat -x, -e raw_syscalls:sys_enter,context-switches,cpu-migrations -p "$2" -o "$WORK/perf-$1.txt" 2>/dev/null &
	COUNTER_PIDS[-1]=$!
}
stop_counters() {
	local pid
	for pid in "${COUNTER_PIDS[@]}"; do
		[[ -n $pid ]] && kill -INT "$pid" 2>/dev/null
	done
	for pid in "${COUNTER_PIDS[@]}"; do
		# perf stat ends by re-raising the SIGINT: status 130.
		[[ -z $pid ]] || wait "$pid" 2>/dev/null || true
	done
	COUNTER_PIDS=()
	return 0
}
# counters_per_stmt NAME QUERIES: "syscalls/stmt<TAB>switches/stmt", or -.
counters_per_stmt() {
	[[ $PERF == 1 && -s $WORK/perf-$1.txt ]] || { printf -- '-\t-'; return; }
	awk -F, -v q="$2" '$3 ~ /raw_syscalls/ {s = $1} $3 ~ /context-switches/ {c = $1}
		END {printf "%.2f\t%.2f", s / q, c / q}' "$WORK/perf-$1.txt"
}
# status_snapshot SERVER FILE: the command counters of a server.
status_snapshot() {
	sql "${DB_PORT[$1]}" root "" "SHOW GLOBAL STATUS WHERE Variable_name LIKE 'Com\\_%' OR Variable_name IN ('Questions', 'Bytes_received', 'Bytes_sent')" >"$2"
}
# migrations_per_stmt NAME QUERIES: CPU migrations per statement, or -.
migrations_per_stmt() {
	[[ $PERF == 1 && -s $WORK/perf-$1.txt ]] || { printf -- '-'; return; }
	awk -F, -v q="$2" '$3 ~ /cpu-migrations/ {m = $1} END {printf "%.3f", m / q}' "$WORK/perf-$1.txt"
}
# Threads_connected and Threads_running of both servers, every second while
# $WORK/sampling exists, into $WORK/threads.txt ("SERVER CONNECTED
# RUNNING"), less the sampler's own connection, from the run's second
# second on.
sample_threads() {
	sleep 1 # sysbench connects its threads first
	while [[ -e $WORK/sampling ]]; do
		for i in 0 1; do
			sql "${DB_PORT[i]}" root "" "SHOW GLOBAL STATUS WHERE Variable_name IN ('Threads_connected', 'Threads_running')" |
				awk -v s="$i" '{v[$1] = $2} END {print s, v["Threads_connected"] - 1, v["Threads_running"] - 1}' >>"$WORK/threads.txt"
		done
		sleep 1
	done
}
# threads_mean SERVER: "mean connected<TAB>mean running", or "-<TAB>-".
threads_mean() {
	awk -v s="$1" '$1 == s {n++; c += $2; r += $3} END {if (n) printf "%.1f\t%.1f", c / n, r / n; else printf "-\t-"}' "$WORK/threads.txt"
}
# sb_run TARGET OUT ARGS...: the target's sysbench run at --threads, its
# output in OUT. relay2 runs two sysbench processes of threads/2 at once,
# one per relay (OUT.0, OUT.1, and both in OUT); direct-half one of
# threads/2.
sb_run() {
	local target=$1 out=$2 half=$((THREADS / 2 > 0 ? THREADS / 2 : 1)) a b rc=0
	shift 2
	case $target in
	relay2)
		sb relay2.0 --threads="$half" "$@" >"$out.0" 2>&1 &
		a=$!
		sb relay2.1 --threads="$((THREADS - THREADS / 2))" "$@" >"$out.1" 2>&1 &
		b=$!
		wait "$a" || rc=1
		wait "$b" || rc=1
		cat "$out.0" "$out.1" >"$out"
		return $rc
		;;
	direct-half) sb direct --threads="$half" "$@" >"$out" 2>&1 ;;
	*) sb "$target" --threads="$THREADS" "$@" >"$out" 2>&1 ;;
	esac
}

# mux_counters TARGET: the shared connections' counters summed over the
# data sources: "commands writes responses reads left bypassed".
mux_counters() {
	curl -sf "http://127.0.0.1:${METRICS_PORT[$1]}/metrics" | awk '
		/^shardflake_multiplex_commands_total/ {c += $2} /^shardflake_multiplex_writes_total/ {w += $2}
		/^shardflake_multiplex_responses_total/ {r += $2} /^shardflake_multiplex_response_reads_total/ {d += $2}
		/^shardflake_multiplex_left_total/ {l += $2} /^shardflake_multiplex_bypassed_total/ {b += $2}
		END {printf "%d %d %d %d %d %d", c, w, r, d, l, b}'
}

RAW=$WORK/raw.tsv COM=$WORK/com.tsv MUX=$WORK/mux.tsv
printf 'repeat\tworkload\tmode\ttarget\tcommands_per_stmt\tcommands_per_write\tresponses_per_read\tleft_per_1k\tbypassed_per_1k\n' >"$MUX"
printf 'repeat\tworkload\tmode\ttarget\tqps\tp95_ms\tproxy_cpu_s_per_1k\tproxy_peak_rss_mib\tdb_cpu_s_per_1k\terrors\tignored\thop_cpu_us\tdb0_cpu_us\tdb1_cpu_us\thop_syscalls\thop_switches\tdb0_syscalls\tdb0_switches\tdb1_syscalls\tdb1_switches\tdb0_share\tdb1_share\tdb0_migrations\tdb1_migrations\tdb0_threads_ran\tdb0_threads_90\tdb1_threads_ran\tdb1_threads_90\tdb0_connected\tdb0_running\tdb1_connected\tdb1_running\n' >"$RAW"
printf 'repeat\tworkload\tmode\ttarget\tserver\tcounter\tdelta\tqueries\n' >"$COM"

# kind_args KIND: the sysbench options that keep only the reads of KIND
# (workload NAME/KIND).
kind_args() {
	local k n v
	for k in points simple sum order distinct; do
		n=0
		[[ $k == "$1" ]] && n=1
		case $k in
		points) v=--point_selects=$((n * 10)) ;;
		simple) v=--simple_ranges=$n ;;
		sum) v=--sum_ranges=$n ;;
		order) v=--order_ranges=$n ;;
		distinct) v=--distinct_ranges=$n ;;
		esac
		echo "$v"
	done
}
for w in $WORKLOADS; do
	[[ $w != */* ]] && continue
	case ${w%%/*} in oltp_read_only | oltp_read_write) ;; *) die "--workloads $w: only oltp_read_only and oltp_read_write take a /KIND" ;; esac
	case ${w#*/} in points | simple | sum | order | distinct) ;; *) die "--workloads $w: KIND is points, simple, sum, order or distinct" ;; esac
done

# run_one REPEAT WORKLOAD MODE TARGET: one sysbench run and its figures.
run_one() {
	local rep=$1 workload=$2 mode=$3 target=$4
	local out=$WORK/run-$rep-${workload//\//-}-$mode-$target.log
	local extra=() h0=0 h1=0 d0 d1 e0 e1 queries qps p95 errors ignored prof_pid="" hop=${HOP_PID[$target]:-} i
	local base=${workload%%/*} kind=()
	[[ $workload == */* ]] && mapfile -t kind < <(kind_args "${workload#*/}")
	# oltp_insert picks random ids; one may hit a row of the table now
	# and then (1 in ~40,000 per insert at 100,000 rows): not a failure.
	[[ $workload == oltp_insert ]] && extra=(--mysql-ignore-errors=1062)
	if [[ $SKIP_TRX == 1 && ($base == oltp_read_only || $base == oltp_read_write) ]]; then
		# Without a transaction another thread may insert the id that
		# oltp_read_write's DELETE + INSERT just freed: 1062, as directly;
		# and autocommit DELETEs and INSERTs of neighbouring ids deadlock
		# now and then on InnoDB's gap locks (1213, directly too): sysbench
		# counts and retries both, on every target alike.
		extra=(--skip_trx=on --mysql-ignore-errors=1062,1213)
	fi
	if [[ $DECOMPOSE == 1 ]]; then
		for i in 0 1; do
			status_snapshot "$i" "$WORK/status-$i.before"
			thread_ticks "${DB_PID[i]}" >"$WORK/tasks-$i.before"
		done
		[[ -n $hop ]] && start_counters hop "$hop"
		start_counters db0 "${DB_PID[0]}"
		start_counters db1 "${DB_PID[1]}"
		[[ $PERF == 1 ]] && sleep 0.3 # perf attaches
	fi
	local mux0="" mux1
	[[ $target == mux || $target == passmux ]] && mux0=$(mux_counters "$target")
	if [[ -n $hop ]]; then
		reset_peak_rss "$hop"
		h0=$(cpu_ticks "$hop")
	fi
	d0=$(cpu_ticks "${DB_PID[0]}") e0=$(cpu_ticks "${DB_PID[1]}")
	if [[ -n $PROFILE_DIR && $rep == 1 && -n ${PPROF_PORT[$target]:-} ]]; then
		mkdir -p "$PROFILE_DIR"
		prof=$PROFILE_DIR/${workload//\//-}-$mode$([[ $target == proxy ]] || echo "-$target")
		curl -sf "http://127.0.0.1:${PPROF_PORT[$target]}/debug/pprof/allocs" -o "$prof.allocs.before"
		curl -sf "http://127.0.0.1:${PPROF_PORT[$target]}/debug/pprof/profile?seconds=$((TIME > 3 ? TIME - 2 : 1))" \
			-o "$prof.cpu" &
		prof_pid=$!
	fi
	local sampler=""
	if [[ $DECOMPOSE == 1 ]]; then
		touch "$WORK/sampling"
		: >"$WORK/threads.txt"
		sample_threads &
		sampler=$!
	fi
	sb_run "$target" "$out" --time="$TIME" --report-interval=0 --percentile=95 \
		--db-ps-mode="$mode" "${extra[@]}" "${kind[@]}" "$base" run || die "$workload $mode $target failed: $(tail -5 "$out")"
	[[ -n $hop ]] && h1=$(cpu_ticks "$hop")
	d1=$(cpu_ticks "${DB_PID[0]}") e1=$(cpu_ticks "${DB_PID[1]}")
	if [[ $DECOMPOSE == 1 ]]; then
		for i in 0 1; do thread_ticks "${DB_PID[i]}" >"$WORK/tasks-$i.after"; done
		rm -f "$WORK/sampling"
		stop_counters
		wait "$sampler" || true
	fi
	if [[ -n $prof_pid ]]; then
		wait "$prof_pid" || log "CPU profile of $workload $mode failed"
		curl -sf "http://127.0.0.1:${PPROF_PORT[$target]}/debug/pprof/allocs" -o "$prof.allocs.after"
	fi
	# Summed over relay2's two processes (p95: the larger).
	queries=$(awk '/^ *queries:/ {s += $2; n++} END {if (n) print s}' "$out")
	qps=$(awk '/^ *queries:/ {gsub(/\(/, "", $3); s += $3; n++} END {if (n) printf "%.2f\n", s}' "$out")
	p95=$(awk '/95th percentile:/ {if ($3 + 0 > m) m = $3 + 0; n++} END {if (n) print m}' "$out")
	errors=$(awk '/^ *errors:/ {s += $2} END {print s + 0}' "$out")
	ignored=$(awk '/ignored errors:/ {s += $3} END {print s + 0}' "$out")
	[[ -n $queries && $queries -gt 0 ]] || die "cannot read $out"
	if [[ $DECOMPOSE == 1 ]]; then
		for i in 0 1; do
			status_snapshot "$i" "$WORK/status-$i.after"
			awk -v pre="$rep	$workload	$mode	$target	$i" -v q="$queries" 'NR == FNR {b[$1] = $2; next}
				$2 - b[$1] > 0 {printf "%s\t%s\t%d\t%d\n", pre, $1, $2 - b[$1], q}' \
				"$WORK/status-$i.before" "$WORK/status-$i.after" >>"$COM"
		done
	fi
	# Per server (--decompose): the share of the statements it served
	# (Questions), CPU migrations per statement, its threads that ran and
	# those carrying 90% of its CPU, Threads_connected and Threads_running.
	local servers="-	-	-	-	-	-	-	-	-	-	-	-"
	if [[ $DECOMPOSE == 1 ]]; then
		local share=() threads=()
		for i in 0 1; do
			share[i]=$(awk -v q="$queries" 'NR == FNR {if ($1 == "Questions") b = $2; next} $1 == "Questions" {printf "%.4f", ($2 - b) / q}' \
				"$WORK/status-$i.before" "$WORK/status-$i.after")
			threads[i]=$(busy_threads "$WORK/tasks-$i.before" "$WORK/tasks-$i.after")
		done
		servers="${share[0]}	${share[1]}	$(migrations_per_stmt db0 "$queries")	$(migrations_per_stmt db1 "$queries")	${threads[0]}	${threads[1]}	$(threads_mean 0)	$(threads_mean 1)"
	fi
	local proxy_cpu="-" rss="-" hop_us="-"
	if [[ -n $hop ]]; then
		proxy_cpu=$(awk -v t="$((h1 - h0))" -v hz="$CLK_TCK" -v q="$queries" 'BEGIN {printf "%.4f", t / hz / q * 1000}')
		hop_us=$(per_stmt_us "$((h1 - h0))" "$queries")
		rss=$(awk -v k="$(peak_rss_kib "$hop")" 'BEGIN {printf "%.1f", k / 1024}')
	fi
	local db_cpu hop_counts="-	-"
	db_cpu=$(awk -v t="$((d1 - d0 + e1 - e0))" -v hz="$CLK_TCK" -v q="$queries" 'BEGIN {printf "%.4f", t / hz / q * 1000}')
	[[ -n $hop ]] && hop_counts=$(counters_per_stmt hop "$queries")
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$workload" "$mode" "$target" \
		"$qps" "$p95" "$proxy_cpu" "$rss" "$db_cpu" "$errors" "$ignored" \
		"$hop_us" "$(per_stmt_us "$((d1 - d0))" "$queries")" "$(per_stmt_us "$((e1 - e0))" "$queries")" \
		"$hop_counts" "$(counters_per_stmt db0 "$queries")" "$(counters_per_stmt db1 "$queries")" "$servers" >>"$RAW"
	rm -f "$WORK"/perf-*.txt
	if [[ -n $hop ]]; then
		log "  #$rep $workload $mode $target: $qps QPS, p95 $p95 ms, hop CPU $hop_us us/stmt, peak RSS $rss MiB"
	else
		log "  #$rep $workload $mode $target: $qps QPS, p95 $p95 ms"
	fi
	if [[ -n $mux0 ]]; then
		mux1=$(mux_counters "$target")
		# shellcheck disable=SC2086
		awk -v pre="$rep	$workload	$mode	$target" -v q="$queries" -v a="$mux0" -v b="$mux1" 'BEGIN {
			split(a, x, " "); split(b, y, " "); for (i = 1; i <= 6; i++) d[i] = y[i] - x[i]
			printf "%s\t%.3f\t%.2f\t%.2f\t%.2f\t%.2f\n", pre, d[1] / q, (d[2] ? d[1] / d[2] : 0), (d[4] ? d[3] / d[4] : 0), 1000 * d[5] / q, 1000 * d[6] / q
		}' >>"$MUX"
		log "    shared connections: $(tail -1 "$MUX" | cut -f5-9 | awk -F'\t' '{printf "%s commands/stmt, %s commands/write, %s responses/read; per 1000 statements %s left a stalled one, %s bypassed", $1, $2, $3, $4, $5}')"
	fi
	[[ $workload == oltp_insert ]] && trim
	return 0
}

log "warming up (oltp_point_select, $((TIME < 10 ? TIME : 10)) s per target)"
for target in $TARGETS; do
	sb_run "$target" "$WORK/warmup-$target.log" --time=$((TIME < 10 ? TIME : 10)) --db-ps-mode=auto \
		oltp_point_select run || die "warm-up $target failed: $(tail -5 "$WORK/warmup-$target.log")"
done

if [[ $SLOW_RATE != 0 ]]; then
	cat >"$WORK/slowread.lua" <<'LUA'
sysbench.cmdline.options = {sql = {"the statement", ""}}
function thread_init()
	con = sysbench.sql.driver():connect()
end
function event()
	con:query(sysbench.opt.sql)
end
function thread_done()
	con:disconnect()
end
LUA
	start=$(date +%s%N)
	sql "${DB_PORT[0]}" root "" "USE sbdirect; $SLOW_SQL" >/dev/null
	took=$((($(date +%s%N) - start) / 1000000))
	slow=()
	for target in $TARGETS; do
		case $target in relay | passthru | shard1 | proxy | passmux | mux | peer) ;; *) continue ;; esac
		# shellcheck disable=SC2046
		sysbench --db-driver=mysql --mysql-host=127.0.0.1 $(target_args "$target") --threads=1 --rate="$SLOW_RATE" \
			--time=0 --events=0 --sql="$SLOW_SQL" "$WORK/slowread.lua" run >"$WORK/slowread-$target.log" 2>&1 &
		PIDS+=("$!") slow+=("$target:$!")
	done
	sleep 1
	for s in "${slow[@]}"; do
		kill -0 "${s#*:}" 2>/dev/null || die "the slow reads through ${s%%:*} stopped: $(tail -3 "$WORK/slowread-${s%%:*}.log")"
	done
	log "slow reads: $SLOW_RATE/s through each of ${slow[*]%%:*}, all to server 0; one takes $took ms directly (with the client's start)"
fi

log "running: $WORKLOADS; modes $MODES; targets $TARGETS; $THREADS threads, $TIME s per run, $REPEATS repeats"
for rep in $(seq "$REPEATS"); do
	# Alternate which target goes first, so neither always runs on the
	# other's leftovers (dirty pages, purge).
	order=$TARGETS
	((rep % 2 == 0)) && order=$(echo "$TARGETS" | tr ' ' '\n' | tac | tr '\n' ' ')
	for workload in $WORKLOADS; do
		for mode in $MODES; do
			for target in $order; do
				run_one "$rep" "$workload" "$mode" "$target"
			done
		done
	done
done

if [[ -n $RAW_OUT ]]; then
	cp "$RAW" "$RAW_OUT"
	[[ $DECOMPOSE == 1 ]] && cp "$COM" "${RAW_OUT%.tsv}.com.tsv"
	[[ $(wc -l <"$MUX") -gt 1 ]] && cp "$MUX" "${RAW_OUT%.tsv}.mux.tsv"
fi
if [[ -n $PROFILE_DIR ]]; then
	cp "$PROXY_BIN" "$PROFILE_DIR/shardflake"
	log "profiles in $PROFILE_DIR (go tool pprof -top $PROFILE_DIR/shardflake $PROFILE_DIR/WORKLOAD-MODE[-TARGET].cpu, no -TARGET for proxy;" \
		"allocations: -sample_index=alloc_space -base ...allocs.before ...allocs.after)"
fi

# The table: medians over the repeats.
TRX_NOTE=""
[[ $SKIP_TRX == 1 ]] && TRX_NOTE=", --skip_trx=on for the read workloads"
echo
echo "shardflake vs direct MariaDB $MARIADB_VERSION; targets $TARGETS; sysbench $(sysbench --version | awk '{print $2}'), $THREADS threads, $TIME s x $REPEATS, sbtest1 of $TABLE_SIZE rows, $LAYOUT layout$TRX_NOTE${GOMAXPROCS:+, proxy GOMAXPROCS=$GOMAXPROCS}${GOGC:+, GOGC=$GOGC}"
echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), kernel $(uname -r); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
MEDIAN='
function median(list,   n, a, i, t, j) {
	n = split(list, a, " ")
	if (n == 0 || a[1] == "-") return "-"
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
	if (n % 2) return a[(n + 1) / 2]
	return (a[n / 2] + a[n / 2 + 1]) / 2
}'
if has_target proxy; then
	awk -F'\t' "$MEDIAN"'
NR > 1 {
	k = $2 SUBSEP $3
	if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
	qps[k, $4] = qps[k, $4] " " $5
	p95[k, $4] = p95[k, $4] " " $6
	dbc[k, $4] = dbc[k, $4] " " $9
	err[k, $4] += $10 + $11
	if ($4 == "proxy") { cpu[k] = cpu[k] " " $7; if ($8 + 0 > rss[k]) rss[k] = $8 + 0 }
}
END {
	printf "| %-17s | %-7s | %10s | %10s | %5s | %10s | %5s | %9s | %9s | %15s | %9s | %15s | %15s | %6s |\n", "workload", "ps-mode", "direct QPS", "proxy QPS", "ratio", "relay QPS", "relay", "direct p95", "proxy p95", "proxy CPU s/1k", "proxy RSS", "db CPU s/1k", "db CPU s/1k", "errors"
	printf "| %-17s | %-7s | %10s | %10s | %5s | %10s | %5s | %9s | %9s | %15s | %9s | %15s | %15s | %6s |\n", "", "", "", "", "", "", "ratio", "ms", "ms", "statements", "peak MiB", "direct", "proxied", ""
	printf "|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", "-------------------", "---------", "-----------:", "-----------:", "------:", "-----------:", "------:", "----------:", "----------:", "---------------:", "----------:", "---------------:", "---------------:", "-------:"
	for (i = 1; i <= nk; i++) {
		k = order[i]; split(k, w, SUBSEP)
		d = median(qps[k, "direct"]); p = median(qps[k, "proxy"])
		r = ((k, "relay") in qps) ? median(qps[k, "relay"]) : 0
		printf "| %-17s | %-7s | %10.0f | %10.0f | %5.2f | %10s | %5s | %9.2f | %9.2f | %15.4f | %9.1f | %15.4f | %15.4f | %6d |\n", w[1], w[2], d, p, (d > 0 ? p / d : 0), (r > 0 ? sprintf("%.0f", r) : "-"), (r > 0 && d > 0 ? sprintf("%.2f", r / d) : "-"), median(p95[k, "direct"]), median(p95[k, "proxy"]), median(cpu[k]), rss[k], median(dbc[k, "direct"]), median(dbc[k, "proxy"]), err[k, "direct"] + err[k, "relay"] + err[k, "proxy"]
	}
}' "$RAW"
fi

# The decomposition (--decompose, or any target beyond direct/relay/proxy):
# one row per workload, mode and target, medians over the repeats; CPU in
# microseconds per sysbench statement, syscalls and context switches per
# statement, and what each MariaDB ran per statement (summed over the
# repeats).
if [[ $DECOMPOSE == 1 || " $TARGETS " =~ " "(passthru|shard1|peer|passmux|mux)" " ]]; then
	echo
	awk -F'\t' "$MEDIAN"'
FILENAME == ARGV[1] && FNR > 1 {
	k = $2 SUBSEP $3
	if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
	t = k SUBSEP $4
	if (!(t in tseen)) { tseen[t] = 1; targets[k] = targets[k] " " $4 }
	for (c = 5; c <= 20; c++) v[t, c] = v[t, c] " " $c
	next
}
FILENAME == ARGV[2] && FNR > 1 {
	t = $2 SUBSEP $3 SUBSEP $4
	name = $6; sub(/^Com_/, "", name)
	if ($6 != "Bytes_received" && $6 != "Bytes_sent" && $6 != "Com_show_status") {
		key = t SUBSEP "db" $5 " " name
		if (!(key in cnt)) names[t] = names[t] SUBSEP "db" $5 " " name
		cnt[key] += $7
	}
	if (!((t, $1, $5) in qs)) { qs[t, $1, $5] = 1; if ($5 == 0) qsum[t] += $8 }
}
END {
	printf "| %-17s | %-7s | %-11s | %9s | %6s | %5s | %7s | %7s | %7s | %9s | %8s | %9s | %8s | %s |\n", "workload", "ps-mode", "target", "QPS", "/direct", "/relay", "hop CPU", "db0 CPU", "db1 CPU", "hop sys", "hop csw", "db sys", "db csw", "MariaDB commands per statement"
	printf "| %-17s | %-7s | %-11s | %9s | %6s | %5s | %7s | %7s | %7s | %9s | %8s | %9s | %8s | %s |\n", "", "", "", "", "", "", "us/stmt", "us/stmt", "us/stmt", "/stmt", "/stmt", "/stmt", "/stmt", ""
	printf "|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", "-------------------", "---------", "-------------", "----------:", "-------:", "------:", "--------:", "--------:", "--------:", "----------:", "---------:", "----------:", "---------:", "---"
	for (i = 1; i <= nk; i++) {
		k = order[i]; split(k, w, SUBSEP)
		d = median(v[k SUBSEP "direct", 5]); r = median(v[k SUBSEP "relay", 5])
		n = split(substr(targets[k], 2), tl, " ")
		for (j = 1; j <= n; j++) {
			t = k SUBSEP tl[j]; q = median(v[t, 5])
			dbs = "-"; dbw = "-"
			if (median(v[t, 17]) != "-") { dbs = sprintf("%.2f", median(v[t, 17]) + median(v[t, 19])); dbw = sprintf("%.2f", median(v[t, 18]) + median(v[t, 20])) }
			cmds = ""
			m = split(substr(names[t], 2), nl, SUBSEP)
			for (c = 1; c <= m; c++) {
				per = cnt[t SUBSEP nl[c]] / qsum[t]
				if (per >= 0.005) cmds = cmds sprintf("%s%s %.2f", (cmds == "" ? "" : ", "), nl[c], per)
			}
			printf "| %-17s | %-7s | %-11s | %9.0f | %6.2f | %5s | %7s | %7s | %7s | %9s | %8s | %9s | %8s | %s |\n", w[1], w[2], tl[j], q, (d > 0 ? q / d : 0), (r != "-" && r > 0 ? sprintf("%.2f", q / r) : "-"), median(v[t, 12]), median(v[t, 13]), median(v[t, 14]), median(v[t, 15]), median(v[t, 16]), dbs, dbw, cmds
		}
	}
}' "$RAW" "$COM"
fi

# Per server (--decompose): what each MariaDB did for the statements it
# served, medians over the repeats. "served/s" is its share of sysbench's
# statements (Questions) times the QPS; CPU, context switches and CPU
# migrations are per statement it served; "ran" counts its threads that
# used CPU during the run, "90%" how many of them (the busiest first) used
# 90% of its CPU; connected and running are the means of Threads_connected
# and Threads_running sampled every second.
if [[ $DECOMPOSE == 1 ]]; then
	echo
	awk -F'\t' "$MEDIAN"'
NR > 1 {
	k = $2 SUBSEP $3
	if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
	t = k SUBSEP $4
	if (!(t in tseen)) { tseen[t] = 1; targets[k] = targets[k] " " $4 }
	for (c = 5; c <= 32; c++) v[t, c] = v[t, c] " " $c
}
function per(x, sh, p) { return (x == "-" || sh <= 0) ? "-" : sprintf("%." p "f", x / sh) }
END {
	printf "| %-17s | %-7s | %-11s | %-6s | %9s | %9s | %7s | %7s | %7s | %4s | %4s | %9s | %7s |\n", "workload", "ps-mode", "target", "server", "served/s", "CPU us", "csw", "migr", "sys", "ran", "90%", "connected", "running"
	printf "| %-17s | %-7s | %-11s | %-6s | %9s | %9s | %7s | %7s | %7s | %4s | %4s | %9s | %7s |\n", "", "", "", "", "", "/served", "/served", "/served", "/served", "", "", "", ""
	printf "|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", "-------------------", "---------", "-------------", "--------", "----------:", "----------:", "--------:", "--------:", "--------:", "-----:", "-----:", "----------:", "--------:"
	for (i = 1; i <= nk; i++) {
		k = order[i]; split(k, w, SUBSEP)
		n = split(substr(targets[k], 2), tl, " ")
		for (j = 1; j <= n; j++) {
			t = k SUBSEP tl[j]
			for (sv = 0; sv <= 1; sv++) {
				sh = median(v[t, 21 + sv])
				if (sh == "-" || sh < 0.01) continue
				printf "| %-17s | %-7s | %-11s | %-6s | %9.0f | %9s | %7s | %7s | %7s | %4s | %4s | %9s | %7s |\n", w[1], w[2], tl[j], "db" sv, median(v[t, 5]) * sh, per(median(v[t, 13 + sv]), sh, 1), per(median(v[t, 18 + 2 * sv]), sh, 2), per(median(v[t, 23 + sv]), sh, 3), per(median(v[t, 17 + 2 * sv]), sh, 2), median(v[t, 25 + 2 * sv]), median(v[t, 26 + 2 * sv]), median(v[t, 29 + 2 * sv]), median(v[t, 30 + 2 * sv])
			}
		}
	}
}' "$RAW"
fi
