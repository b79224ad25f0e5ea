#!/bin/sh
# qjs-guest.sh - the componentize-qjs (QuickJS) guest
# tests/guests/qjs/guest.component.wasm through `hostel run --invoke`:
# Component-Model-async exports, a wasi:clocks/monotonic-clock@0.3.0
# wait, stream<u8> and stream<string> results (read to their end and
# printed as lists) and arguments (written as WAVE lists, fed through a
# host-held stream end), and plain string/list functions.  Every call of
# tests/guests/qjs/calls.tsv must print the result the table gives, which
# is what jco 1.35 gives for the same call on Node 24:
#
#   sh tests/guests/qjs/jco.sh     # the same calls under jco (needs npm)
#
# No timed assertion beyond "a 100 ms wait took at least 100 ms"; the
# 20-concurrent-sleeps figure is bench/qjs-concurrent.

set -u
NAME=qjs-guest
B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
. "$S/tests/tap.sh"
HOSTEL=$B/client/hostel
G=$S/tests/guests/qjs
GUEST=$G/guest.component.wasm
IFACE=hostel:qjs/api@0.1.0
need_programs "$HOSTEL"
tap_tmpdir

TAB=$(printf '\t')
while IFS="$TAB" read -r fn args streams want; do
	case $fn in '#'* | '') continue ;; esac
	"$HOSTEL" run --invoke "$IFACE#$fn($args)" "$GUEST" \
		>"$T/out" 2>"$T/err"
	rc=$?
	got=$(cat "$T/out")
	if test $rc != 0; then
		not_ok "$fn($args): exit $rc"
		sed 's/^/# /' "$T/err"
	elif test "$got" != "$want"; then
		not_ok "$fn($args): got $got, expected $want"
	else
		ok "$fn($args) = $got"
	fi
done <"$G/calls.tsv"

# the wait is real (a lower bound only: no upper bound in make check)
now_ms() {
	date +%s%3N
}
t0=$(now_ms)
"$HOSTEL" run --invoke "$IFACE#sleep(100)" "$GUEST" >"$T/out" 2>"$T/err"
t1=$(now_ms)
check "sleep(100) waited >= 100 ms ($((t1 - t0)) ms)" \
	test $((t1 - t0)) -ge 100

# a long stream result: 1000 bytes, 16 per guest write
"$HOSTEL" run --invoke "$IFACE#count-up(1000)" "$GUEST" >"$T/out" 2>"$T/err"
check "count-up(1000) returns" test $? -eq 0
check "count-up(1000) carried 1000 bytes" \
	test "$(tr ',' '\n' <"$T/out" | wc -l)" -eq 1000
check "count-up(1000) ends with 229, 230, 231" has "$T/out" "229, 230, 231]"

# a stream argument is typed by its element type
"$HOSTEL" run --invoke "$IFACE#hash-bytes([\"x\"])" "$GUEST" \
	>"$T/out" 2>"$T/err"
check "a string in a stream<u8> argument is a usage error" \
	test $? -eq 2
check "and says so" has "$T/err" "bad --invoke"
"$HOSTEL" run --invoke "$IFACE#hash-bytes([256])" "$GUEST" \
	>"$T/out" 2>"$T/err"
check "256 in a stream<u8> argument is a usage error" test $? -eq 2

tap_finish
