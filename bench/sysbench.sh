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
#                     oltp_write_only oltp_insert oltp_read_write)
#   --modes LIST      --db-ps-mode values (default: "auto disable")
#   --layout L        how sbtest1 is sharded: mod (default: id % 8, the rows
#                     of any id range spread over all 8 data nodes, so range
#                     queries scan all of them) or range (8 contiguous id
#                     blocks, BOUNDARY_RANGE: a range query reads 1-2 nodes)
#   --buffer-pool S   innodb_buffer_pool_size of both servers (default 512M)
#   --lock-wait S     innodb_lock_wait_timeout of both servers (default 1): a
#                     deadlock between transactions that span both data
#                     sources is invisible to each server and only ends when
#                     a lock wait times out (sysbench retries on 1205)
#   --quick           smoke: --time 5 --repeats 1 --table-size 10000
#   --profile DIR     also save the proxy's CPU and allocation profiles of
#                     each proxied run of the first repeat into DIR
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
# Environment: GOGC, GOMEMLIMIT, GOMAXPROCS are passed to the proxy as set.
set -euo pipefail

TIME=30 REPEATS=3 THREADS=8 TABLE_SIZE=100000 BUFFER_POOL=512M LOCK_WAIT=1
WORKLOADS="oltp_point_select oltp_read_only oltp_write_only oltp_insert oltp_read_write"
MODES="auto disable"
PROFILE_DIR="" PROXY_BIN="" KEEP=0 RAW_OUT="" HOLD=0 LAYOUT=mod RELAY=1 UNION=true

while [[ $# -gt 0 ]]; do
	case "$1" in
	--time) TIME=$2; shift 2 ;;
	--repeats) REPEATS=$2; shift 2 ;;
	--threads) THREADS=$2; shift 2 ;;
	--table-size) TABLE_SIZE=$2; shift 2 ;;
	--workloads) WORKLOADS=$2; shift 2 ;;
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
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/sysbench.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
	esac
done

[[ $LAYOUT == mod || $LAYOUT == range ]] || { echo "bench/sysbench.sh: --layout mod or range" >&2; exit 2; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

need() { command -v "$1" >/dev/null || die "$1 not found ($2)"; }
MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)
[[ -x $MARIADBD ]] || die "mariadbd not found (Debian package mariadb-server)"
need mariadb-install-db "Debian package mariadb-server"
need mariadb "Debian package mariadb-client"
need sysbench "Debian package sysbench"
[[ -n $PROXY_BIN && $RELAY == 0 ]] || need go "Go 1.26 or later"

WORK=$(mktemp -d /tmp/shardflake-bench.XXXXXX)
PIDS=()
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	if [[ $KEEP == 1 ]]; then
		log "work directory kept: $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# free_port prints a TCP port nobody listens on; a start that loses the
# race for it retries with another.
free_port() {
	local p hex
	while :; do
		p=$((20000 + RANDOM % 40000))
		hex=$(printf ':%04X ' "$p")
		if ! grep -q "$hex" /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}

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
sql "${DB_PORT[0]}" root "" "CREATE DATABASE ds_0; CREATE DATABASE sbdirect"
sql "${DB_PORT[1]}" root "" "CREATE DATABASE ds_1"
MARIADB_VERSION=$(sql "${DB_PORT[0]}" root "" "SELECT VERSION()")

if [[ -z $PROXY_BIN ]]; then
	log "building the proxy"
	(cd "$ROOT" && go build -o "$WORK/shardflake" ./cmd/shardflake)
	PROXY_BIN=$WORK/shardflake
fi

TARGETS="direct proxy"
if [[ $RELAY == 1 ]]; then
	log "building and starting the relay in front of the direct server"
	(cd "$ROOT" && go build -o "$WORK/relay" ./bench/relay)
	RELAY_PORT=$(free_port)
	"$WORK/relay" -listen "127.0.0.1:$RELAY_PORT" -to "127.0.0.1:${DB_PORT[0]}" 2>"$WORK/relay.log" &
	PIDS+=("$!")
	TARGETS="direct relay proxy"
fi

PROXY_PORT=$(free_port) METRICS_PORT=$(free_port) PPROF_PORT=$(free_port)
cat >"$WORK/rules.yaml" <<YAML
databaseName: sharding_db
server:
  listen: 127.0.0.1:$PROXY_PORT
  metricsListen: 127.0.0.1:$METRICS_PORT
  users:
    - { user: app, password: app-secret }
  unionRoutes: $UNION
dataSources:
  ds_0: { url: "jdbc:mysql://127.0.0.1:${DB_PORT[0]}/ds_0", username: root, password: "", maxPoolSize: 64 }
  ds_1: { url: "jdbc:mysql://127.0.0.1:${DB_PORT[1]}/ds_1", username: root, password: "", maxPoolSize: 64 }
rules:
YAML
if [[ $LAYOUT == mod ]]; then
	# sbtest1.id is a signed INTEGER and oltp_insert (--auto-inc=off)
	# inserts negative ids, hence Math.abs; id % 8 picks one of the 8 data
	# nodes. The range queries of oltp_read_only/read_write scan all 8.
	cat >>"$WORK/rules.yaml" <<YAML
  - !SHARDING
    tables:
      sbtest1:
        actualDataNodes: ds_\${0..1}.sbtest1_\${0..3}
        databaseStrategy:
          standard: { shardingColumn: id, shardingAlgorithmName: sb_db }
        tableStrategy:
          standard: { shardingColumn: id, shardingAlgorithmName: sb_table }
    shardingAlgorithms:
      sb_db:    { type: INLINE, props: { algorithm-expression: "ds_\${Math.abs(id) % 2}", allow-range-query-with-inline-sharding: true } }
      sb_table: { type: INLINE, props: { algorithm-expression: "sbtest1_\${Math.abs(id).intdiv(2) % 4}", allow-range-query-with-inline-sharding: true } }
YAML
else
	# 8 blocks of table-size/8 consecutive ids, sbtest1_0..3 on ds_0 and
	# sbtest1_4..7 on ds_1; ids below the first boundary (oltp_insert's
	# negative ones) go to sbtest1_0.
	B=$(((TABLE_SIZE + 7) / 8))
	cat >>"$WORK/rules.yaml" <<YAML
  - !SHARDING
    tables:
      sbtest1:
        actualDataNodes: ds_0.sbtest1_\${0..3},ds_1.sbtest1_\${4..7}
        databaseStrategy:
          standard: { shardingColumn: id, shardingAlgorithmName: sb_db }
        tableStrategy:
          standard: { shardingColumn: id, shardingAlgorithmName: sb_table }
    shardingAlgorithms:
      sb_db:    { type: BOUNDARY_RANGE, props: { sharding-ranges: "$((4 * B))" } }
      sb_table: { type: BOUNDARY_RANGE, props: { sharding-ranges: "$B,$((2 * B)),$((3 * B)),$((4 * B)),$((5 * B)),$((6 * B)),$((7 * B))" } }
YAML
fi

log "starting the proxy on port $PROXY_PORT"
PPROF_FLAG=()
[[ -n $PROFILE_DIR ]] && PPROF_FLAG=(--pprof "127.0.0.1:$PPROF_PORT")
"$PROXY_BIN" serve --config "$WORK/rules.yaml" --log-level warn "${PPROF_FLAG[@]}" 2>"$WORK/proxy.log" &
PROXY_PID=$!
PIDS+=("$PROXY_PID")
for _ in $(seq 300); do
	sql "$PROXY_PORT" app app-secret "SELECT 1" >/dev/null 2>&1 && break
	kill -0 "$PROXY_PID" 2>/dev/null || die "the proxy exited: $(tail -5 "$WORK/proxy.log")"
	sleep 0.1
done
sql "$PROXY_PORT" app app-secret "SELECT 1" >/dev/null || die "the proxy does not answer"

# Targets: direct is sbdirect on server 0, proxy is sharding_db.
target_args() {
	case $1 in
	direct) echo --mysql-port="${DB_PORT[0]}" --mysql-user=root --mysql-db=sbdirect ;;
	relay) echo --mysql-port="$RELAY_PORT" --mysql-user=root --mysql-db=sbdirect ;;
	proxy) echo --mysql-port="$PROXY_PORT" --mysql-user=app --mysql-password=app-secret --mysql-db=sharding_db ;;
	esac
}

sb() { # sb TARGET ARGS... ; sysbench with the common flags
	local target=$1
	shift
	# shellcheck disable=SC2046
	sysbench --db-driver=mysql --mysql-host=127.0.0.1 $(target_args "$target") \
		--tables=1 --table-size="$TABLE_SIZE" --auto-inc=off "$@"
}

log "loading sbtest1 ($TABLE_SIZE rows): through the proxy (sharded), then directly"
sb proxy oltp_common prepare >"$WORK/prepare-proxy.log" 2>&1 || die "prepare through the proxy: $(tail -5 "$WORK/prepare-proxy.log")"
sb direct oltp_common prepare >"$WORK/prepare-direct.log" 2>&1 || die "prepare direct: $(tail -5 "$WORK/prepare-direct.log")"
# node_tables I: the physical tables of ds_I.
node_tables() {
	if [[ $LAYOUT == mod ]]; then
		echo 0 1 2 3
	else
		seq $((4 * $1)) $((4 * $1 + 3))
	fi
}
rows=0
for i in 0 1; do
	for j in $(node_tables "$i"); do
		n=$(sql "${DB_PORT[i]}" root "" "SELECT COUNT(*) FROM ds_$i.sbtest1_$j")
		[[ $n -gt 0 ]] || die "ds_$i.sbtest1_$j is empty after prepare"
		rows=$((rows + n))
	done
done
[[ $rows == "$TABLE_SIZE" ]] || die "the data nodes hold $rows rows, want $TABLE_SIZE"
sql "${DB_PORT[0]}" root "" "ANALYZE TABLE sbdirect.sbtest1" >/dev/null
for i in 0 1; do
	for j in $(node_tables "$i"); do
		sql "${DB_PORT[i]}" root "" "ANALYZE TABLE ds_$i.sbtest1_$j" >/dev/null
	done
done

if [[ $HOLD == 1 ]]; then
	echo "direct: mariadb -h127.0.0.1 -P${DB_PORT[0]} -uroot sbdirect   (pid ${DB_PID[0]}; ds_1 server pid ${DB_PID[1]} port ${DB_PORT[1]})"
	echo "proxy:  mariadb -h127.0.0.1 -P$PROXY_PORT -uapp -papp-secret sharding_db   (pid $PROXY_PID, rules $WORK/rules.yaml)"
	echo "holding; Ctrl-C stops everything"
	while :; do sleep 3600; done
fi

# trim deletes what oltp_insert added, so every run sees the same table.
trim() {
	local where="id < 1 OR id > $TABLE_SIZE"
	sql "${DB_PORT[0]}" root "" "DELETE FROM sbdirect.sbtest1 WHERE $where"
	for i in 0 1; do
		for j in $(node_tables "$i"); do
			sql "${DB_PORT[i]}" root "" "DELETE FROM ds_$i.sbtest1_$j WHERE $where"
		done
	done
}

CLK_TCK=$(getconf CLK_TCK)
cpu_ticks() { # utime+stime of a process, in clock ticks
	local stat
	stat=$(<"/proc/$1/stat")
	stat=${stat##*) }
	# shellcheck disable=SC2086
	set -- $stat
	echo $((${12} + ${13}))
}
peak_rss_kib() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status"; }
# reset_peak_rss starts a new VmHWM measurement (Linux 4.0+, as root).
reset_peak_rss() { echo 5 >"/proc/$1/clear_refs" 2>/dev/null || true; }

RAW=$WORK/raw.tsv
printf 'repeat\tworkload\tmode\ttarget\tqps\tp95_ms\tproxy_cpu_s_per_1k\tproxy_peak_rss_mib\tdb_cpu_s_per_1k\terrors\tignored\n' >"$RAW"

# run_one REPEAT WORKLOAD MODE TARGET: one sysbench run and its figures.
run_one() {
	local rep=$1 workload=$2 mode=$3 target=$4
	local out=$WORK/run-$rep-$workload-$mode-$target.log
	local extra=() p0 p1 d0 d1 db_before db_after queries qps p95 errors ignored prof_pid=""
	# oltp_insert picks random ids; one may hit a row of the table now
	# and then (1 in ~40,000 per insert at 100,000 rows): not a failure.
	[[ $workload == oltp_insert ]] && extra=(--mysql-ignore-errors=1062)
	reset_peak_rss "$PROXY_PID"
	p0=$(cpu_ticks "$PROXY_PID")
	d0=$(($(cpu_ticks "${DB_PID[0]}") + $(cpu_ticks "${DB_PID[1]}")))
	if [[ -n $PROFILE_DIR && $rep == 1 && $target == proxy ]]; then
		mkdir -p "$PROFILE_DIR"
		curl -sf "http://127.0.0.1:$PPROF_PORT/debug/pprof/allocs" -o "$PROFILE_DIR/$workload-$mode.allocs.before"
		curl -sf "http://127.0.0.1:$PPROF_PORT/debug/pprof/profile?seconds=$((TIME > 3 ? TIME - 2 : 1))" \
			-o "$PROFILE_DIR/$workload-$mode.cpu" &
		prof_pid=$!
	fi
	sb "$target" --threads="$THREADS" --time="$TIME" --report-interval=0 --percentile=95 \
		--db-ps-mode="$mode" "${extra[@]}" "$workload" run >"$out" 2>&1 || die "$workload $mode $target failed: $(tail -5 "$out")"
	p1=$(cpu_ticks "$PROXY_PID")
	d1=$(($(cpu_ticks "${DB_PID[0]}") + $(cpu_ticks "${DB_PID[1]}")))
	if [[ -n $prof_pid ]]; then
		wait "$prof_pid" || log "CPU profile of $workload $mode failed"
		curl -sf "http://127.0.0.1:$PPROF_PORT/debug/pprof/allocs" -o "$PROFILE_DIR/$workload-$mode.allocs.after"
	fi
	queries=$(awk '/^ *queries:/ {print $2}' "$out")
	qps=$(awk '/^ *queries:/ {gsub(/\(/, "", $3); print $3}' "$out")
	p95=$(awk '/95th percentile:/ {print $3}' "$out")
	errors=$(awk '/^ *errors:/ {print $2}' "$out")
	ignored=$(awk '/ignored errors:/ {print $3}' "$out")
	[[ -n $queries && $queries -gt 0 ]] || die "cannot read $out"
	local proxy_cpu="-" rss="-"
	if [[ $target == proxy ]]; then
		proxy_cpu=$(awk -v t="$((p1 - p0))" -v hz="$CLK_TCK" -v q="$queries" 'BEGIN {printf "%.4f", t / hz / q * 1000}')
		rss=$(awk -v k="$(peak_rss_kib "$PROXY_PID")" 'BEGIN {printf "%.1f", k / 1024}')
	fi
	local db_cpu
	db_cpu=$(awk -v t="$((d1 - d0))" -v hz="$CLK_TCK" -v q="$queries" 'BEGIN {printf "%.4f", t / hz / q * 1000}')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$workload" "$mode" "$target" \
		"$qps" "$p95" "$proxy_cpu" "$rss" "$db_cpu" "$errors" "$ignored" >>"$RAW"
	if [[ $target == proxy ]]; then
		log "  #$rep $workload $mode $target: $qps QPS, p95 $p95 ms, proxy CPU $proxy_cpu s/1k, peak RSS $rss MiB"
	else
		log "  #$rep $workload $mode $target: $qps QPS, p95 $p95 ms"
	fi
	[[ $workload == oltp_insert ]] && trim
	return 0
}

log "warming up (oltp_point_select, $((TIME < 10 ? TIME : 10)) s per target)"
for target in $TARGETS; do
	sb "$target" --threads="$THREADS" --time=$((TIME < 10 ? TIME : 10)) --db-ps-mode=auto \
		oltp_point_select run >"$WORK/warmup-$target.log" 2>&1 ||
		die "warm-up $target failed: $(tail -5 "$WORK/warmup-$target.log")"
done

log "running: $WORKLOADS; modes $MODES; $THREADS threads, $TIME s per run, $REPEATS repeats"
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

[[ -n $RAW_OUT ]] && cp "$RAW" "$RAW_OUT"
if [[ -n $PROFILE_DIR ]]; then
	cp "$PROXY_BIN" "$PROFILE_DIR/shardflake"
	log "profiles in $PROFILE_DIR (go tool pprof -top $PROFILE_DIR/shardflake $PROFILE_DIR/WORKLOAD-MODE.cpu;" \
		"allocations: -sample_index=alloc_space -base ...allocs.before ...allocs.after)"
fi

# The table: medians over the repeats.
echo
echo "shardflake vs direct MariaDB $MARIADB_VERSION${RELAY_PORT:+ (and through bench/relay)}; sysbench $(sysbench --version | awk '{print $2}'), $THREADS threads, $TIME s x $REPEATS, sbtest1 of $TABLE_SIZE rows, $LAYOUT layout${GOMAXPROCS:+, proxy GOMAXPROCS=$GOMAXPROCS}${GOGC:+, GOGC=$GOGC}"
echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), kernel $(uname -r); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
awk -F'\t' '
function median(list,   n, a, i, t, j) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
	if (n % 2) return a[(n + 1) / 2]
	return (a[n / 2] + a[n / 2 + 1]) / 2
}
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
