#!/bin/sh
# daemon-faults.sh - hosteld under faults, with the real client:
#  - a full disk (ENOSPC) and a failing disk (EIO) under the history
#    database, injected by tests/faultfs.so (LD_PRELOAD): the call's reply
#    waits for its durable commit, the daemon keeps serving other clients,
#    says what is wrong (log), and once the disk recovers the reply
#    arrives and the history holds the call; past the retry limit
#    (HISTORY_RETRY_LIMIT_MS, 30 s) the waiting caller gets an error
#    instead of a reply whose events were never written;
#  - a client that disconnects in the middle of a call: the call still
#    ends with one terminal event and the daemon serves on;
#  - 1,000 idle connections: other clients are served meanwhile and each
#    idle connection is answered afterwards.
# Set FAULTS_QUICK=1 to skip the 30-second give-up case.
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when the
# programs are not built.

set -u

B=${HOSTEL_BUILDDIR:-.}
NAME=daemon-faults
. "${HOSTEL_SRCDIR:-$(dirname "$0")/..}/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
MK=$B/tests/guests/mkcomponent
IDLE=$B/tests/idle-conns
FAULTFS=$(cd "$B/tests" && pwd)/faultfs.so
need_programs "$HOSTELD" "$HOSTEL" "$MK" "$IDLE"
test -r "$FAULTFS" || {
	echo "$NAME: $FAULTFS is not built" >&2
	exit 99
}

tap_tmpdir
SOCK=$T/h.sock
STATE=$T/state
LOG=$T/hosteld.log
FAULT=$T/fault
# A sanitized hosteld checks that its runtime is the first library;
# faultfs.so is preloaded before it on purpose.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
# Enough descriptors for 1,000 connections on both sides.
ulimit -n 4096 2>/dev/null || ulimit -n "$(ulimit -H -n)"

"$MK" counter "$T/counter.wasm" || exit 99
LD_PRELOAD=$FAULTFS HOSTEL_FAULT_FILE=$FAULT \
	"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$STATE" \
	2>>"$LOG" &
DPID=$!
PIDS="$PIDS $DPID"
wait_for 10 H status >/dev/null || {
	echo "$NAME: hosteld did not start" >&2
	cat "$LOG" >&2
	exit 1
}
H deploy "$T/counter.wasm" --name c --fuel 20000000 >/dev/null 2>&1
check "deploy" test $? -eq 0
H call c 'inc()' >"$T/first.out" 2>&1
check "a call before any fault" test "$(cat "$T/first.out")" = 1

# ---- disk full, then disk errors: replies wait, then arrive -------------------
want=1
for kind in ENOSPC EIO; do
	want=$((want + 1))
	echo $kind >"$FAULT"
	H call c 'inc()' >"$T/$kind.out" 2>"$T/$kind.err" &
	CPID=$!
	sleep 1
	check "$kind: the reply waits for its commit" kill -0 $CPID
	check "$kind: the daemon says why" wait_for 5 grep -q \
		"history: cannot commit" "$LOG"
	H status >"$T/$kind.status" 2>&1
	check "$kind: another client is served meanwhile" test $? -eq 0
	rm -f "$FAULT"
	wait $CPID
	check "$kind: once the disk recovers the reply arrives" \
		test "$(cat "$T/$kind.out")" = $want
	check "$kind: the daemon says so" wait_for 5 grep -q \
		"history: commits work again" "$LOG"
	cp "$LOG" "$LOG.$kind"
	: >"$LOG"
done
H logs c --json >"$T/logs.json" 2>&1
check "the history holds every answered call" \
	test "$(grep -c '"call.returned"' "$T/logs.json")" -eq 3

# ---- a slow disk: replies wait for their flush, the event loop does not -------
# Each flush of the history takes 5 s more.  The call's reply waits for
# its flush; a status request made meanwhile is answered while that
# flush still runs (commits run on the writer thread, never on the loop).
echo "SLOW 5000" >"$FAULT"
H call c 'inc()' >"$T/slow.out" 2>&1 &
CPID=$!
sleep 0.5
H status >"$T/slow.status" 2>&1
rc=$?
check "slow disk: another client is served (exit $rc)" test $rc -eq 0
check "slow disk: ... while the call's flush still runs" kill -0 $CPID
rm -f "$FAULT"
wait $CPID
want=$((want + 1))
check "slow disk: the reply arrives after its flush" \
	test "$(cat "$T/slow.out")" = $want

# ---- past the retry limit: an error, not a reply ------------------------------
if test -z "${FAULTS_QUICK:-}"; then
	echo ENOSPC >"$FAULT"
	H call c 'inc()' >"$T/giveup.out" 2>"$T/giveup.err"
	rc=$?
	check "past the retry limit the caller gets an error (exit $rc)" \
		test $rc -ne 0
	check "saying the history is unavailable" \
		grep -q "Unavailable" "$T/giveup.err"
	check "the daemon logs that it gave up" \
		grep -q "history: giving up" "$LOG"
	rm -f "$FAULT"
	H call c 'get()' >"$T/after.out" 2>&1
	check "the next call works" test $? -eq 0
else
	echo "# FAULTS_QUICK: give-up case skipped"
fi

# ---- a client that goes away mid-call -----------------------------------------
H call c 'spin()' >/dev/null 2>&1 &
CPID=$!
sleep 0.2
kill -KILL $CPID 2>/dev/null
wait $CPID 2>/dev/null
check "the vanished client's call still ends once in the history" \
	wait_for 10 sh -c "'$HOSTEL' --socket '$SOCK' logs c --json |
		grep -c '\"call.trapped\"' | grep -qx 1"
H status >/dev/null 2>&1
check "after a client vanished mid-call the daemon serves on" test $? -eq 0
# The out-of-fuel trap poisoned the instance: one call says so, the
# next one finds a fresh store.
H call c 'get()' >/dev/null 2>&1
H call c 'get()' >"$T/gone.out" 2>&1
check "and the service recovers from the trap" \
	test "$(cat "$T/gone.out")" = 0

# ---- 1,000 idle connections ---------------------------------------------------
mkfifo "$T/idle.in"
"$IDLE" "$SOCK" 1000 <"$T/idle.in" >"$T/idle.out" 2>"$T/idle.err" &
IPID=$!
exec 7>"$T/idle.in"
wait_for 30 grep -q '^open ' "$T/idle.out"
check "1,000 idle connections are open" grep -qx 'open 1000' "$T/idle.out"
before=$(date +%s%N)
H call c 'inc()' >"$T/busy.out" 2>&1
rc=$?
after=$(date +%s%N)
check "a call is served while they idle" test $rc -eq 0
echo "# that call took $(((after - before) / 1000000)) ms"
H status --json >"$T/busy.status" 2>&1
check "status counts them" grep -q '"connections": *100[1-9]' \
	"$T/busy.status"
exec 7>&-
wait $IPID
check "each idle connection is answered afterwards" \
	grep -qx 'served 1000 of 1000' "$T/idle.out"

kill -TERM "$DPID"
wait "$DPID"
check "hosteld stops cleanly" test $? -eq 0
tap_finish "$LOG"
