#!/bin/sh
# daemon-hostile.sh - hostile guests against a real hosteld and the real
# client (issue 9 point 4): one component (tests/guests/hostile) deployed
# as several services, each doing one thing a guest should not.
#   - an endless loop under a fuel limit traps cleanly, and another
#     service keeps answering while it spins;
#   - unbounded memory growth stops at the service's memory limit
#     (memory.grow answers -1), and the daemon's RSS follows no further;
#   - endless recursion traps "call stack exhausted", no crash;
#   - endless streams, waitable sets and pending host calls hit the
#     per-store limits (config limits maxHandles, maxPendingHostCalls, and
#     the finite defaults) and trap with the limit in the message;
#   - a trap storm: the poisoned store is recreated with a growing
#     back-off (store.recreated {backoffMs, traps} in the history), calls
#     meanwhile fail fast with ServicePoisoned saying when, other
#     services are unaffected;
#   - every started call ends exactly once; the daemon stops cleanly.
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when the
# programs are not built.  KEEP=1 keeps the temporary directory.

set -u

B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
NAME=daemon-hostile
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
SEND=$B/tests/varlink-send
WASM=$S/tests/guests/hostile/hostile.wasm
need_programs "$HOSTELD" "$HOSTEL" "$SEND"

tap_tmpdir

SOCK=$T/h.sock
STATE=$T/state
LOG=$T/hosteld.log
H() {
	"$HOSTEL" --socket "$SOCK" "$@"
}
alive() {
	H status >/dev/null 2>&1
}
eq() {
	test "$1" = "$2" || {
		echo "# expected '$2', got '$1'" >&2
		return 1
	}
}
# le A B: A <= B (integers)
le() {
	test "$1" -le "$2" || {
		echo "# expected $1 <= $2" >&2
		return 1
	}
}
# callout NAME ARGS...: `hostel call` into $T/NAME.out/.err, rc in $rc
callout() {
	o=$1
	shift
	H call "$@" >"$T/$o.out" 2>"$T/$o.err"
	rc=$?
}
# create NAME CONFIG: io.hostel.Service.Create with a config object
# (deploy has options for memory, fuel and deadline only)
create() {
	"$SEND" "$SOCK" call "{\"method\":\"io.hostel.Service.Create\",\"parameters\":{\"name\":\"$1\",\"component\":\"$SHA\",\"config\":$2}}" \
		>"$T/create-$1" 2>&1
}
rss_kb() {
	sed -n 's/^VmRSS:[^0-9]*\([0-9]*\).*/\1/p' "/proc/$DPID/status"
}
spinning() {
	H logs spinner 2>/dev/null | grep -q 'call.started'
}
# backoffs SERVICE: the backoffMs of its store.recreated events
backoffs() {
	H logs --json --kind store.recreated "$1" |
		sed -n 's/.*"backoffMs":\([0-9]*\).*/\1/p' | tr '\n' ' '
}

# ASan keeps freed memory in quarantine (256 MiB by default) before it
# reuses it; the reuse check below needs the allocator to reuse it.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8"
export ASAN_OPTIONS
"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$STATE" 2>>"$LOG" &
DPID=$!
PIDS="$PIDS $DPID"
wait_for 10 alive || {
	echo "$NAME: hosteld did not start" >&2
	cat "$LOG" >&2
	exit 1
}

H deploy "$WASM" --name calm >"$T/deploy.out" 2>&1
SHA=$(sha256sum "$WASM" | cut -d' ' -f1)
callout c0 calm 'ping()'
check "the calm service answers" eq "$(cat "$T/c0.out")/$rc" "1/0"
RSS0=$(rss_kb)
# RSS bounds are for plain builds; ASan (configure --enable-sanitizers)
# and Valgrind (scripts/test --valgrind) cost several times the memory
# for the same allocations
X=1
grep -q __asan_init "$HOSTELD" 2>/dev/null && X=4
test -n "${HOSTEL_VG_LOGDIR:-}" && X=4

# ---- an endless loop under a fuel limit ----------------------------------
H deploy "$WASM" --name spinner --fuel 100000000 >/dev/null 2>&1
H call --timeout 120000 spinner 'spin()' >"$T/spin.out" 2>"$T/spin.err" &
SPIN=$!
wait_for 10 spinning
good=0
i=1
while [ $i -le 10 ]; do
	callout c$i --timeout 5000 calm 'ping()'
	test "$rc" -eq 0 && good=$((good + 1))
	i=$((i + 1))
done
check "10 calls of another service answered while one spins" \
	eq "$good/$(cat "$T/c10.out")" "10/11"
wait "$SPIN"
src=$?
check "the spinner runs out of fuel: CallTrapped, exit 1" \
	eq "$src/$(grep -c CallTrapped "$T/spin.err")" "1/1"
check "the trap says: all fuel consumed" has "$T/spin.err" \
	"all fuel consumed"

# ---- unbounded memory growth ---------------------------------------------
H deploy "$WASM" --name hog --memory 8388608 >/dev/null 2>&1
callout g1 hog 'grow()'
# 1 page, then 16 at a time: 113 pages; 129 > 128 (8 MiB)
check "memory.grow fails at the limit (-1), no trap: 113 pages" \
	eq "$(cat "$T/g1.out")/$rc" "113/0"
callout g2 hog 'grow()'
check "the store lives on with its memory" eq "$(cat "$T/g2.out")/$rc" "113/0"
RSS1=$(rss_kb)
# grow() writes to every page it gets: the RSS may follow up to the
# 8 MiB limit, no further
check "the daemon's RSS follows only up to the limit ($RSS0 kB -> $RSS1 kB)" \
	le "$RSS1" $((RSS0 + X * (8192 + 8192)))

# ---- endless recursion ----------------------------------------------------
callout r1 calm 'recurse(0)'
check "endless recursion: CallTrapped \"call stack exhausted\"" \
	eq "$rc/$(grep -c 'CallTrapped: wasm trap: call stack exhausted' "$T/r1.err")" "1/1"
check "hosteld survives it" alive
callout r2 calm 'ping()'
check "the next call says the store was poisoned" \
	eq "$rc/$(grep -c ServicePoisoned "$T/r2.err")" "1/1"
callout r3 calm 'ping()'
check "then it answers from a fresh store" eq "$(cat "$T/r3.out")/$rc" "1/0"

# ---- guests that make things without end ----------------------------------
create streams '{"limits":{"maxHandles":1000}}'
check "a service with limits.maxHandles is created" \
	has "$T/create-streams" '"state":"running"'
callout s1 streams 'streams()'
check "endless streams: CallTrapped \"handle table full (limit 1000)\"" \
	eq "$rc/$(grep -c 'CallTrapped: handle table full (limit 1000)' "$T/s1.err")" "1/1"
create sets '{"limits":{"maxHandles":500}}'
callout w1 sets 'sets()'
check "endless waitable sets: \"handle table full (limit 500)\"" \
	has "$T/w1.err" "handle table full (limit 500)"
create waits '{"limits":{"maxPendingHostCalls":100}}'
callout p1 waits 'subtasks()'
check "endless host calls: \"too many pending host calls (limit 100)\"" \
	has "$T/p1.err" "too many pending host calls (limit 100)"
create threads '{"limits":{"maxThreads":50}}'
callout h1 threads 'threads()'
check "endless threads: \"handle table full (limit 50)\"" \
	has "$T/h1.err" "handle table full (limit 50)"
create bad '{"limits":{"maxHandles":0}}'
check "limits.maxHandles 0 is refused" has "$T/create-bad" "maxHandles"
callout d1 calm 'streams()'
check "with the defaults: \"handle table full (limit 100000)\"" \
	has "$T/d1.err" "handle table full (limit 100000)"
sleep 0.3 # past any back-off of calm's own trap row
callout d2 calm 'ping()'
callout d3 calm 'subtasks()'
check "with the defaults: \"too many pending host calls (limit 10000)\"" \
	has "$T/d3.err" "too many pending host calls (limit 10000)"
sleep 0.5
callout d4 calm 'ping()'
callout d5 calm 'threads()'
check "with the defaults: threads \"handle table full (limit 1000)\"" \
	has "$T/d5.err" "handle table full (limit 1000)"
RSS2=$(rss_kb)
check "the daemon's RSS stays bounded ($RSS0 kB -> $RSS2 kB)" \
	le "$RSS2" $((RSS0 + X * 131072))
H deploy "$WASM" --name again >/dev/null 2>&1
callout a1 again 'streams()'
callout a2 again 'ping()'
callout a3 again 'streams()'
RSS3=$(rss_kb)
check "another 2 x 100,000 handles reuse that memory ($RSS2 kB -> $RSS3 kB)" \
	le "$RSS3" $((RSS2 + X * 16384))
check "hosteld survives them all" alive

# ---- a trap storm ---------------------------------------------------------
# Each poisoning in a row waits longer before its store comes back: at
# once, then 100, 200, 400, 800 ms, ...  The waits are read from the
# history, so no check depends on how fast this machine runs a client.
H deploy "$WASM" --name stormy >/dev/null 2>&1
H deploy "$WASM" --name bystander >/dev/null 2>&1
recreated() {
	test "$(H logs --json --kind store.recreated stormy | wc -l)" -ge "$1"
}
callout t1 stormy 'boom()'
check "first trap: CallTrapped" eq "$rc/$(grep -c CallTrapped "$T/t1.err")" \
	"1/1"
callout t2 stormy 'ping()'
check "the next call: ServicePoisoned, the store recreated at once" \
	eq "$rc/$(grep -c ServicePoisoned "$T/t2.err")/$(grep -c 'recreated in' "$T/t2.err")" \
	"1/1/0"
callout t3 stormy 'ping()'
check "a fresh store answers" eq "$(cat "$T/t3.out")/$rc" "1/0"
k=2
while [ $k -le 4 ]; do
	callout t$k-boom stormy 'boom()'
	wait_for 10 recreated $k
	k=$((k + 1))
done
check "traps 2 to 4 in a row: each store recreated by the timer" recreated 4
callout t5 stormy 'boom()'
callout t6 stormy 'ping()'
check "trap 5 in a row: ServicePoisoned says recreated in 800 ms, and when" \
	has "$T/t6.err" "trap 5 in a row: recreated in 800 ms (at "
callout t7 stormy 'ping()'
check "calls during the back-off fail fast with ServicePoisoned" \
	eq "$rc/$(grep -c 'ServicePoisoned.*recreated in 800 ms' "$T/t7.err")" \
	"1/1"
callout o1 bystander 'ping()'
check "another service is unaffected" eq "$(cat "$T/o1.out")/$rc" "1/0"
check "no recreation during the back-off" eq "$(backoffs stormy)" \
	"0 100 200 400 "
wait_for 10 recreated 5
callout t8 stormy 'ping()'
check "after the back-off a timer recreated the store" \
	eq "$(cat "$T/t8.out")/$rc" "1/0"
check "history: store.recreated carries the back-off (0 100 200 400 800)" \
	eq "$(backoffs stormy)" "0 100 200 400 800 "
H logs --json --kind store.recreated stormy | tail -1 >"$T/last.json"
check "history: ... and the trap row ({\"traps\":5})" \
	has "$T/last.json" '"traps":5'
H logs stormy >"$T/stormy.log"
check "history: five store.poisoned" \
	eq "$(grep -c 'store.poisoned' "$T/stormy.log")" 5
callout t9 stormy 'boom()'
H start stormy >/dev/null 2>&1
callout t10 stormy 'ping()'
check "an explicit start is not held back by the back-off (1600 ms)" \
	eq "$(cat "$T/t10.out")/$rc/$(backoffs stormy)" \
	"1/0/0 100 200 400 800 1600 "
callout o2 bystander 'ping()'
check "another service still answers" eq "$(cat "$T/o2.out")/$rc" "2/0"

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
