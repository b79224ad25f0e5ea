#!/bin/sh
# soak.sh - hosteld's memory stays flat under a long, steady load:
# SOAK_SERVICES services (default 100), half of them tickers whose
# background task ticks on the WASI 0.3 clock every 100 ms, half of them
# counters; a client calls them round-robin for SOAK_MINUTES minutes
# (default 30).  hosteld's resident set size (VmRSS) is sampled every
# SOAK_SAMPLE seconds (default 30); the baseline is the first sample
# after a warm-up of SOAK_WARMUP seconds from the daemon's start (default
# a sixth of the run, at least 75 s).  The page caches of the daemon's
# two SQLite connections, the loop's and the history writer's, and the
# WAL index fill in the first minutes as the history grows to its
# retention, then stay (measured: 5 minutes at 100 services); the loop's
# cache takes its first pages when the first retention pass and
# checkpoint run, 60 s after the start (measured: +400 to +600 kB at 20
# services, in one step), so no baseline is taken before them.  The last
# sample must be within
# SOAK_GROWTH_PCT percent of it (default 5).  The tickers' counts
# must have grown and every call must have succeeded.
#
# Not part of `make check` (it runs for half an hour); CI runs a short
# version (SOAK_MINUTES=2 SOAK_SERVICES=20).  Run it from a build tree:
#
#   HOSTEL_BUILDDIR=build HOSTEL_SRCDIR=. sh tests/soak.sh
#
# Prints the samples, closes with "N passed, N failed".

set -u

B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
NAME=soak
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
MK=$B/tests/guests/mkcomponent
TICKER=$S/tests/guests/ticker/ticker.wasm
need_programs "$HOSTELD" "$HOSTEL" "$MK"
MINUTES=${SOAK_MINUTES:-30}
NSVC=${SOAK_SERVICES:-100}
SAMPLE=${SOAK_SAMPLE:-30}
GROWTH=${SOAK_GROWTH_PCT:-5}

tap_tmpdir
SOCK=$T/h.sock
LOG=$T/hosteld.log
rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$DPID/status"
}

"$MK" counter "$T/counter.wasm" || exit 99
started=$(date +%s)
"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$T/state" \
	2>>"$LOG" &
DPID=$!
PIDS="$PIDS $DPID"
wait_for 10 H status >/dev/null || {
	echo "$NAME: hosteld did not start" >&2
	exit 1
}

nt=$((NSVC / 2))
nc=$((NSVC - nt))
bad=0
i=0
while test $i -lt $nt; do
	H deploy "$TICKER" --name "t$i" >/dev/null 2>&1 || bad=$((bad + 1))
	H call "t$i" 'start()' >/dev/null 2>&1 || bad=$((bad + 1))
	i=$((i + 1))
done
i=0
while test $i -lt $nc; do
	H deploy "$T/counter.wasm" --name "c$i" >/dev/null 2>&1 ||
		bad=$((bad + 1))
	i=$((i + 1))
done
check "$nt tickers and $nc counters deployed and started" test $bad -eq 0

end=$(($(date +%s) + MINUTES * 60))
warmup=${SOAK_WARMUP:-$((MINUTES * 10 > 75 ? MINUTES * 10 : 75))}
warm=$((started + warmup))
next=$(date +%s)
base=
last=
calls=0
failed_calls=0
i=0
while test "$(date +%s)" -lt $end; do
	if test "$(date +%s)" -ge "$next"; then
		last=$(rss_kb)
		if test -z "$base" && test "$(date +%s)" -ge "$warm"; then
			base=$last
			echo "# baseline RSS ${base} kB," \
				"$(($(date +%s) - started)) s after the start"
		fi
		echo "# t=$(($(date +%s) - end + MINUTES * 60))s RSS ${last} kB, $calls calls"
		next=$((next + SAMPLE))
	fi
	if H call "c$((i % nc))" 'inc()' >/dev/null 2>"$T/call.err" &&
		H call "t$((i % nt))" 'count()' >/dev/null 2>"$T/call.err"; then
		calls=$((calls + 2))
	else
		failed_calls=$((failed_calls + 1))
		# keep what the first failure said
		test -s "$T/first-failure" ||
			{ date +%T; cat "$T/call.err"; } >"$T/first-failure"
	fi
	i=$((i + 1))
done
last=$(rss_kb)
echo "# final RSS ${last} kB after $calls calls"
test -s "$T/first-failure" &&
	sed 's/^/# first failure: /' "$T/first-failure"
check "every call succeeded ($failed_calls failed)" test $failed_calls -eq 0
check "a baseline was taken" test -n "$base"
check "RSS growth under $GROWTH% (baseline ${base:-?} kB, final $last kB)" \
	awk -v b="${base:-0}" -v l="$last" -v g="$GROWTH" \
	'BEGIN { exit !(b > 0 && (l - b) * 100 < g * b) }'
H call t0 'count()' >"$T/count" 2>&1
check "the tickers kept ticking (t0 counted $(cat "$T/count"))" \
	test "$(cat "$T/count")" -gt $((MINUTES * 60 * 5))
kill -TERM "$DPID"
wait "$DPID"
check "hosteld stops cleanly" test $? -eq 0
tap_finish "$LOG"
