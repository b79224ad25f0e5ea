#!/bin/sh
# wasi-p3-stdio.sh - WASI 0.3 stdio, exit and random for real (issue 21
# point 4; runtime/wasi/cli_p3.c): tests/guests/wasi/p3stdio.wasm writes
# through wasi:cli/stdout@0.3.0 (the future-returning shape) and
# stderr@0.3.0 (the async shape), copies stdin through read-via-stream,
# cancels a write, exits through wasi:cli/exit@0.3.0 and draws from
# wasi:random@0.3.0, under `hostel run` and as a hosteld service (its
# stdout and stderr as guest.* events; a durable store snapshots and
# comes back, with a stdout stream kept open between calls going on
# after SIGKILL).
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when the
# programs are not built.

set -u
B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
NAME=wasi-p3-stdio
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
need_programs "$HOSTELD" "$HOSTEL"
G=$S/tests/guests/wasi/p3stdio.wasm
tap_tmpdir
SOCK=$T/h.sock
LOG=$T/hosteld.log

# run CALL: `hostel run --invoke CALL` with stdin from $T/in, into
# $T/out and $T/err, exit status in $rc
run() {
	"$HOSTEL" run --invoke "$1" "$G" <"$T/in" >"$T/out" 2>"$T/err"
	rc=$?
}
: >"$T/in"
run 'say("hi there")'
check "stdout@0.3.0 (future shape): the text, then ok" \
	eq "$(cat "$T/out")/$rc" "hi there0/0"
run 'say-early("early")'
check "a write started before write-via-stream took the stream" \
	eq "$(cat "$T/out")/$rc" "early0/0"
run 'yell("to stderr")'
check "stderr@0.3.0 (async shape): the text on stderr, ok on stdout" \
	eq "$(cat "$T/err")|$(cat "$T/out")/$rc" "to stderr|0/0"
"$HOSTEL" run "$G" <"$T/in" >"$T/out" 2>"$T/err"
rc=$?
check "wasi:cli/run@0.3.0 says hello and returns ok" \
	eq "$(cat "$T/out")/$rc" "hello from wasi:cli/run@0.3.0/0"
# 300,001 bytes: many of the guest's 2 KiB reads, a last one short
awk 'BEGIN { for (i = 0; i < 30000; i++) printf "line %04d\n", i % 10000; printf "x" }' >"$T/in"
run 'cat()'
size=$(wc -c <"$T/in")
head -c "$size" "$T/out" >"$T/copied"
check "stdin@0.3.0 read-via-stream: $size bytes copied to stdout" \
	cmp -s "$T/in" "$T/copied"
check "... and counted, ok at end of file" \
	eq "$(tail -c +$((size + 1)) "$T/out")/$rc" "$size/0"
"$HOSTEL" run --invoke 'cat()' "$G" </dev/null >"$T/out" 2>"$T/err"
check "an empty stdin: end of file at once" eq "$(cat "$T/out")" 0
: >"$T/in"
run 'cancel-write()'
check "a cancelled write-via-stream: cancelled before returned, then the stream is dropped (41)" \
	eq "$(cat "$T/out")" 41
run 'loop-back()'
check "stdin's stream handed to stdout (both ends the host's): a trap" \
	eq "$rc/$(grep -c 'not a stream the guest holds the other end of' "$T/err")" "1/1"
run 'wait-first()'
check "waiting for stdout's result before the stream is over: deadlock" \
	eq "$rc/$(grep -c 'deadlock detected' "$T/err")" "1/1"
run 'random(10)'
check "random@0.3.0 get-random-bytes(10): 10 bytes" eq "$(cat "$T/out")" 10
run 'random(5000000)'
check "max-len past 1 MiB: 1 MiB (fewer, as max-len allows)" \
	eq "$(cat "$T/out")" 1048576
run 'seed()'
check "get-insecure-seed and get-random-u64 are not the denial's 0" \
	test "$(cat "$T/out")" != 0
run 'quit(true)'
check "exit@0.3.0 exit(err): exit status 1" eq "$rc" 1
run 'quit(false)'
check "exit(ok): exit status 0" eq "$rc/$(cat "$T/err")" "0/"

start_daemon() {
	"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$T/state" 2>>"$LOG" &
	DPID=$!
	PIDS="$PIDS $DPID"
	wait_for $((10 * ${HOSTEL_SLOW:-1})) alive
}
stop_daemon() {
	kill -TERM "$DPID"
	wait "$DPID" 2>/dev/null
}
# logged KIND TEXT: an event of service p3 of KIND holds TEXT
logged() {
	H logs --json --kind "$1" p3 2>/dev/null | grep -qF "$2"
}
check "hosteld starts" start_daemon
H deploy "$G" --name p3 >/dev/null 2>&1
check "as a service: say" eq "$(H call p3 'say("from the daemon\n")' 2>&1)" 0
check "yell" eq "$(H call p3 'yell("daemon stderr\n")' 2>&1)" 0
check "cat: no stdin, end of file" eq "$(H call p3 'cat()' 2>&1)" 0
check "its stdout is a guest.stdout event" \
	logged guest.stdout "from the daemon"
check "its stderr a guest.stderr event" logged guest.stderr "daemon stderr"
check "no snapshot failed: the streams were over at each commit" \
	eq "$(H logs --kind store.snapshot_failed p3 2>&1 | grep -c snapshot_failed)" 0
# A stream kept open between calls: the store holds the host's end of
# it, which the commit's image writes (cli_p3.c end_save); after SIGKILL
# the stream writes on and its result is still answered.
check "hold: a stdout stream kept open" eq "$(H call p3 'hold("held\n")' 2>&1)" 0
check "more: written through it" eq "$(H call p3 'more("more\n")' 2>&1)" 0
check "... the commits' images took it (no store.snapshot_failed)" \
	eq "$(H logs --kind store.snapshot_failed p3 2>&1 | grep -c snapshot_failed)" 0
# A future of the guest's own held across the image: its ends came back
# as stream ends (restore made them before it read the pair's state).
H call p3 'keep-future()' >/dev/null 2>&1
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null
check "hosteld starts after SIGKILL" start_daemon
check "the held stream came back: more writes through it" \
	eq "$(H call p3 'more("after the kill\n")' 2>&1)" 0
check "a future the guest held across SIGKILL still carries its value (7)" \
	eq "$(H call p3 'use-future()' 2>&1)" 7
check "release: its result is answered, ok" eq "$(H call p3 'release()' 2>&1)" 0
check "... and every line was written" sh -c "
	'$HOSTEL' --socket '$SOCK' logs --kind guest.stdout p3 >'$T/held.log' &&
	grep -q held '$T/held.log' && grep -q 'more' '$T/held.log' &&
	grep -q 'after the kill' '$T/held.log'"
check "no restore failed" \
	eq "$(H logs --kind store.restore_failed p3 2>&1 | grep -c restore_failed)" 0
H call p3 'say("after release\n")' >/dev/null 2>&1
stop_daemon
check "hosteld starts again" start_daemon
check "the store came back (store.restored)" logged store.restored '"'
check "and says again" eq "$(H call p3 'say("again\n")' 2>&1)" 0
check "no restore failed" \
	eq "$(H logs --kind store.restore_failed p3 2>&1 | grep -c restore_failed)" 0
H deploy "$G" --name p3dead >/dev/null 2>&1
check "wait-first as a service: the deadlock trap, not a call left hanging" \
	sh -c "'$HOSTEL' --socket '$SOCK' call p3dead 'wait-first()' 2>&1 | grep -q 'deadlock detected'"
stop_daemon
tap_finish "$LOG"
