#!/bin/sh
# wasi-p3-run.sh - `hostel run` drives Component Model async exports that
# wait on the WASI 0.3 monotonic clock (tests/guests/async/sleep.wasm,
# tests/guests/ticker/ticker.wasm, the C guest tests/guests/wasi/p3sleep;
# binaries committed): the call returns after the wait (the client
# sleeps to the next deadline; no thread blocks in a host call), without
# --invoke the async wasi:cli/run@0.3.0 export runs, and the ticker's
# start returns at once.

set -u
NAME=wasi-p3-run
B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
. "$S/tests/tap.sh"
HOSTEL=$B/client/hostel
SLEEP=$S/tests/guests/async/sleep.wasm
TICKER=$S/tests/guests/ticker/ticker.wasm
need_programs "$HOSTEL"
tap_tmpdir

now_ms() {
	date +%s%3N
}
# The upper bounds say a call returns once its wait is over (it does not
# hang on); under Valgrind (scripts/test --valgrind exports HOSTEL_SLOW)
# the client itself takes seconds to start and decode the component.
SLOW=${HOSTEL_SLOW:-1}

# sleep(150): prints the nanoseconds the guest saw pass, after >= 150 ms
t0=$(now_ms)
"$HOSTEL" run --invoke 'sleep(150)' "$SLEEP" >"$T/out" 2>"$T/err"
rc=$?
t1=$(now_ms)
check "sleep(150) returns" test "$rc" -eq 0
ns=$(cat "$T/out")
check "the guest saw >= 150 ms pass ($ns ns)" \
	test "${ns:-0}" -ge 150000000
check "the call took >= 150 ms ($((t1 - t0)) ms)" test $((t1 - t0)) -ge 150
check "and < $((2 * SLOW)) s" test $((t1 - t0)) -lt $((2000 * SLOW))

# a wait whose deadline has passed returns at once
"$HOSTEL" run --invoke 'sleep(0)' "$SLEEP" >"$T/out" 2>"$T/err"
check "sleep(0) returns" test $? -eq 0
check "sleep(0) took < 100 ms by the guest's clock" \
	test "$(cat "$T/out")" -lt 100000000

# no --invoke: wasi:cli/run@0.3.0 (async), waits 10 ms, returns ok
"$HOSTEL" run "$SLEEP" >"$T/out" 2>"$T/err"
check "async wasi:cli/run@0.3.0 exits 0" test $? -eq 0

# p3sleep: a C guest (hand-written async lift with a callback, async
# lower of wait-for; tests/guests/wasi/p3sleep.c)
C3=$S/tests/guests/wasi/p3sleep.component.wasm
API=hostel:p3sleep/api@0.1.0
t0=$(now_ms)
"$HOSTEL" run --invoke "$API#sleep-ms(50)" "$C3" >"$T/out" 2>"$T/err"
rc=$?
t1=$(now_ms)
check "C async sleep-ms(50) returns" test "$rc" -eq 0
ns=$(cat "$T/out")
case $ns in '' | *[!0-9]*) ns=0 ;; esac
check "the C guest saw >= 50 ms pass ($ns ns)" test "$ns" -ge 50000000
check "the C call took >= 50 ms and < $((2 * SLOW)) s ($((t1 - t0)) ms)" \
	test $((t1 - t0)) -ge 50 -a $((t1 - t0)) -lt $((2000 * SLOW))
"$HOSTEL" run --invoke "$API#sleep-ms(0)" "$C3" >"$T/out" 2>"$T/err"
check "C async sleep-ms(0) returns at once" \
	test "$(cat "$T/out")" -lt 100000000
"$HOSTEL" run --invoke "$API#waited(20)" "$C3" >"$T/out" 2>"$T/err"
check "C async waited(20) is true" test "$(cat "$T/out")" = true
"$HOSTEL" run --invoke "$API#add(2, 40)" "$C3" >"$T/out" 2>"$T/err"
check "its sync add(2, 40) is 42" test "$(cat "$T/out")" = 42

# the ticker: start returns at once (its task goes on in the background)
"$HOSTEL" run --invoke 'start()' "$TICKER" >"$T/out" 2>"$T/err"
check "ticker start() returns" test $? -eq 0
"$HOSTEL" run --invoke 'count()' "$TICKER" >"$T/out" 2>"$T/err"
check "ticker count() of a fresh store is 0" test "$(cat "$T/out")" = 0

tap_finish
