#!/bin/sh
# bench/history.sh - what the event history costs, in one run:
#   1. bench/history-append: events appended per second with group
#      commit (synchronous FULL and NORMAL, batch sizes 2..10000);
#   2. call round trips through real hosteld daemons, history on
#      (database-synchronous = full, and = normal) and history off
#      (hostel.conf `history = off`), at several concurrencies, in
#      interleaved rounds (best of ROUNDS), with the ratios on/off;
#   3. in the same rounds, history on (full) with the counter of
#      durability commit (issue 22: a delta of its store in every
#      commit), with the ratios commit/none (none: the `full` daemon).
#
#   sh bench/history.sh [--rounds N] [--seconds S] [--conns 1,16,64,256] BUILDDIR
#
# `make bench-history` runs it.  It prints figures and ratios and never
# fails on speed; the last lines are the ratios (history-cost-*: the
# share of the call throughput that the history costs, target < 20%).
set -u

ROUNDS=3
SECONDS_PER_RUN=2
CONNS="1,16,64,256"
while [ $# -gt 1 ]; do
	case $1 in
	--rounds) ROUNDS=$2; shift 2 ;;
	--seconds) SECONDS_PER_RUN=$2; shift 2 ;;
	--conns) CONNS=$2; shift 2 ;;
	*) break ;;
	esac
done
B=${1:-.}
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
MK=$B/tests/guests/mkcomponent
APPEND=$B/bench/history-append
CALLS=$B/bench/history-calls
SEND=$B/tests/varlink-send
for p in "$HOSTELD" "$HOSTEL" "$MK" "$APPEND" "$CALLS" "$SEND"; do
	if ! test -x "$p"; then
		echo "bench/history.sh: $p is not built" >&2
		exit 1
	fi
done

T=$(mktemp -d "${TMPDIR:-/tmp}/hostel-bench-history.XXXXXX") || exit 1
PIDS=
cleanup() {
	for p in $PIDS; do
		kill -TERM "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

echo "== event append with group commit (bench/history-append)"
TMPDIR=$T "$APPEND" --seconds "$SECONDS_PER_RUN" | tee "$T/append.out"

echo
echo "== call round trips: history on (full, normal) vs off"
"$MK" counter "$T/counter.wasm" || exit 1
MODES="full normal off commit"
# durability none in all but commit (it is the default since issue 22):
# the history's own cost, then commit's on top of full
printf 'database-synchronous = full\ndurability = none\n' >"$T/full.conf"
printf 'database-synchronous = full\ndurability = commit\n' >"$T/commit.conf"
printf 'database-synchronous = normal\ndurability = none\n' >"$T/normal.conf"
printf 'history = off\n' >"$T/off.conf"
for m in $MODES; do
	"$HOSTELD" --foreground --socket "$T/$m.sock" --state-dir "$T/$m" \
		--config "$T/$m.conf" 2>"$T/$m.log" &
	PIDS="$PIDS $!"
	eval "PID_$m=$!"
done
# cpu PID: the process's user + system time so far, in clock ticks.
cpu() {
	awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0
}
HZ=$(getconf CLK_TCK 2>/dev/null || echo 100)
for m in $MODES; do
	i=0
	until "$HOSTEL" --socket "$T/$m.sock" status >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 200 ]; then
			echo "bench/history.sh: hosteld ($m) did not start" >&2
			cat "$T/$m.log" >&2
			exit 1
		fi
		sleep 0.05
	done
	"$HOSTEL" --socket "$T/$m.sock" deploy "$T/counter.wasm" \
		>/dev/null || exit 1
	"$CALLS" "$T/$m.sock" counter inc 4 0.3 >/dev/null || exit 1 # warm
done

# best MODE CONNS: the best calls/s of the rounds so far.
best() {
	sort -n "$T/$1.$2" 2>/dev/null | tail -n 1
}
# least_cpu MODE CONNS: the least hosteld CPU per call of the rounds.
least_cpu() {
	sort -n "$T/$1.$2.cpu" 2>/dev/null | head -n 1
}
r=1
while [ $r -le "$ROUNDS" ]; do
	for c in $(echo "$CONNS" | tr ',' ' '); do
		for m in $MODES; do
			eval "pid=\$PID_$m"
			c0=$(cpu "$pid")
			out=$("$CALLS" "$T/$m.sock" counter inc "$c" \
				"$SECONDS_PER_RUN") || {
				echo "bench/history.sh: calls failed ($m)" >&2
				exit 1
			}
			c1=$(cpu "$pid")
			n=$(echo "$out" | sed -n 's/.* calls=\([0-9]*\) .*/\1/p')
			# hosteld's CPU per call: what a loaded machine's wall
			# clock cannot show.
			us=$(awk -v d=$((c1 - c0)) -v hz="$HZ" -v n="$n" \
				'BEGIN { printf "%.1f", n ? d * 1e6 / hz / n : 0 }')
			echo "round $r history=$m $out hosteld_cpu_us_per_call=$us"
			echo "$out" | sed -n 's/.*calls\/s=\([0-9]*\).*/\1/p' \
				>>"$T/$m.$c"
			echo "$us" >>"$T/$m.$c.cpu"
		done
	done
	r=$((r + 1))
done
# How well the commits grouped the events (io.hostel.History.Stats).
for m in full normal commit; do
	printf 'history=%s: ' "$m"
	"$SEND" "$T/$m.sock" call \
		'{"method":"io.hostel.History.Stats"}' 2>/dev/null |
		sed -n 's/.*"commits":\([0-9]*\),"events":\([0-9]*\).*"commitMeanUs":\([0-9]*\).*"maxBatch":\([0-9]*\).*/\2 events in \1 commits, mean commit \3 us, largest batch \4/p'
done

echo
echo "== ratios (best of $ROUNDS rounds; history-cost = 1 - on/off)"
sed -n 's/^append-full/append-full/p' "$T/append.out"
for c in $(echo "$CONNS" | tr ',' ' '); do
	off=$(best off "$c")
	offcpu=$(least_cpu off "$c")
	for m in full normal; do
		on=$(best "$m" "$c")
		oncpu=$(least_cpu "$m" "$c")
		awk -v m="$m" -v c="$c" -v on="${on:-0}" -v off="${off:-0}" \
			-v oncpu="${oncpu:-0}" -v offcpu="${offcpu:-0}" 'BEGIN {
			if (off > 0)
				printf "history-%s-vs-off-c%s: %.2f  history-cost-%s-c%s: %.0f%% (%s vs %s calls/s)\n",
				    m, c, on / off, m, c, 100 * (1 - on / off), on, off
			if (oncpu > 0)
				printf "history-%s-cpu-c%s: %.2f (hosteld CPU per call, off/on: %s vs %s us)\n",
				    m, c, offcpu / oncpu, offcpu, oncpu
		}'
	done
	none=$(best full "$c")
	nonecpu=$(least_cpu full "$c")
	com=$(best commit "$c")
	comcpu=$(least_cpu commit "$c")
	awk -v c="$c" -v com="${com:-0}" -v none="${none:-0}" \
		-v comcpu="${comcpu:-0}" -v nonecpu="${nonecpu:-0}" 'BEGIN {
		if (none > 0)
			printf "durability-commit-vs-none-c%s: %.2f (%s vs %s calls/s)\n",
			    c, com / none, com, none
		if (comcpu > 0)
			printf "durability-commit-cpu-c%s: %.2f (hosteld CPU per call, none/commit: %s vs %s us)\n",
			    c, nonecpu / comcpu, nonecpu, comcpu
	}'
done
