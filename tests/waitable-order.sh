#!/bin/sh
# waitable-order.sh - a waitable set's events come in the order they
# were armed, not the order the members joined (tests/guests/async/order:
# a, b, c join; c's read completes, then a's; polls give c, a, none),
# under hostel run and as a service.  The order is a policy (the spec
# shuffles the members); what it replaces was a scan of every member at
# every wait, poll and readiness check.

set -u
NAME=waitable-order
B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
need_programs "$HOSTELD" "$HOSTEL"
GUEST=$S/tests/guests/async/order.wasm
tap_tmpdir
SOCK=$T/h.sock

# 0x060200: c (handle 6), then a (handle 2), then no event
check "hostel run: c's event, then a's, then none" \
	eq "$("$HOSTEL" run --invoke 'order()' "$GUEST" 2>&1)" 393728
"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$T/state" 2>>"$T/log" &
PIDS="$PIDS $!"
check "hosteld starts" wait_for 10 alive
H deploy "$GUEST" --name order >/dev/null 2>&1
check "as a service: the same order" eq "$(H call order 'order()' 2>&1)" 393728
kill -TERM $PIDS 2>/dev/null
wait
tap_finish "$T/log"
