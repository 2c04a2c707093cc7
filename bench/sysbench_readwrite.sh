#!/usr/bin/env bash
# bench/sysbench_readwrite.sh measures read/write splitting: sysbench
# oltp_read_only through the proxy over one primary alone, and through the
# proxy over the same primary with two replicas (a !READWRITE_SPLITTING
# group, round robin), interleaved in one run on one machine. It prints the
# QPS of each, their ratio, and the share of the reads each server
# answered (its Com_select during the runs over the group).
#
# It starts three MariaDB servers (a primary with its binary log and two
# replicas with MariaDB GTID replication, CHANGE MASTER TO ...
# MASTER_USE_GTID=slave_pos), loads sbtest1 on the primary with sysbench's
# prepare, waits until the replicas have it, and runs both proxies from
# one built binary.
#
# Usage: bench/sysbench_readwrite.sh [flags]
#   --time S        seconds per run (default 20)
#   --repeats N     runs per target, interleaved; medians (default 3)
#   --threads N     sysbench threads (default 8)
#   --table-size N  rows of sbtest1 (default 20000)
#   --quick         smoke: --time 5 --repeats 1
set -euo pipefail

TIME=20 REPEATS=3 THREADS=8 TABLE_SIZE=20000
while [[ $# -gt 0 ]]; do
	case "$1" in
	--time) TIME=$2; shift 2 ;;
	--repeats) REPEATS=$2; shift 2 ;;
	--threads) THREADS=$2; shift 2 ;;
	--table-size) TABLE_SIZE=$2; shift 2 ;;
	--quick) TIME=5 REPEATS=1; shift ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/sysbench_readwrite.sh: unknown flag $1 (see --help)" >&2; exit 2 ;;
	esac
done

ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK_NAME=shardflake-rwbench
. "$ROOT/bench/lib.sh"
MARIADBD=$(command -v mariadbd || echo /usr/sbin/mariadbd)
[[ -x $MARIADBD ]] || die "mariadbd not found (Debian package mariadb-server)"
for c in mariadb-install-db mariadb sysbench go; do
	command -v "$c" >/dev/null || die "$c not found"
done


sql() { mariadb -h127.0.0.1 -P"$1" -uroot -N -B -e "$2"; }

# start_mariadb I EXTRA-FLAGS...: server I, same tuning for all three.
PORT=()
start_mariadb() {
	local i=$1 dir port pid
	shift
	dir=$WORK/db$i
	mkdir -p "$dir/tmp"
	mariadb-install-db --no-defaults --user=root --datadir="$dir/data" --auth-root-authentication-method=normal \
		--skip-test-db --skip-name-resolve >"$dir/install.log" 2>&1 || die "mariadb-install-db: $(tail -3 "$dir/install.log")"
	port=$(free_port)
	"$MARIADBD" --no-defaults --user=root --datadir="$dir/data" --port="$port" --bind-address=127.0.0.1 \
		--socket="$dir/mysqld.sock" --pid-file="$dir/mysqld.pid" --log-error="$dir/mariadbd.log" --tmpdir="$dir/tmp" \
		--skip-name-resolve --innodb-buffer-pool-size=256M --innodb-flush-log-at-trx-commit=2 \
		--performance-schema=OFF --max-connections=1000 --max-prepared-stmt-count=100000 "$@" >/dev/null 2>&1 &
	pid=$!
	PIDS+=("$pid")
	for _ in $(seq 600); do
		if sql "$port" 'SELECT 1' >/dev/null 2>&1; then
			PORT[i]=$port
			return
		fi
		kill -0 "$pid" 2>/dev/null || die "mariadbd $i: $(tail -3 "$dir/mariadbd.log")"
		sleep 0.1
	done
	die "mariadbd $i did not start"
}

log "work directory $WORK; starting a primary and two replicas"
start_mariadb 0 --log-bin=mariadb-bin --server-id=1 --binlog-format=ROW
start_mariadb 1 --skip-log-bin --server-id=2 --relay-log=relay-bin
start_mariadb 2 --skip-log-bin --server-id=3 --relay-log=relay-bin
for i in 1 2; do
	sql "${PORT[i]}" "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=${PORT[0]}, MASTER_USER='root', MASTER_PASSWORD='', MASTER_USE_GTID=slave_pos; START SLAVE"
done
sql "${PORT[0]}" "CREATE DATABASE sb"
log "loading sbtest1 ($TABLE_SIZE rows) on the primary"
sysbench oltp_read_only --mysql-host=127.0.0.1 --mysql-port="${PORT[0]}" --mysql-user=root --mysql-db=sb \
	--tables=1 --table-size="$TABLE_SIZE" prepare >"$WORK/prepare.log" 2>&1 || die "prepare: $(tail -3 "$WORK/prepare.log")"
POS=$(sql "${PORT[0]}" "SELECT @@gtid_binlog_pos")
for i in 1 2; do
	[[ $(sql "${PORT[i]}" "SELECT MASTER_GTID_WAIT('$POS', 120)") == 0 ]] || die "replica $i did not catch up"
done

log "building the proxy"
(cd "$ROOT" && go build -o "$WORK/shardflake" ./cmd/shardflake)

# start_proxy NAME GROUP starts a proxy (GROUP=1: the replicas as a
# read/write group) and sets STARTED to its port. (Not $(start_proxy):
# the proxy would hold the substitution's pipe open.)
start_proxy() {
	local name=$1 group=$2 port metrics
	port=$(free_port) metrics=$(free_port)
	{
		cat <<YAML
databaseName: sb
server:
  listen: 127.0.0.1:$port
  metricsListen: 127.0.0.1:$metrics
  users:
    - { user: app, password: app-secret }
dataSources:
  primary_0: { url: "jdbc:mysql://127.0.0.1:${PORT[0]}/sb", username: root, password: "", maxPoolSize: 64 }
YAML
		if [[ $group == 1 ]]; then
			cat <<YAML
  replica_0: { url: "jdbc:mysql://127.0.0.1:${PORT[1]}/sb", username: root, password: "", maxPoolSize: 64 }
  replica_1: { url: "jdbc:mysql://127.0.0.1:${PORT[2]}/sb", username: root, password: "", maxPoolSize: 64 }
rules:
  - !READWRITE_SPLITTING
    dataSourceGroups:
      readwrite_0: { writeDataSourceName: primary_0, readDataSourceNames: [replica_0, replica_1], loadBalancerName: rr }
    loadBalancers:
      rr: { type: ROUND_ROBIN }
YAML
		fi
	} >"$WORK/$name.yaml"
	"$WORK/shardflake" serve --config "$WORK/$name.yaml" --log-level warn >/dev/null 2>"$WORK/$name.log" &
	PIDS+=("$!")
	for _ in $(seq 100); do
		mariadb -h127.0.0.1 -P"$port" -uapp -papp-secret sb -N -B -e 'SELECT 1' >/dev/null 2>&1 && { STARTED=$port; return; }
		sleep 0.1
	done
	die "proxy $name did not start: $(tail -3 "$WORK/$name.log")"
}
start_proxy primary 0
PRIMARY_ONLY=$STARTED
start_proxy group 1
GROUP=$STARTED
# The monitor needs a probe before the replicas serve reads.
for _ in $(seq 50); do
	up=$(mariadb -h127.0.0.1 -P"$GROUP" -uapp -papp-secret sb -N -B -e 'SHOW READWRITE_SPLITTING STATUS' | awk '$3 == "replica" && $4 == "up"' | wc -l)
	[[ $up == 2 ]] && break
	sleep 0.1
done
[[ $up == 2 ]] || die "replicas not serving reads"

com_select() { sql "$1" "SHOW GLOBAL STATUS LIKE 'Com_select'" | awk '{print $2}'; }
run() { # run PORT -> QPS
	sysbench oltp_read_only --mysql-host=127.0.0.1 --mysql-port="$1" --mysql-user=app --mysql-password=app-secret \
		--mysql-db=sb --tables=1 --table-size="$TABLE_SIZE" --threads="$THREADS" --time="$TIME" --report-interval=0 run \
		| awk '/queries:/ {gsub(/[(]/, "", $3); print $3}'
}
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

declare -a QA QB
SEL=(0 0 0)
for r in $(seq "$REPEATS"); do
	log "repeat $r: oltp_read_only, $THREADS threads, ${TIME}s, primary alone"
	QA+=("$(run "$PRIMARY_ONLY")")
	before=($(com_select "${PORT[0]}") $(com_select "${PORT[1]}") $(com_select "${PORT[2]}"))
	log "repeat $r: the same over the group (primary + 2 replicas)"
	QB+=("$(run "$GROUP")")
	after=($(com_select "${PORT[0]}") $(com_select "${PORT[1]}") $(com_select "${PORT[2]}"))
	for i in 0 1 2; do SEL[i]=$((SEL[i] + after[i] - before[i])); done
done
A=$(printf '%s\n' "${QA[@]}" | median)
B=$(printf '%s\n' "${QB[@]}" | median)
TOTAL=$((SEL[0] + SEL[1] + SEL[2]))
echo "oltp_read_only, $THREADS threads, ${TIME}s x $REPEATS, table-size $TABLE_SIZE, $(nproc) CPUs"
printf '%-34s %10s\n' "target" "QPS (median)"
printf '%-34s %10.0f\n' "proxy, primary alone" "$A"
printf '%-34s %10.0f\n' "proxy, primary + 2 replicas" "$B"
awk -v a="$A" -v b="$B" 'BEGIN {printf "ratio (group / primary alone)      %10.2f\n", b / a}'
echo "read share over the group (Com_select during its runs):"
awk -v p="${SEL[0]}" -v r0="${SEL[1]}" -v r1="${SEL[2]}" -v t="$TOTAL" 'BEGIN {
	printf "  primary   %6.1f%%\n  replica_0 %6.1f%%\n  replica_1 %6.1f%%\n", 100 * p / t, 100 * r0 / t, 100 * r1 / t }'
