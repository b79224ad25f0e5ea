#!/bin/sh
# daemon-concurrent.sh - calls of one hosteld service run concurrently
# under the Component Model's rules, each ending exactly once.
#
#   - 10 concurrent sleep(500) calls of tests/guests/async/sleep.wasm (an
#     async export parked on the WASI 0.3 clock) all end in well under
#     10 x 500 ms (< 2.5 s: a correctness bound on concurrency, not a
#     performance target; the time is printed);
#   - a quick call of the same service answers while a long sleep is in
#     flight;
#   - a sync export (the counter of tests/guests/mkcomponent) keeps its
#     state exact under 50 concurrent inc() calls (the instance is
#     exclusive);
#   - limits.maxConcurrentCalls caps the calls in flight; Cancel of a
#     call still queued leaves the store untouched;
#   - limits.maxQueuedCalls bounds the calls waiting: past it a call is
#     refused io.hostel.Call.ServiceBusy and leaves no trace;
#   - Call.Cancel of a running sleep call ends it call.cancelled exactly
#     once (the instance is poisoned, the store recreated);
#   - a trap in one call (limits.maxPendingHostCalls 3: the 4th clock
#     wait) while 3 others are in flight ends each of them exactly once,
#     at once, and records one store.poisoned;
#   - stopping the service ends its calls in flight, each interrupted
#     (durability commit: the stop's image holds them);
#   - over the whole run every started call ends exactly once.
#
# Under Valgrind (scripts/test --valgrind) each client call takes about a
# second, not milliseconds: HOSTEL_SLOW (exported there) multiplies the
# sleeps and the time bounds alike, so each bound still tells concurrent
# from serial by the same ratio.
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when the
# programs are not built.  KEEP=1 keeps the temporary directory.

set -u

B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
NAME=daemon-concurrent
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
SEND=$B/tests/varlink-send
MK=$B/tests/guests/mkcomponent
SLEEP=$S/tests/guests/async/sleep.wasm
need_programs "$HOSTELD" "$HOSTEL" "$SEND" "$MK"
test -r "$SLEEP" || {
	echo "$NAME: $SLEEP is missing" >&2
	exit 99
}

tap_tmpdir

SOCK=$T/h.sock
STATE=$T/state
LOG=$T/hosteld.log
start_daemon() {
	"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$STATE" \
		2>>"$LOG" &
	DPID=$!
	PIDS="$PIDS $DPID"
	wait_for 10 alive
}
now_ms() {
	echo $(($(date +%s%N) / 1000000))
}
SLOW=${HOSTEL_SLOW:-1}
# ms N: N milliseconds, times SLOW
ms() {
	echo $(($1 * SLOW))
}
# create NAME SHA CONFIG: io.hostel.Service.Create with a config object
create() {
	"$SEND" "$SOCK" call "{\"method\":\"io.hostel.Service.Create\",\"parameters\":{\"name\":\"$1\",\"component\":\"$2\",\"config\":$3}}" \
		>"$T/create-$1" 2>&1
}
# invoke_more OUT SERVICE WAVE: Invoke with "more" in the background
# (the started reply, then the final one) into $T/OUT; pid in $ipid
invoke_more() {
	"$SEND" -t "$(ms 20000)" "$SOCK" \
		call "{\"method\":\"io.hostel.Call.Invoke\",\"parameters\":{\"service\":\"$2\",\"wave\":\"$3\"},\"more\":true}" \
		recv >"$T/$1" 2>&1 &
	ipid=$!
}
# call_id FILE: the callId of the started reply in FILE
call_id() {
	sed -n 's/.*"callId": *"\([^"]*\)".*/\1/p' "$1" | head -n 1
}
has_id() {
	test -n "$(call_id "$1")"
}
cancel() {
	"$SEND" "$SOCK" call "{\"method\":\"io.hostel.Call.Cancel\",\"parameters\":{\"callId\":\"$1\"}}"
}
# ends ID: the terminal events of call ID, one kind a line
ends() {
	H logs --json 2>/dev/null | grep "\"call\":\"$1\"" |
		grep -oE '"kind":"call\.(returned|trapped|cancelled|failed|interrupted)"' |
		cut -d'"' -f4
}
# in_flight SERVICE: its calls in flight now
in_flight() {
	"$SEND" "$SOCK" call "{\"method\":\"io.hostel.Service.Inspect\",\"parameters\":{\"name\":\"$1\"}}" |
		sed -n 's/.*"inFlight": *\([0-9]*\).*/\1/p'
}
in_flight_is() {
	test "$(in_flight "$1")" = "$2"
}

start_daemon || {
	echo "$NAME: hosteld did not start" >&2
	cat "$LOG" >&2
	exit 1
}

H deploy "$SLEEP" --name sl >"$T/deploy.out" 2>&1
check "sleep.wasm deploys" has "$T/deploy.out" "deployed sl"
SHA=$(sha256sum "$SLEEP" | cut -d' ' -f1)

# ---- 10 concurrent sleep(500) ---------------------------------------------
t0=$(now_ms)
pids=
for i in 1 2 3 4 5 6 7 8 9 10; do
	H call sl "sleep($(ms 500))" >"$T/s$i.out" 2>"$T/s$i.err" &
	pids="$pids $!"
done
bad=0
for p in $pids; do
	wait "$p" || bad=$((bad + 1))
done
t1=$(now_ms)
echo "# 10 concurrent sleep($(ms 500)) calls took $((t1 - t0)) ms"
check "10 concurrent sleep($(ms 500)) calls all return" eq "$bad" 0
short=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	v=$(cat "$T/s$i.out")
	test "${v:-0}" -ge $(($(ms 500) * 1000000)) 2>/dev/null ||
		short=$((short + 1))
done
check "each one slept its $(ms 500) ms" eq "$short" 0
check "together in under $(ms 2500) ms, not 10 x $(ms 500) ms ($((t1 - t0)) ms)" \
	test $((t1 - t0)) -lt "$(ms 2500)"

# ---- a quick call while a long one sleeps ---------------------------------
H call sl "sleep($(ms 2000))" >"$T/long.out" 2>&1 &
lpid=$!
wait_for 5 in_flight_is sl 1
t0=$(now_ms)
H call sl 'clock-info()' >"$T/quick.out" 2>&1
qrc=$?
t1=$(now_ms)
echo "# clock-info() answered in $((t1 - t0)) ms beside sleep($(ms 2000))"
check "clock-info() answers beside an in-flight sleep($(ms 2000))" eq "$qrc" 0
check "... at once, not behind it ($((t1 - t0)) ms < $(ms 1000))" \
	test $((t1 - t0)) -lt "$(ms 1000)"
check "the sleep is still in flight then" eq "$(in_flight sl)" 1
wait "$lpid"
check "then the sleep($(ms 2000)) returns" \
	test "$(cat "$T/long.out")" -ge $(($(ms 2000) * 1000000))

# ---- a sync export stays exclusive ----------------------------------------
"$MK" counter "$T/counter.wasm" || exit 99
H deploy "$T/counter.wasm" --name counter >/dev/null 2>&1
pids=
for i in $(seq 1 50); do
	H call counter 'inc()' >"$T/inc.$i" 2>&1 &
	pids="$pids $!"
done
bad=0
for p in $pids; do
	wait "$p" || bad=$((bad + 1))
done
check "50 concurrent inc() calls all return" eq "$bad" 0
check "the count is exact: 50" eq "$(H call counter 'get()')" 50
check "each inc() saw its own value (1..50, no two alike)" \
	eq "$(cat "$T"/inc.* | sort -n | uniq | wc -l)/$(cat "$T"/inc.* | sort -n | tail -n 1)" "50/50"

# Call.Cancel of the endless spin() while it runs: cancelled, once.
invoke_more spin.out counter 'spin()'
spid=$ipid
wait_for 5 has_id "$T/spin.out"
wait_for 5 in_flight_is counter 1
sid=$(call_id "$T/spin.out")
cancel "$sid" >/dev/null 2>&1
wait "$spid"
check "Cancel ends the endless spin() while it runs: CallCancelled" \
	has "$T/spin.out" "CallCancelled"
check "... exactly once in the history" eq "$(ends "$sid")" "call.cancelled"

# ---- the cap: maxConcurrentCalls 1 -----------------------------------------
# The second call waits queued (not begun): Cancel ends it with the store
# untouched, and the first goes on.
create one "$SHA" '{"limits":{"maxConcurrentCalls":1}}'
check "a service with maxConcurrentCalls 1 is created" \
	has "$T/create-one" '"state":"running"'
invoke_more one1.out one "sleep($(ms 1000))"
o1pid=$ipid
wait_for 5 in_flight_is one 1
invoke_more one2.out one "sleep($(ms 1000))"
o2pid=$ipid
wait_for 5 has_id "$T/one2.out"
check "under the cap of 1 the second call waits: 1 in flight" \
	eq "$(in_flight one)" 1
qid=$(call_id "$T/one2.out")
cancel "$qid" >/dev/null 2>&1
check "Cancel of the queued call succeeds" eq $? 0
wait "$o2pid"
check "it ends CallCancelled, exactly once" \
	eq "$(grep -c CallCancelled "$T/one2.out")/$(ends "$qid")" "1/call.cancelled"
wait "$o1pid"
check "the first call returns undisturbed" has "$T/one1.out" '"state":"returned"'
check "no store.poisoned" \
	eq "$(H logs --json --kind store.poisoned one | wc -l)" 0

# ---- the queue bound: maxQueuedCalls 1 -------------------------------------
# One call in flight, one queued: a third is refused ServiceBusy before
# call.started, so it leaves no trace, and the two others go on.
create busy "$SHA" '{"limits":{"maxConcurrentCalls":1,"maxQueuedCalls":1}}'
check "a service with maxQueuedCalls 1 is created" \
	has "$T/create-busy" '"state":"running"'
invoke_more busy1.out busy "sleep($(ms 1000))"
b1pid=$ipid
wait_for 5 in_flight_is busy 1
invoke_more busy2.out busy "sleep(10)"
b2pid=$ipid
wait_for 5 has_id "$T/busy2.out"
"$SEND" "$SOCK" call '{"method":"io.hostel.Call.Invoke","parameters":{"service":"busy","wave":"sleep(10)"}}' \
	>"$T/busy3.out" 2>&1
check "past maxQueuedCalls a call is refused: ServiceBusy" \
	has "$T/busy3.out" '"error":"io.hostel.Call.ServiceBusy"'
check "... with how many wait (1) and the limit (1)" \
	eq "$(grep -c '"queued":1,"limit":1' "$T/busy3.out")" 1
wait "$b1pid"
wait "$b2pid"
check "the call in flight and the queued one return" \
	eq "$(grep -c '"state":"returned"' "$T/busy1.out" "$T/busy2.out" | cut -d: -f2 | tr '\n' ' ')" "1 1 "
check "the refused call left no trace: 2 call.started" \
	eq "$(H logs --json --kind call.started busy | wc -l)" 2
H call busy 'sleep(10)' >"$T/busy4.out" 2>&1
check "with the queue empty again the service answers" \
	test "$(cat "$T/busy4.out")" -ge 10000000

# ---- Cancel of a running sleep ---------------------------------------------
invoke_more cancel.out sl "sleep($(ms 5000))"
cpid=$ipid
wait_for 5 has_id "$T/cancel.out"
wait_for 5 in_flight_is sl 1
sleep 0.2 # its guest code waits on the clock by now
cid=$(call_id "$T/cancel.out")
t0=$(now_ms)
cancel "$cid" >"$T/cancel-reply.out" 2>&1
check "Cancel of a running call succeeds" eq $? 0
wait "$cpid"
t1=$(now_ms)
check "the running sleep($(ms 5000)) ends CallCancelled" \
	has "$T/cancel.out" "CallCancelled"
check "... at once ($((t1 - t0)) ms)" test $((t1 - t0)) -lt "$(ms 2000)"
check "... exactly once in the history: call.cancelled" \
	eq "$(ends "$cid")" "call.cancelled"
cancel "$cid" >"$T/cancel-again.out" 2>&1
check "a second Cancel finds no call" has "$T/cancel-again.out" CallNotFound
H call sl 'sleep(10)' >"$T/after.out" 2>&1 ||
	H call sl 'sleep(10)' >"$T/after.out" 2>&1
check "the service answers afterwards" test "$(cat "$T/after.out")" -ge 10000000

# ---- a trap among several calls in flight ---------------------------------
# With maxPendingHostCalls 3, the 4th concurrent clock wait traps, which
# poisons the instance under the others.
create lim "$SHA" '{"limits":{"maxPendingHostCalls":3}}'
check "a service with maxPendingHostCalls 3 is created" \
	has "$T/create-lim" '"state":"running"'
pids=
for i in 1 2 3; do
	H call lim "sleep($(ms 3000))" >"$T/lim$i.out" 2>"$T/lim$i.err" &
	pids="$pids $!"
done
wait_for 5 in_flight_is lim 3
t0=$(now_ms)
H call lim "sleep($(ms 3000))" >"$T/lim4.out" 2>"$T/lim4.err"
for p in $pids; do
	wait "$p"
done
t1=$(now_ms)
echo "# 3 calls in flight when a 4th trapped ended within $((t1 - t0)) ms"
check "the 4th traps: too many pending host calls (limit 3)" \
	has "$T/lim4.err" "CallTrapped: too many pending host calls (limit 3)"
check "the 3 in flight end at once, not after their sleep" \
	test $((t1 - t0)) -lt "$(ms 2000)"
check "... each trapped: the instance was poisoned (by that call)" \
	eq "$(cat "$T"/lim[123].err | grep -c 'CallTrapped: the instance was poisoned (call .* trapped: too many pending host calls')" 3
H logs --json lim >"$T/lim.json"
started=$(grep -c '"kind":"call.started"' "$T/lim.json")
ended=$(grep -cE '"kind":"call\.(returned|trapped|cancelled|failed|interrupted)"' "$T/lim.json")
dups=$(grep -oE '"call":"[^"]*","kind":"call\.(returned|trapped|cancelled|failed|interrupted)"' "$T/lim.json" |
	cut -d'"' -f4 | sort | uniq -d | wc -l)
check "4 started, 4 trapped, each exactly once ($started started, $ended ended)" \
	eq "$started/$ended/$dups/$(grep -c '"kind":"call.trapped"' "$T/lim.json")" "4/4/0/4"
check "one store.poisoned, blaming the trap" \
	eq "$(grep -c '"kind":"store.poisoned".*too many pending host calls' "$T/lim.json")/$(grep -c '"kind":"store.poisoned"' "$T/lim.json")" "1/1"
H call lim 'sleep(10)' >"$T/lim-after.out" 2>&1 ||
	H call lim 'sleep(10)' >"$T/lim-after.out" 2>&1
check "the store is recreated and answers" \
	test "$(cat "$T/lim-after.out")" -ge 10000000

# ---- stop with calls in flight ---------------------------------------------
pids=
for i in 1 2 3 4 5; do
	H call sl "sleep($(ms 3000))" >"$T/st$i.out" 2>"$T/st$i.err" &
	pids="$pids $!"
done
wait_for 5 in_flight_is sl 5
t0=$(now_ms)
H stop sl >/dev/null 2>&1
for p in $pids; do
	wait "$p"
done
t1=$(now_ms)
check "stop ends the 5 calls in flight at once ($((t1 - t0)) ms)" \
	test $((t1 - t0)) -lt "$(ms 2000)"
check "... each CallInterrupted (durability commit: the stop's image holds them)" \
	eq "$(cat "$T"/st[1-5].err | grep -c CallInterrupted)" 5
H start sl >/dev/null 2>&1
check "started again, it answers" test "$(H call sl 'sleep(1)')" -ge 1000000

# ---- every started call ended once -----------------------------------------
check "hosteld is alive" alive
H logs --json >"$T/all.json"
started=$(grep -c '"kind":"call.started"' "$T/all.json")
ended=$(grep -cE '"kind":"call\.(returned|trapped|cancelled|failed|interrupted)"' "$T/all.json")
dups=$(grep -oE '"call":"[^"]*","kind":"call\.(returned|trapped|cancelled|failed|interrupted)"' "$T/all.json" |
	cut -d'"' -f4 | sort | uniq -d | wc -l)
check "every started call ended once ($started started, $ended ended)" \
	eq "$started/$dups" "$ended/0"
kill -TERM "$DPID"
wait "$DPID"
check "hosteld stops cleanly" eq $? 0

tap_finish "$LOG"
