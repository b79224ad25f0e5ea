#!/bin/sh
# daemon-bigargs.sh - arguments from files and standard input, values
# past the message bound, deadlines and cancel (issue 20 points 1 and 2),
# through a real hosteld and the real client:
#   - `hostel call --args-file FILE|-` (WAVE, and JSON with --json);
#   - `--arg-file NAME=FILE` binds a string or list<u8> parameter to a
#     file's bytes (io.hostel.Call.Upload chunks), `--result-file FILE`
#     writes a string or list<u8> result as it comes (chunkedResult): a
#     20 MiB file through echo (string) and back, byte for byte; a
#     list<u8> through bytes, 20 MiB of it too (held as its bytes); a bad upload id, a parameter of another
#     type, bytes that are not UTF-8 for a string, the 17th upload of a
#     connection (its count bound), an upload bound twice;
#   - hostel.conf's call-deadline ends a spin() that asks for no
#     deadline with CallDeadline; a call's own --deadline wins;
#   - `hostel cancel CALL-ID` ends a running spin() and the service then
#     serves another call;
#   - `hostel call --timeout MS` past its time says the call's id and
#     that it is still running, or with --cancel-on-timeout that it was
#     cancelled at the client's request: exit 7 both.
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when the
# programs are not built.  KEEP=1 keeps the temporary directory.

set -u

B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
NAME=daemon-bigargs
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
SEND=$B/tests/varlink-send
VALUES=$S/tests/guests/values/values.wasm
HOSTILE=$S/tests/guests/hostile/hostile.wasm
need_programs "$HOSTELD" "$HOSTEL" "$SEND"

tap_tmpdir

SLOW=${HOSTEL_SLOW:-1}
SOCK=$T/h.sock
STATE=$T/state
LOG=$T/hosteld.log
CONF=$T/hostel.conf
MiB=1048576
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
# hc NAME ARGS...: hostel call, stdout in NAME.out, stderr in NAME.err,
# the exit code in rc
hc() {
	hc_n=$1
	shift
	H call "$@" >"$T/$hc_n.out" 2>"$T/$hc_n.err"
	rc=$?
}
abc() {
	yes abcdefghijklmnopqrstuvwxyz | tr -d '\n' | head -c "$1"
}
# call_id FILE: the call id a message in FILE names
call_id() {
	grep -oE '[0-9a-f]{16}-[0-9]{10}' "$1" | head -n 1
}
# ends ID: the terminal events of that call in the history
ends() {
	H logs --json --call "$1" 2>/dev/null |
		grep -oE '"kind":"call\.(returned|trapped|cancelled|failed)"' |
		sed 's/"kind":"//; s/"//' | tr '\n' ' ' | sed 's/ $//'
}
# healthy: wait until hostile answers again (after a trap storm's back-off)
healthy() {
	wait_for $((10 * SLOW)) sh -c "'$HOSTEL' --socket '$SOCK' call hostile 'ping()' >/dev/null 2>&1"
}
# running ID: the call is in the history, started and not ended
running() {
	H logs --json --call "$1" 2>/dev/null | grep -q '"kind":"call.started"'
}

# A short default deadline: spin() without one ends after 1 s.
printf 'call-deadline = 1s\n' >"$CONF"
"$HOSTELD" --foreground --config "$CONF" --socket "$SOCK" \
	--state-dir "$STATE" 2>>"$LOG" &
DPID=$!
PIDS="$PIDS $DPID"
wait_for 10 alive || {
	echo "$NAME: hosteld did not start" >&2
	cat "$LOG" >&2
	exit 1
}
H deploy "$VALUES" --name values >"$T/deploy.out" 2>&1
H deploy "$HOSTILE" --name hostile >"$T/deploy2.out" 2>&1
hc p0 hostile 'ping()'
check "the guests deploy and answer" eq "$(cat "$T/p0.out")/$rc" "1/0"

# ---- point 1: arguments from files and standard input -------------------
hc w0 values 'echo("plain")'
check "a WAVE call on the command line still works" \
	eq "$(cat "$T/w0.out")/$rc" '"plain"/0'
printf 'echo("from a file")' >"$T/call.wave"
hc w1 --args-file "$T/call.wave" values
check "--args-file FILE: WAVE" eq "$(cat "$T/w1.out")/$rc" '"from a file"/0'
printf 'echo("from stdin")' | H call --args-file - values >"$T/w2.out" 2>&1
check "--args-file -: WAVE from standard input" \
	eq "$(cat "$T/w2.out")" '"from stdin"'
printf '["json file"]' >"$T/args.json"
hc j1 --json --args-file "$T/args.json" values echo
check "--json --args-file FILE" eq "$(cat "$T/j1.out")/$rc" '"json file"/0'
printf '{"s": "by name"}' | H call --json --args-file - values echo \
	>"$T/j2.out" 2>&1
check "--json --args-file -: an object by name" \
	eq "$(cat "$T/j2.out")" '"by name"'
hc j3 --args-file "$T/missing" values
check "--args-file of a missing file: exit 3" eq "$rc" 3

# A 20 MiB file as a string argument, its result to a file.
N=$((20 * MiB))
abc "$N" >"$T/big.in"
t0=$(date +%s)
hc big --timeout $((300000 * SLOW)) --arg-file s="$T/big.in" \
	--result-file "$T/big.res" values echo
t1=$(date +%s)
check "a 20 MiB file argument: echo returns ($((t1 - t0)) s)" eq "$rc" 0
check "... its result, written to --result-file, is the file, byte for byte" \
	cmp -s "$T/big.in" "$T/big.res"
check "... nothing on standard output or error" \
	test ! -s "$T/big.out" -a ! -s "$T/big.err"
big_id=$(H logs --json --kind call.returned values | tail -n 1 | call_id /dev/stdin)
check "... the history has its call.returned" test -n "$big_id"

# The placeholder form: WAVE with "" in the bound parameter's place.
printf 'hello, file' >"$T/small.in"
hc s1 --arg-file s="$T/small.in" values 'echo("")'
check "--arg-file with a WAVE placeholder, the result printed" \
	eq "$(cat "$T/s1.out")/$rc" '"hello, file"/0'
hc s2 --json --arg-file s="$T/small.in" values echo
check "--json --arg-file: the JSON result" \
	eq "$(cat "$T/s2.out")/$rc" '"hello, file"/0'

# list<u8>: raw bytes, not text (a NUL, bytes past ASCII).
printf '\000\001\377binary\n' >"$T/bin.in"
hc b1 --arg-file b="$T/bin.in" --result-file "$T/bin.res" values bytes
check "list<u8> from a file and back, raw" eq "$rc" 0
check "... byte for byte" cmp -s "$T/bin.in" "$T/bin.res"
head -c $((256 * 1024)) /dev/urandom >"$T/rand.in"
hc b2 --arg-file b="$T/rand.in" --result-file "$T/rand.res" values bytes
check "256 KiB of random bytes as list<u8>, and back" \
	cmp -s "$T/rand.in" "$T/rand.res"
# 20 MiB as list<u8>: held as its bytes (1 byte each, not a 40-byte
# value each: 800 MiB, past limits.hostBytes' 256 MiB, ValueTooLarge).
head -c "$N" /dev/urandom >"$T/bigb.in"
t0=$(date +%s)
hc bigb --timeout $((300000 * SLOW)) --arg-file b="$T/bigb.in" \
	--result-file "$T/bigb.res" values 'bytes([])'
t1=$(date +%s)
check "a 20 MiB file as list<u8>: bytes returns ($((t1 - t0)) s)" eq "$rc" 0
check "... its result, written to --result-file, is the file, byte for byte" \
	cmp -s "$T/bigb.in" "$T/bigb.res"
check "... nothing on standard output or error" \
	test ! -s "$T/bigb.out" -a ! -s "$T/bigb.err"
rm -f "$T/bigb.in" "$T/bigb.res"
cat "$T/bin.in" | H call --arg-file b=- --result-file - values bytes \
	>"$T/b3.out" 2>"$T/b3.err"
check "--arg-file NAME=- and --result-file -: standard input and output" \
	cmp -s "$T/bin.in" "$T/b3.out"

# Misuse.
printf '\377not utf-8' >"$T/bad.in"
hc e1 --arg-file s="$T/bad.in" values echo
check "a string parameter from bytes that are not UTF-8: exit 2" \
	eq "$rc/$(grep -c 'not UTF-8' "$T/e1.err")" "2/1"
hc e2 --arg-file n="$T/small.in" values make
check "a parameter that is neither list<u8> nor string: exit 2" \
	eq "$rc/$(grep -c 'neither a list<u8> nor a string' "$T/e2.err")" "2/1"
hc e3 --arg-file x="$T/small.in" values echo
check "a parameter the export does not have: exit 2" eq "$rc" 2
"$SEND" "$SOCK" call '{"method":"io.hostel.Call.Invoke","parameters":{"service":"values","export":"echo","uploads":{"s":"u9"}}}' \
	>"$T/e4.out" 2>&1
check "Invoke with an unknown upload: UploadNotFound" has "$T/e4.out" UploadNotFound
"$SEND" "$SOCK" call '{"method":"io.hostel.Call.Upload","parameters":{"data":"not base64!"}}' \
	>"$T/e5.out" 2>&1
check "Upload of data that is not base64: InvalidArguments" \
	has "$T/e5.out" InvalidArguments
"$SEND" "$SOCK" call '{"method":"io.hostel.Call.Invoke","parameters":{"service":"values","export":"echo","args":["x"],"chunkedResult":true}}' \
	>"$T/e6.out" 2>&1
check "chunkedResult without more: InvalidParameter" has "$T/e6.out" chunkedResult
# 17 uploads on one connection: the 17th passes the count bound.
UP='{"method":"io.hostel.Call.Upload","parameters":{"data":"AAAA"}}'
set --
for i in $(seq 17); do set -- "$@" call "$UP"; done
"$SEND" "$SOCK" "$@" >"$T/e8.out" 2>&1
check "16 uploads on a connection are taken" \
	eq "$(grep -c '"uploadId":"u' "$T/e8.out")" 16
check "... the 17th is ValueTooLarge {value upload, the count bound}" \
	has "$T/e8.out" '{"value":"upload","size":17,"limit":16,"bound":"uploads of a connection (count)"},"error":"io.hostel.Call.ValueTooLarge"}'
# An upload bound by one Invoke is gone; a later Invoke cannot use it.
"$SEND" "$SOCK" call "$UP" \
	call '{"method":"io.hostel.Call.Invoke","parameters":{"service":"values","export":"bytes","uploads":{"b":"u1"}}}' \
	call '{"method":"io.hostel.Call.Invoke","parameters":{"service":"values","export":"bytes","uploads":{"b":"u1"}}}' \
	>"$T/e9.out" 2>&1
check "an upload binds once: the call returns its bytes, then UploadNotFound" \
	eq "$(grep -c '"result":{"value":"AAAA"}' "$T/e9.out")/$(grep -c UploadNotFound "$T/e9.out")" "1/1"
hc e7 values 'echo("still fine")'
check "the service answers after all that" eq "$(cat "$T/e7.out")/$rc" '"still fine"/0'

# ---- point 2: deadlines, cancel, the client's timeout -------------------
t0=$(date +%s)
hc d1 --timeout $((30000 * SLOW)) hostile 'spin()'
t1=$(date +%s)
check "spin() without a deadline ends at call-deadline (1 s): CallDeadline, exit 1" \
	eq "$rc/$(grep -c CallDeadline "$T/d1.err")" "1/1"
check "... it says the deadline and the call ($((t1 - t0)) s)" \
	grep -q 'call [0-9a-f-]*: deadline exceeded (1000 ms) while it ran' "$T/d1.err"
check "... after about 1 s" test $((t1 - t0)) -lt $((10 * SLOW))
hc d2 hostile 'ping()'
check "... the service serves the next call (fresh store)" eq "$(cat "$T/d2.out")/$rc" "1/0"
hc d3 --deadline 300 hostile 'spin()'
check "a call's own --deadline 300 wins: CallDeadline (300 ms)" \
	eq "$rc/$(grep -c '(300 ms)' "$T/d3.err")" "1/1"

# hostel cancel: a spin() with no deadline (--deadline 0) runs until
# cancelled.
healthy
H call --deadline 0 hostile 'spin()' >"$T/c1.out" 2>"$T/c1.err" &
CPID=$!
PIDS="$PIDS $CPID"
spin_id() {
	H logs --json --kind call.started hostile | grep '"export":"spin"' |
		tail -n 1 | call_id /dev/stdin
}
wait_for $((10 * SLOW)) sh -c "'$HOSTEL' --socket '$SOCK' logs --json --kind call.started hostile | grep -c '\"export\":\"spin\"' | grep -qx 3"
cid=$(spin_id)
sleep 1
check "the spin() with --deadline 0 still runs after 1 s" kill -0 "$CPID"
H cancel "$cid" >"$T/cancel.out" 2>&1
check "hostel cancel CALL-ID: exit 0" eq $? 0
check "... it says the call was cancelled in flight" \
	grep -q "call $cid cancelled while in flight" "$T/cancel.out"
wait "$CPID"
crc=$?
check "... the call ends CallCancelled, exit 1" \
	eq "$crc/$(grep -c CallCancelled "$T/c1.err")" "1/1"
check "... once in the history: call.cancelled" eq "$(ends "$cid")" "call.cancelled"
check "... and the service serves another call (its store recreated)" healthy
H cancel "$cid" >"$T/cancel2.out" 2>&1
check "hostel cancel of an ended call: CallNotFound, exit 4" \
	eq "$?/$(grep -c CallNotFound "$T/cancel2.out")" "4/1"

# The client's timeout: still running, or cancelled at its request
# (long enough for the first reply, with its call id, under Valgrind).
TO=$((500 * SLOW))
healthy
hc t1 --timeout $TO --deadline 0 hostile 'spin()'
tid=$(call_id "$T/t1.err")
check "--timeout $TO: exit 7" eq "$rc" 7
check "... it names the call and says it is still running" \
	grep -q "timed out after $TO ms: call $tid is still running" "$T/t1.err"
check "... and it is" running "$tid"
check "... with no end yet" eq "$(ends "$tid")" ""
H cancel "$tid" >/dev/null 2>&1
healthy
hc t2 --timeout $TO --cancel-on-timeout --deadline 0 hostile 'spin()'
tid2=$(call_id "$T/t2.err")
check "--timeout $TO --cancel-on-timeout: exit 7" eq "$rc" 7
check "... it says the call was cancelled at the client's request" \
	grep -q "call $tid2 cancelled at the client's request" "$T/t2.err"
wait_for $((10 * SLOW)) test -n "$(ends "$tid2")"
check "... it ended cancelled" eq "$(ends "$tid2")" "call.cancelled"
check "... the service serves the next call" healthy

kill -TERM "$DPID"
wait "$DPID"
check "hosteld stops cleanly" test $? -eq 0
tap_finish "$LOG"
