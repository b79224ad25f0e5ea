#!/bin/sh
# daemon-ticker.sh - background liveness of a hosteld store: the ticker
# (tests/guests/ticker/ticker.wasm: an async `start` whose task goes on
# after returning, ticking every 100 ms on the WASI 0.3 monotonic clock)
# counts while no client is connected, because the daemon's clock
# timers settle its waits and the settlement pump runs the guest.  The
# count grows between two calls 2 s apart, never faster than the clock
# allows; `stop` ends the task; stopping the service, removing it and
# restarting the daemon with waits pending are clean.
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when the
# programs are not built.  KEEP=1 keeps the temporary directory.

set -u

B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
NAME=daemon-ticker
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
TICKER=$S/tests/guests/ticker/ticker.wasm
need_programs "$HOSTELD" "$HOSTEL"
test -r "$TICKER" || {
	echo "daemon-ticker: $TICKER is missing" >&2
	exit 99
}

tap_tmpdir

SOCK=$T/h.sock
STATE=$T/state
LOG=$T/hosteld.log
start_daemon() {
	"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$STATE" \
		2>>"$LOG" &
	DPID=$!
	PIDS="$PIDS $DPID"
	wait_for 10 alive
}
# stop_daemon: SIGTERM, exit status in $stopped
stop_daemon() {
	kill -TERM "$DPID"
	wait "$DPID"
	stopped=$?
}
count() {
	H call ticker 'count()'
}
now_ms() {
	echo $(($(date +%s%N) / 1000000))
}
# connections: open connections other than the asking one
connections() {
	H status --json 2>/dev/null |
		sed -n 's/.*"connections": *\([0-9]*\).*/\1/p'
}

start_daemon || {
	echo "daemon-ticker: hosteld did not start" >&2
	cat "$LOG" >&2
	exit 1
}

# durability none: these checks are of waits and of fresh stores (the
# ticker across restarts under commit, the default: daemon-durable.sh)
H deploy "$TICKER" --durability none >"$T/deploy.out" 2>&1
check "the ticker deploys" has "$T/deploy.out" "deployed ticker"
check "before start() it does not count" eq "$(count)" "0"
H call ticker 'start()' >"$T/start.out" 2>&1
check "start() returns at once (its task goes on)" test $? -eq 0

# ---- liveness: no client between two calls 2 s apart --------------------------
sleep 0.3
t0=$(now_ms)
c0=$(count)
check "nobody but the asker is connected while it ticks" \
	eq "$(connections)" "1"
sleep 2
c1=$(count)
t1=$(now_ms)
grew=$((c1 - c0))
most=$(((t1 - t0) / 100 + 1))
check "the count grows with no client connected ($c0 -> $c1)" \
	test "$grew" -ge 10
check "never faster than its 100 ms clock ($grew ticks in $((t1 - t0)) ms)" \
	test "$grew" -le "$most"
H call ticker 'start()' >/dev/null
c2=$(count)
check "start() again is a no-op: the count goes on" test "$c2" -ge "$c1"

# ---- stop() ends the task ------------------------------------------------------
H call ticker 'stop()' >/dev/null
sleep 0.3
c3=$(count)
sleep 0.5
c4=$(count)
check "after stop() the count stays ($c3 = $c4)" eq "$c4" "$c3"
H call ticker 'start()' >/dev/null
sleep 0.5
c5=$(count)
check "start() after stop() ticks again ($c4 -> $c5)" test "$c5" -gt "$c4"

# ---- every wait and settlement is in the history ---------------------------
H logs --json --kind 'hostcall.*' ticker >"$T/hc.json"
c6=$(count)
grep '"kind":"hostcall.started"' "$T/hc.json" >"$T/hc-started"
grep '"kind":"hostcall.settled"' "$T/hc.json" >"$T/hc-settled"
ns=$(wc -l <"$T/hc-started")
nd=$(wc -l <"$T/hc-settled")
# (a settlement is recorded when it happens, counted when delivered: one
# may be recorded and not yet counted)
check "each tick's settlement is recorded ($nd hostcall.settled; $c5 to $c6 ticks)" \
	test "$nd" -ge "$c5" -a "$nd" -le $((c6 + 1))
check "each settlement follows its start; at most one wait outstanding ($ns started)" \
	test "$ns" -ge "$nd" -a "$ns" -le $((nd + 1))
check "hostcall.started names the import and its arguments" \
	eq "$(grep -c '"import":"wasi:clocks/monotonic-clock@0.3.0#wait-for","arguments":\[100000000\]' "$T/hc-started")" "$ns"
check "each hostcall.settled says returned" \
	eq "$(grep -c '"outcome":"returned"' "$T/hc-settled")" "$nd"
num() {
	sed -n 's/.*"hostcall":\([0-9]*\).*/\1/p' "$1" | sort -n
}
num "$T/hc-started" | head -n "$nd" >"$T/hc-n-started"
num "$T/hc-settled" >"$T/hc-n-settled"
check "settlements pair with starts by number, each once" \
	cmp -s "$T/hc-n-started" "$T/hc-n-settled"
# the task of the first start() ticked until stop(), the second's since
calls=$(sed -n 's/.*"call":"\([^"]*\)".*/\1/p' "$T/hc-started" | uniq | tr '\n' ' ')
check "every wait belongs to the start() call whose task made it ($calls)" \
	eq "$(echo $calls | wc -w)/$(grep -c '"call":"' "$T/hc-started")" "2/$ns"

# ---- waits pending across stop / remove / daemon restart ---------------------
H stop ticker >/dev/null
check "stopping the service with a wait pending is clean" alive
H start ticker >/dev/null
check "a started service has a fresh count" eq "$(count)" "0"
H call ticker 'start()' >/dev/null
stop_daemon
check "hosteld stops cleanly with a wait pending (exit $stopped)" \
	test "$stopped/$(grep -c 'ERROR\|<3>' "$LOG")" = "0/0"
start_daemon || not_ok "hosteld restarts"
check "after a restart the store is fresh" eq "$(count)" "0"
H call ticker 'start()' >/dev/null
sleep 0.5
check "and the ticker runs again once started" test "$(count)" -gt 0
H rm ticker >/dev/null
check "removing a ticking service is clean" alive
H deploy "$TICKER" --name last >/dev/null
H call last 'start()' >/dev/null
stop_daemon
check "hosteld exits 0 with a ticker running (exit $stopped)" \
	test "$stopped" -eq 0

tap_finish "$LOG"
