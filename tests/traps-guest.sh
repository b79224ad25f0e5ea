#!/bin/sh
# traps-guest.sh - the Component Model traps a guest can cause that no
# official suite text and no other test of ours triggered (issue 21
# point 5: each message of docs/traps.md in a test that triggers it):
# each export of tests/guests/traps/traps.wasm and boundary.wasm (an
# exception leaving core code the canonical ABI runs, which no other
# component's catch may see; an own lifted from a borrow) under `hostel
# run --invoke` (exit 1, the message on stderr) and as a service
# (CallTrapped with the message).

set -u
NAME=traps-guest
B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
need_programs "$HOSTELD" "$HOSTEL"
GUESTS=$S/tests/guests/traps
tap_tmpdir
SOCK=$T/h.sock
# has_ps SERVICE TEXT: hostel ps's line of SERVICE holds TEXT
has_ps() {
	H ps 2>/dev/null | awk -v n="$1" '$1 == n' | grep -q -F "$2"
}

# guest (tests/guests/traps/GUEST.wasm)<TAB>call<TAB>the message
# docs/traps.md lists for it
cat >"$T/traps.tsv" <<'TABLE'
traps	bad-utf8()	invalid utf-8 sequence from index 1
traps	short-utf8()	incomplete utf-8 byte sequence from index 1
traps	bad-utf16()	invalid utf-16: unpaired surrogate
traps	return-twice()	task already returned a result
traps	return-in-sync()	invalid task.return: the current task is not async-lifted
traps	cancel-in-sync()	task.cancel in a task that is not async-lifted
traps	bad-callback-code()	unsupported callback code: 7
traps	no-result()	async-lifted export failed to produce a result
traps	join-set()	handle index 1 is not a waitable
traps	backpressure-overflow()	backpressure counter overflow
traps	read-other-type()	type mismatch for stream end
traps	count-too-large()	stream read/write count too large
traps	cancel-idle()	cancel without an outstanding async copy
traps	read-oob()	buffer out of bounds
traps	resume-running()	cannot resume thread which is not suspended
traps	lift-busy()	cannot lift a busy stream or future
boundary	throw-out()	uncaught exception propagated out of component
boundary	throw-async()	uncaught exception propagated out of component
boundary	throw-callback()	uncaught exception propagated out of component
boundary	realloc-throws("hi")	uncaught exception propagated out of component
boundary	post-return-throws()	uncaught exception propagated out of component
boundary	catch-callee()	uncaught exception propagated out of component
boundary	catch-own-realloc()	uncaught exception propagated out of component
boundary	catch-callee-realloc()	uncaught exception propagated out of component
boundary	realloc-waits("hi")	cannot leave component instance
boundary	own-from-borrow()	handle index 1 used with the wrong type, expected own handle but found borrow handle
TABLE
TAB=$(printf '\t')
poisoned() {
	H logs "$fn" 2>/dev/null | grep store.poisoned | grep -q -F "$msg"
}

while IFS="$TAB" read -r g call msg; do
	fn=${call%%(*}
	"$HOSTEL" run --invoke "$call" "$GUESTS/$g.wasm" >"$T/out" 2>"$T/err"
	rc=$?
	check "hostel run: $fn traps (exit 1)" test $rc -eq 1
	check "hostel run: $fn: $msg" has "$T/err" "$msg"
done <"$T/traps.tsv"

"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$T/state" 2>>"$T/log" &
PIDS="$PIDS $!"
check "hosteld starts" wait_for 10 alive
# a trap poisons the instance: one service per export
while IFS="$TAB" read -r g call msg; do
	fn=${call%%(*}
	H deploy "$GUESTS/$g.wasm" --name "$fn" --durability none >/dev/null 2>&1
	H call "$fn" "$call" >"$T/out" 2>"$T/err"
	rc=$?
	if test "$fn" = post-return-throws; then
		# the caller has its result before the post-return runs: the
		# call returns it, and the trap poisons the store
		check "as a service: $fn: the call returns 7" \
			eq "$rc/$(cat "$T/out")" "0/7"
		check "as a service: $fn: then store.poisoned with $msg" \
			wait_for 10 poisoned
		continue
	fi
	if test "$fn" = return-twice; then
		# its first task.return answered the call; the second traps
		# after it: the call returned, and the store is poisoned with
		# the trap as its reason (it was lost, the instance poisoned
		# silently, until the next call found it so)
		check "as a service: $fn: the call returns (exit 0)" test $rc -eq 0
		check "as a service: $fn: then store.poisoned with $msg" \
			wait_for 10 poisoned
		check "as a service: $fn: ps says why" \
			has_ps "$fn" "background work trapped: wasm trap: $msg"
		continue
	fi
	check "as a service: $fn: CallTrapped, $msg" \
		eq "$(grep -c CallTrapped "$T/err")/$(grep -c -F "$msg" "$T/err")" "1/1"
done <"$T/traps.tsv"
kill -TERM $PIDS 2>/dev/null
wait
tap_finish "$T/log"
