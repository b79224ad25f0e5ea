#!/bin/sh
# daemon-fairness.sh - bounded service turns with a real hosteld and the
# real client (ARCHITECTURE invariant 3): a guest spinning in an endless
# loop with no fuel limit holds up only its own call, never another
# service's calls; a deadline stops a call that is running (not only a
# queued one): CallDeadline, call.trapped "deadline exceeded", the poisoned store is
# recreated at once and the service keeps answering; stopping a service
# ends its running call as cancelled; every started call ends once.
# Latency figures are bench/call-latency's job, not this test's: here
# only "answered at all, while the spinner spins" is checked.
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when the
# programs are not built.  KEEP=1 keeps the temporary directory.

set -u

B=${HOSTEL_BUILDDIR:-.}
NAME=daemon-fairness
. "${HOSTEL_SRCDIR:-$(dirname "$0")/..}/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
MK=$B/tests/guests/mkcomponent
need_programs "$HOSTELD" "$HOSTEL" "$MK"

tap_tmpdir

SOCK=$T/h.sock
STATE=$T/state
LOG=$T/hosteld.log
# callout NAME ARGS...: `hostel call` into $T/NAME.out/.err, rc in $rc
callout() {
	o=$1
	shift
	H call "$@" >"$T/$o.out" 2>"$T/$o.err"
	rc=$?
}
# running SERVICE: its call is in flight (queued 0, the spin begun).
spinning() {
	H logs "$1" 2>/dev/null | grep -q 'call.started'
}

"$MK" counter "$T/counter.wasm" || exit 99
"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$STATE" 2>>"$LOG" &
DPID=$!
PIDS="$PIDS $DPID"
wait_for 10 alive || {
	echo "$NAME: hosteld did not start" >&2
	cat "$LOG" >&2
	exit 1
}

# Three services of one component: a worker, a spinner with neither a
# fuel limit nor a deadline, and one with a deadline.  The spinner keeps
# no store across its stop (durability none): under commit its image
# holds the spin, which would go on after the start (docs/architecture.md,
# tests/daemon-durable.sh), and this test is of fairness, not durability.
H deploy "$T/counter.wasm" --name worker >/dev/null 2>&1
H deploy "$T/counter.wasm" --name forever --durability none >/dev/null 2>&1
H deploy "$T/counter.wasm" --name bounded --deadline 700 >/dev/null 2>&1
check "three services deployed" \
	eq "$(H ps | grep -cE '^(worker|forever|bounded) +running')" 3

# ---- a spinner does not hold up another service --------------------------
H call --timeout 120000 forever 'spin()' >"$T/spin.out" 2>"$T/spin.err" &
SPIN=$!
wait_for 10 spinning forever
check "the endless call has started" spinning forever
sleep 0.3
i=0
good=0
while [ $i -lt 20 ]; do
	callout w$i --timeout 5000 worker 'inc()'
	test "$rc" -eq 0 && good=$((good + 1))
	i=$((i + 1))
done
check "20 calls of another service answered while one spins" \
	eq "$good/$(cat "$T/w19.out")" "20/20"
check "the spinning call is still running" kill -0 "$SPIN"
check "the daemon answers status while one spins" alive

# ---- a deadline stops a running call; the service keeps working ----------
callout b0 bounded 'inc()'
check "the bounded service answers" eq "$(cat "$T/b0.out")/$rc" "1/0"
callout b1 --timeout 20000 bounded 'spin()'
check "a running call past its deadline: CallDeadline, exit 1" \
	eq "$rc/$(grep -c CallDeadline "$T/b1.err")" "1/1"
check "the trap says: deadline exceeded" has "$T/b1.err" "deadline exceeded"
callout b2 bounded 'inc()'
check "the store was recreated at once: fresh state, no error" \
	eq "$(cat "$T/b2.out")/$rc" "1/0"
H logs bounded >"$T/bounded.log"
check "history: call.trapped for the deadline" \
	grep -q 'call.trapped.*deadline exceeded' "$T/bounded.log"
check "history: store.poisoned then store.recreated" \
	eq "$(grep -oE 'store\.(poisoned|recreated)' "$T/bounded.log" | tr '\n' ' ')" \
	"store.poisoned store.recreated "
callout w20 --timeout 5000 worker 'inc()'
check "the worker still counts on (21)" eq "$(cat "$T/w20.out")/$rc" "21/0"

# ---- stopping a service ends its running call -----------------------------
H stop forever >/dev/null 2>&1
wait "$SPIN"
src=$?
check "stop ends the endless call: CallCancelled" \
	eq "$src/$(grep -c CallCancelled "$T/spin.err")" "1/1"
H start forever >/dev/null 2>&1
callout f1 forever 'inc()'
check "started again, it answers" eq "$(cat "$T/f1.out")/$rc" "1/0"

# ---- history: exactly one terminal event per started call -----------------
H logs --json >"$T/all.json"
started=$(grep -c '"kind":"call.started"' "$T/all.json")
ended=$(grep -cE '"kind":"call\.(returned|trapped|cancelled|failed|interrupted)"' "$T/all.json")
dups=$(grep -oE '"call":"[^"]*","kind":"call\.(returned|trapped|cancelled|failed|interrupted)"' "$T/all.json" |
	cut -d'"' -f4 | sort | uniq -d | wc -l)
check "every started call ended once ($started started, $ended ended)" \
	eq "$started/$dups" "$ended/0"

check "hosteld is still alive" alive
kill -TERM "$DPID"
wait "$DPID"
check "hosteld stops cleanly" test $? -eq 0

tap_finish "$LOG"
