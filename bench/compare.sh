#!/usr/bin/env bash
# bench/compare.sh compares the hot-path Go benchmarks of two commits with
# benchstat.
#
# Usage: bench/compare.sh OLD [NEW]
#   OLD, NEW  commits (anything git rev-parse reads); NEW defaults to the
#             working tree as it is, uncommitted changes included.
# Environment:
#   COUNT      runs per benchmark and side (default 10)
#   BENCH      benchmark regexp (default: the hot path, see below)
#   BENCHTIME  go test -benchtime (default 1s)
#   PKGS       packages (default: ./router ./idgen ./proxy)
#   OUT_DIR    also keep the raw results (old.txt, new.txt) there
#
# The test binaries of both sides are built first; then the two sides run
# alternately, one -count=1 pass at a time, so that a machine getting
# busier or quieter during the comparison affects both alike. benchstat is
# a development tool, run with go run at a pinned version; it is not a
# dependency of the module.
set -euo pipefail

[[ $# -ge 1 && $# -le 2 ]] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
OLD=$1 NEW=${2:-}
COUNT=${COUNT:-10}
BENCH=${BENCH:-'^(BenchmarkRoute|BenchmarkNext|BenchmarkPointSelect|BenchmarkInsert)$'}
BENCHTIME=${BENCHTIME:-1s}
PKGS=${PKGS:-./router ./idgen ./proxy}
BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

ROOT=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
WORK=$(mktemp -d /tmp/shardflake-compare.XXXXXX)
TREES=()
cleanup() {
	local t
	for t in "${TREES[@]}"; do
		git -C "$ROOT" worktree remove --force "$t" >/dev/null 2>&1 || true
	done
	rm -rf "$WORK"
}
trap cleanup EXIT

# checkout REV DIR: a detached worktree of REV.
checkout() {
	git -C "$ROOT" worktree add --quiet --detach "$2" "$1"
	TREES+=("$2")
}

# build SIDE DIR: one test binary per package into $WORK/SIDE/.
build() {
	local side=$1 dir=$2 pkg name
	mkdir -p "$WORK/$side"
	for pkg in $PKGS; do
		name=$(basename "$pkg")
		(cd "$dir" && go test -c -o "$WORK/$side/$name.test" "$pkg")
	done
}

# run SIDE: one pass of every package's benchmarks, appended to SIDE.txt.
run() {
	local side=$1 pkg name
	for pkg in $PKGS; do
		name=$(basename "$pkg")
		[[ -x $WORK/$side/$name.test ]] || continue
		# Benchmarks run in the package directory, as go test runs them.
		(cd "${SRC_DIR[$side]}/$pkg" && "$WORK/$side/$name.test" -test.run '^$' -test.bench "$BENCH" \
			-test.benchmem -test.count 1 -test.benchtime "$BENCHTIME") | grep -E '^(Benchmark|goos|goarch|pkg|cpu)' >>"$WORK/$side.txt" || true
	done
}

declare -A SRC_DIR
checkout "$OLD" "$WORK/tree-old"
SRC_DIR[old]=$WORK/tree-old
if [[ -n $NEW ]]; then
	checkout "$NEW" "$WORK/tree-new"
	SRC_DIR[new]=$WORK/tree-new
else
	SRC_DIR[new]=$ROOT
fi
echo "building: old = $(git -C "$ROOT" rev-parse --short "$OLD"), new = ${NEW:-working tree}" >&2
build old "${SRC_DIR[old]}"
build new "${SRC_DIR[new]}"
for i in $(seq "$COUNT"); do
	echo "pass $i of $COUNT" >&2
	run old
	run new
done
if [[ -n ${OUT_DIR:-} ]]; then mkdir -p "$OUT_DIR" && cp "$WORK/old.txt" "$WORK/new.txt" "$OUT_DIR/"; fi
(cd "$ROOT" && go run "$BENCHSTAT" "old=$WORK/old.txt" "new=$WORK/new.txt")
