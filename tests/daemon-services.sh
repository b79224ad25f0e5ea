#!/bin/sh
# daemon-services.sh - services end to end with a real hosteld (temporary
# socket and state directory) and the real client: deploy a component
# written by tests/guests/mkcomponent, calls keeping state between them
# (a counter), WAVE and JSON arguments, 50 concurrent clients, clear
# errors for bad JSON, unknown methods, wrong value types, unknown
# exports and an invalid component (the daemon keeps serving), a trap
# poisoning the service and its recovery, a fuel limit, stop/start, a
# daemon restart recreating the service, and exactly one terminal event
# per started call in the history.
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when the
# programs are not built.  KEEP=1 keeps the temporary directory.

set -u

B=${HOSTEL_BUILDDIR:-.}
NAME=daemon-services
. "${HOSTEL_SRCDIR:-$(dirname "$0")/..}/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
SEND=$B/tests/varlink-send
MK=$B/tests/guests/mkcomponent
need_programs "$HOSTELD" "$HOSTEL" "$SEND" "$MK"

tap_tmpdir

SOCK=$T/h.sock
STATE=$T/state
LOG=$T/hosteld.log
wait_alive() {
	i=0
	while ! alive; do
		i=$((i + 1))
		test $i -lt 200 || return 1
		sleep 0.05
	done
}
start_daemon() {
	"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$STATE" \
		2>>"$LOG" &
	DPID=$!
	PIDS="$PIDS $DPID"
	wait_alive
}
stop_daemon() {
	kill -TERM "$DPID"
	wait "$DPID"
}
# callout NAME ARGS...: `hostel call` into $T/NAME.out/.err, rc in $rc
callout() {
	o=$1
	shift
	H call "$@" >"$T/$o.out" 2>"$T/$o.err"
	rc=$?
}

"$MK" counter "$T/counter.wasm" || exit 99
start_daemon || {
	echo "daemon-services: hosteld did not start" >&2
	cat "$LOG" >&2
	exit 1
}

# ---- deploy and state kept between calls -------------------------------
H deploy "$T/counter.wasm" --fuel 1000000 >"$T/deploy.out" 2>&1
check "deploy succeeds" test $? -eq 0
check "deploy names the service after the file" has "$T/deploy.out" \
	"deployed counter"
callout c1 counter 'inc()'
check "first call returns 1" eq "$(cat "$T/c1.out")/$rc" "1/0"
callout c2 counter 'inc()'
check "state is kept: second call returns 2" eq "$(cat "$T/c2.out")" "2"
callout c3 counter 'add(40, 2)'
check "WAVE arguments" eq "$(cat "$T/c3.out")" "42"
callout c4 --json counter add '{"a": 1, "b": 2}'
check "JSON arguments by name, JSON result" eq "$(cat "$T/c4.out")" "3"
callout c5 --json counter add '["7", 8]'
check "JSON integer as a decimal string" eq "$(cat "$T/c5.out")" "15"
H ps >"$T/ps.out"
check "ps lists the running service" grep -q '^counter *running' "$T/ps.out"
H inspect counter >"$T/inspect.out"
check "inspect SERVICE asks the daemon" has "$T/inspect.out" \
	"export add: func(a: u32, b: u32) -> u32;"

# ---- 50 concurrent clients ----------------------------------------------
i=0
CPIDS=
while [ $i -lt 50 ]; do
	H call counter 'inc()' >"$T/par.$i" 2>&1 &
	CPIDS="$CPIDS $!"
	i=$((i + 1))
done
bad=0
for p in $CPIDS; do
	wait "$p" || bad=$((bad + 1))
done
check "50 concurrent calls succeed" test $bad -eq 0
cat "$T"/par.* | sort -n >"$T/par.all"
check "each concurrent call saw its own count (3..52)" \
	eq "$(sort -un "$T/par.all" | wc -l | tr -d ' ')/$(head -1 "$T/par.all")/$(tail -1 "$T/par.all")" \
	"50/3/52"
callout c6 counter 'get()'
check "the counter is 52 afterwards" eq "$(cat "$T/c6.out")" "52"

# ---- clear errors; the daemon keeps serving -----------------------------
callout e1 counter 'add(1, "x")'
check "wrong value type: InvalidArguments, exit 2" \
	eq "$rc/$(grep -c InvalidArguments "$T/e1.err")" "2/1"
callout e2 --json counter add '[1, -1]'
check "out-of-range JSON value refused" \
	eq "$rc/$(grep -c 'out of range' "$T/e2.err")" "2/1"
callout e3 counter 'nope()'
check "unknown export: ExportNotFound, exit 4" \
	eq "$rc/$(grep -c ExportNotFound "$T/e3.err")" "4/1"
callout e4 ghost 'inc()'
check "unknown service: ServiceNotFound, exit 4" \
	eq "$rc/$(grep -c ServiceNotFound "$T/e4.err")" "4/1"
"$SEND" "$SOCK" call '{"method":"io.hostel.Call.Nope"}' >"$T/e5.out" 2>&1
check "unknown method: MethodNotFound" has "$T/e5.out" \
	"org.varlink.service.MethodNotFound"
"$SEND" "$SOCK" call '{"method":"io.hostel.Call.Invoke","parameters":{"service":"counter","export":"add","args":[1]}}' \
	>"$T/e6.out" 2>&1
check "wrong argument count: InvalidArguments" has "$T/e6.out" \
	"takes 2 argument(s), 1 given"
"$SEND" "$SOCK" raw '{"method": nope\0' expect-close >"$T/e7.out" 2>&1
check "bad JSON: ProtocolError" has "$T/e7.out" "io.hostel.Daemon.ProtocolError"
printf 'not a component at all' >"$T/bad.wasm"
H deploy "$T/bad.wasm" >"$T/e8.out" 2>&1
check "invalid component: InvalidComponent, exit 3" \
	eq "$?/$(grep -c InvalidComponent "$T/e8.out")" "3/1"
callout c7 counter 'get()'
check "the daemon still serves, state intact" eq "$(cat "$T/c7.out")" "52"

# ---- a trap poisons; the service recovers --------------------------------
callout t1 counter 'boom()'
check "a trap: CallTrapped, exit 1" \
	eq "$rc/$(grep -c CallTrapped "$T/t1.err")" "1/1"
callout t2 counter 'inc()'
check "the next call fails clearly: ServicePoisoned" \
	eq "$rc/$(grep -c ServicePoisoned "$T/t2.err")" "1/1"
callout t3 counter 'inc()'
check "then the recreated store answers with fresh state" \
	eq "$(cat "$T/t3.out")/$rc" "1/0"
callout t4 counter 'spin()'
check "fuel per call: an endless loop traps" has "$T/t4.err" "fuel"
# A second trap in a row: a timer recreates the store after a 100 ms
# back-off (the trap storm rule, tests/daemon-hostile.sh); calls meanwhile
# fail fast with ServicePoisoned.
wait_for 5 sh -c "\"$HOSTEL\" --socket \"$SOCK\" ps | grep -qE '^counter +running'"
callout t6 counter 'get()'
check "recovered after the fuel trap, with fresh state" \
	eq "$(cat "$T/t6.out")/$rc" "0/0"

# ---- stop / start ----------------------------------------------------------
H stop counter >/dev/null
callout s1 counter 'inc()'
check "a stopped service refuses calls (exit 5)" \
	eq "$rc/$(grep -c ServiceNotRunning "$T/s1.err")" "5/1"
H start counter >/dev/null
callout s2 counter 'inc()'
check "started again with the store it stopped with (recreated after the trap)" eq "$(cat "$T/s2.out")" "1"
callout s3 counter 'inc()'

# ---- restart of the daemon recreates the service -------------------------
stop_daemon
start_daemon || not_ok "hosteld restarts"
callout r1 counter 'inc()'
# (durability commit, the default: the store is back as it was)
check "after a restart the service is back with its store" \
	eq "$(cat "$T/r1.out")/$rc" "3/0"
H logs counter >"$T/logs.out"
check "calls show in hostel logs" has "$T/logs.out" "call.returned"
check "the store was recreated at start" \
	test "$(grep -c 'store.created' "$T/logs.out")" -ge 3

# ---- history: exactly one terminal event per started call -----------------
H logs --json >"$T/all.json"
started=$(grep -c '"kind":"call.started"' "$T/all.json")
ended=$(grep -cE '"kind":"call\.(returned|trapped|cancelled|failed|interrupted)"' "$T/all.json")
dups=$(grep -oE '"call":"[^"]*","kind":"call\.(returned|trapped|cancelled|failed|interrupted)"' "$T/all.json" |
	cut -d'"' -f4 | sort | uniq -d | wc -l)
check "every started call ended once ($started started, $ended ended)" \
	eq "$started/$dups" "$ended/0"

# ---- remove -----------------------------------------------------------------
H rm counter >/dev/null
check "rm removes the service" test "$(H ps | grep -c '^counter')" -eq 0
check "hosteld is still alive" alive
stop_daemon

tap_finish "$LOG"
