#!/bin/sh
# mem64.sh - the 64-bit pointer Canonical ABI (issue 21 point 6): a
# component whose canonical options name a 64-bit memory
# (tests/guests/mem64: pointers and lengths are i64, realloc takes and
# gives i64) lifts strings, lists, a tuple's aligned fields and a list
# its own code made; a canon lower into that memory of an inner
# component's function (a 32-bit memory) copies values across the two
# pointer sizes, also with the return area and realloc above 4 GiB (the
# memory grown to 65,537 pages); a string past the memory's end and a
# list whose byte length wraps in 64 bits trap with the suite's words,
# never reading out of bounds.  The async built-ins take 64-bit
# pointers there too (tests/guests/mem64/async64: stream copies, a
# waitable set's event record above 2^32 and at 2^64 - 4, an i64 thread
# start argument).  Under `hostel run` and as a service.
# jco cannot be the peer here ("64-bit memories require the `cm64`
# feature"): the expected values are the canonical ABI's
# (definitions.py: ptr_type, load_string, load_list with 64-bit
# pointers).
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when the
# programs are not built.

set -u
B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
NAME=mem64
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
need_programs "$HOSTELD" "$HOSTEL"
G=$S/tests/guests/mem64/mem64.wasm
A=$S/tests/guests/mem64/async64.wasm
tap_tmpdir
SOCK=$T/h.sock

# CALL|RESULT lines: each under both hosts
cat >"$T/cases" <<'CASES'
echo("hello")|"hello"
echo("")|""
sum([1, 2, 3, 4000000000])|4000000006
make(5)|[0, 1, 2, 3, 4]
pair(18446744073709551615, "x")|(18446744073709551615, "x")
round("through 32 bits")|"through 32 bits"
high("at the end")|"at the end"
far("above 4 GiB")|"above 4 GiB"
CASES

# run_cases FILE GUEST LABEL: each line of FILE is call|result
run_cases() {
	while IFS='|' read -r c want; do
		check "hostel run: $3$c is $want" \
			test "$("$HOSTEL" run --invoke "$c" "$2" 2>&1)" = "$want"
	done <"$1"
}
run_cases "$T/cases" "$G" ""
out=$("$HOSTEL" run --invoke 'oob()' "$G" 2>&1)
check "hostel run: a string at 2^40 traps out of bounds ($out)" \
	test "$out" = "hostel: trap: string pointer/length out of bounds of memory"
out=$("$HOSTEL" run --invoke 'wrap()' "$G" 2>&1)
check "hostel run: a list whose byte length wraps traps ($out)" \
	test "$out" = "hostel: trap: list content out-of-bounds"

# the async built-ins over a 64-bit memory (tests/guests/mem64/async64):
# buffers and an event record above 2^32, an i64 thread start argument
cat >"$T/async" <<'CASES'
stream-event()|"ping"
thread-arg()|4886718345
CASES
run_cases "$T/async" "$A" "async64 "
# an event record at 2^64 - 4 is out of bounds (the check must not wrap
# round to a small address and write there)
out=$("$HOSTEL" run --invoke 'poll-high()' "$A" 2>&1)
check "hostel run: a poll's record at 2^64 - 4 traps ($out)" \
	test "$out" = "hostel: trap: out of bounds"

"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$T/state" 2>>"$T/log" &
PIDS="$PIDS $!"
check "hosteld starts" wait_for $((10 * ${HOSTEL_SLOW:-1})) alive
H deploy "$G" --name m64 >/dev/null 2>&1
check "deploy" test $? -eq 0
while IFS='|' read -r c want; do
	check "service: $c is $want" test "$(H call m64 "$c" 2>&1)" = "$want"
done <"$T/cases"
check "service: the string at 2^40 traps" \
	sh -c "'$HOSTEL' --socket '$SOCK' call m64 'oob()' 2>&1 | grep -q 'string pointer/length out of bounds of memory'"
# the call after a trap is told of it (ServicePoisoned) and does not run
out=$(H call m64 'wrap()' 2>&1)
case $out in *ServicePoisoned*) out=$(H call m64 'wrap()' 2>&1) ;; esac
check "service: so does the wrapping list ($out)" \
	test "$out" = "hostel call: CallTrapped: list content out-of-bounds"
H deploy "$A" --name a64 --durability none >/dev/null 2>&1
check "deploy async64" test $? -eq 0
while IFS='|' read -r c want; do
	check "service: async64 $c is $want" \
		test "$(H call a64 "$c" 2>&1)" = "$want"
done <"$T/async"
out=$(H call a64 'poll-high()' 2>&1)
check "service: the poll's record at 2^64 - 4 traps ($out)" \
	test "$out" = "hostel call: CallTrapped: out of bounds"
kill -TERM $PIDS 2>/dev/null
wait
tap_finish "$T/log"
