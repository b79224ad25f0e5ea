#!/bin/sh
# qjs-guest.sh - the componentize-qjs (QuickJS) guests tests/guests/qjs/
# (guest.component.wasm; the same built with --opt-size; sync.js built
# with --sync and with --sync --stub-wasi --opt-size) through `hostel run
# --invoke` and, their calls without streams, as services.  guest:
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
HOSTELD=$B/daemon/hosteld
G=$S/tests/guests/qjs
GUEST=$G/guest.component.wasm
IFACE=hostel:qjs/api@0.1.0
need_programs "$HOSTELD" "$HOSTEL"
tap_tmpdir
SOCK=$T/h.sock

TAB=$(printf '\t')
# calls GUEST TABLE INTERFACE: every call of TABLE under hostel run
calls() {
	while IFS="$TAB" read -r fn args streams want; do
		case $fn in '#'* | '') continue ;; esac
		"$HOSTEL" run --invoke "$3#$fn($args)" "$G/$1.component.wasm" \
			>"$T/out" 2>"$T/err"
		rc=$?
		got=$(cat "$T/out")
		if test $rc != 0; then
			not_ok "$1: $fn($args): exit $rc"
			sed 's/^/# /' "$T/err"
		elif test "$got" != "$want"; then
			not_ok "$1: $fn($args): got $got, expected $want"
		else
			ok "$1: $fn($args) = $got"
		fi
	done <"$G/$2"
}
# the binary shapes componentize-qjs's flags give: async (default) and
# --opt-size (tail calls), --sync and --sync --stub-wasi --opt-size
calls guest calls.tsv "$IFACE"
calls guest-opt calls.tsv "$IFACE"
calls sync sync-calls.tsv hostel:qjssync/api@0.1.0
calls sync-stub-opt sync-calls.tsv hostel:qjssync/api@0.1.0

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

# each shape as a service: the calls without streams
"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$T/state" 2>>"$T/log" &
PIDS="$PIDS $!"
check "hosteld starts" wait_for 10 alive
# service GUEST TABLE: deploy GUEST and make TABLE's plain calls
service() {
	H deploy "$G/$1.component.wasm" --name "$1" >"$T/d.out" 2>&1
	check "$1 deploys" has "$T/d.out" "deployed $1"
	while IFS="$TAB" read -r fn args streams want; do
		case $fn in '#'* | '' | count-up | words) continue ;; esac
		test "$streams" = - || continue
		check "as a service: $1: $fn($args) = $want" \
			eq "$(H call "$1" "$fn($args)" 2>&1)" "$want"
	done <"$G/$2"
}
service guest calls.tsv
service guest-opt calls.tsv
service sync sync-calls.tsv
service sync-stub-opt sync-calls.tsv
kill -TERM $PIDS 2>/dev/null
wait
tap_finish "$T/log"
