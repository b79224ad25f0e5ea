#!/bin/sh
# wasi-worlds.sh - every standard WASI world links (issue 21 point 4):
# the `jco embed --dummy` shells of wasi:cli/command and wasi:http/proxy
# of 0.2.x and of wasi:cli/command and wasi:http/service of 0.3.x
# (tests/guests/shells/) load and link under `hostel run` and as
# services; what the host does not serve is deny-by-default
# (runtime/wasi/deny.c): tests/guests/deny/sockets.wasm asks for a TCP
# socket and gets wasi:sockets' access-denied, and instance-network's
# network.
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when the
# programs are not built.

set -u
B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
NAME=wasi-worlds
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
need_programs "$HOSTELD" "$HOSTEL"
SH=$S/tests/guests/shells
DENY=$S/tests/guests/deny/sockets.wasm
tap_tmpdir
SOCK=$T/h.sock

for w in cli-command-0.2 http-proxy-0.2 cli-command-0.3 http-service-0.3; do
	"$HOSTEL" run "$SH/$w.wasm" >"$T/$w.out" 2>&1
	# a dummy's code traps everywhere, and a proxy has no run: either is
	# after linking
	check "$w links under hostel run" \
		test -z "$(grep -i 'link error\|invalid\|malformed' "$T/$w.out")" -a \
		-n "$(grep "unreachable\` instruction executed\|no wasi:cli/run export" "$T/$w.out")"
	grep -v '^$' "$T/$w.out" | sed 's/^/# /'
done
check "deny-by-default: a TCP socket is access-denied (hostel run)" \
	test "$("$HOSTEL" run --invoke 'tcp()' "$DENY" 2>&1)" = 1
check "instance-network gives a network (a resource that is nothing)" \
	test "$("$HOSTEL" run --invoke 'net()' "$DENY" 2>&1)" -gt 0

"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$T/state" 2>>"$T/log" &
PIDS="$PIDS $!"
check "hosteld starts" wait_for 10 alive
for w in cli-command-0.2 http-proxy-0.2 cli-command-0.3 http-service-0.3; do
	H deploy "$SH/$w.wasm" --name "$w" >"$T/d.out" 2>&1
	check "$w deploys and runs as a service" \
		test "$(H ps 2>/dev/null | awk -v n="$w" '$1 == n { print $2 }')" = running
done
H deploy "$DENY" --name deny >/dev/null 2>&1
check "as a service too: access-denied" test "$(H call deny 'tcp()' 2>&1)" = 1
kill -TERM $PIDS 2>/dev/null
wait
tap_finish "$T/log"
