# bench/lib.sh: what the benchmark scripts share. Source it after setting
# WORK_NAME (the work directory's name under /tmp) and, optionally,
# KEEP=1 to keep the work directory.
#
#   log MSG...     a time-stamped line on stderr
#   die MSG...     log and exit 1
#   WORK, PIDS     a fresh work directory, and the processes to stop: every
#                  pid in PIDS is killed and waited for on exit
#   free_port      a TCP port nobody listens on; a start that loses the race
#                  for it retries with another

log() { printf '%s %s\n' "$(date +%T.%3N)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

WORK=$(mktemp -d "/tmp/${WORK_NAME:-shardflake-bench}.XXXXXX")
PIDS=()
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
	if [[ ${KEEP:-0} == 1 ]]; then
		log "work directory kept: $WORK"
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
	local p hex
	while :; do
		p=$((20000 + RANDOM % 40000))
		hex=$(printf ':%04X ' "$p")
		grep -q "$hex" /proc/net/tcp /proc/net/tcp6 2>/dev/null || { echo "$p"; return; }
	done
}
