#!/bin/sh
# idl-conformance.sh - every reply of hosteld conforms to the interface
# description it serves (issue 20 point 7): each method of each
# interface is called, for its success and its errors, and every reply
# is checked by tests/idl-conform against the method's output type or
# the error's parameters (ipc/idl-check.h: no unknown fields, no missing
# ones, the types of the IDL).
#
# Output is TAP-like, one line per reply; closes with "N passed, N
# failed".  Exit 0 when all conform, 1 otherwise, 99 when the programs
# are not built.  KEEP=1 keeps the temporary directory.

set -u

B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
NAME=idl-conformance
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
CONFORM=$B/tests/idl-conform
need_programs "$HOSTELD" "$HOSTEL" "$CONFORM"
HOSTILE=$S/tests/guests/hostile/hostile.wasm
SLEEP=$S/tests/guests/async/sleep.wasm
VALUES=$S/tests/guests/values/values.wasm

tap_tmpdir
SOCK=$T/h.sock
LOG=$T/hosteld.log
"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$T/state" 2>>"$LOG" &
PIDS="$PIDS $!"
wait_for 10 alive || {
	cat "$LOG" >&2
	exit 1
}
# run CALL...: the replies checked; their TAP lines become ours
run() {
	"$CONFORM" "$SOCK" "$@" >"$T/run.out" 2>&1
	r_rc=$?
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "${line#ok [0-9]* - }" ;;
		"not ok "*) not_ok "${line#not ok [0-9]* - }" ;;
		*" passed, "*) ;;
		*) echo "# $line" ;;
		esac
	done <"$T/run.out"
	test "$r_rc" -le 1 || not_ok "idl-conform ran to its end (exit $r_rc)"
}
c() { # c METHOD [PARAMS]: a call message
	printf '{"method":"%s","parameters":%s}' "$1" "${2:-{\}}"
}

B64=$(base64 -w0 "$HOSTILE")
run "$(c org.varlink.service.GetInfo)" \
	"$(c org.varlink.service.GetInterfaceDescription '{"interface":"io.hostel.Call"}')" \
	"$(c org.varlink.service.GetInterfaceDescription '{"interface":"com.example.Nope"}')" \
	"#bad $(c io.hostel.Nope.Method)" \
	"#bad $(c io.hostel.Daemon.Status '{"bogus":1}')" \
	"$(c io.hostel.Daemon.Status)" \
	"$(c io.hostel.Daemon.GetMetrics)" \
	"$(c io.hostel.Daemon.GetMetrics '{"service":"nope"}')" \
	"$(c io.hostel.Component.Add "{\"bytes\":\"$B64\",\"name\":\"hostile\"}")" \
	"$(c io.hostel.Component.Add "{\"bytes\":\"$B64\",\"name\":\"hostile\"}")" \
	"$(c io.hostel.Component.Add '{"bytes":"AGFzbQEAAAA="}')" \
	"$(c io.hostel.Component.List)" \
	"$(c io.hostel.Component.Inspect '{"component":"hostile"}')" \
	"$(c io.hostel.Component.Inspect '{"component":"nope"}')" \
	"$(c io.hostel.Service.Create '{"name":"h","component":"hostile","config":{"env":{"A":"1"},"limits":{"fuelPerCall":100000000}}}')" \
	"$(c io.hostel.Service.Create '{"name":"h","component":"hostile"}')" \
	"$(c io.hostel.Service.Create '{"name":"-bad","component":"hostile"}')" \
	"$(c io.hostel.Service.Create '{"name":"x","component":"hostile","config":{"limits":{"maxHandles":0}}}')" \
	"$(c io.hostel.Service.List)" \
	"$(c io.hostel.Service.Inspect '{"name":"h"}')" \
	"$(c io.hostel.Service.Inspect '{"name":"nope"}')" \
	"$(c io.hostel.Component.Remove '{"component":"hostile"}')" \
	"$(c io.hostel.Call.Invoke '{"service":"h","export":"ping","args":{}}')" \
	"#bad $(c io.hostel.Call.Invoke '{"service":"h","export":"ping","args":[]}')" \
	"$(c io.hostel.Call.Invoke '{"service":"h","wave":"ping()"}')" \
	"{\"method\":\"io.hostel.Call.Invoke\",\"parameters\":{\"service\":\"h\",\"wave\":\"ping()\"},\"more\":true}" \
	"$(c io.hostel.Call.Invoke '{"service":"h","export":"nope"}')" \
	"$(c io.hostel.Call.Invoke '{"service":"h","export":"recurse","args":{"n":"x"}}')" \
	"$(c io.hostel.Call.Invoke '{"service":"nope","export":"ping"}')" \
	"$(c io.hostel.Call.Invoke '{"service":"h","wave":"boom()"}')" \
	"$(c io.hostel.Call.Cancel '{"callId":"0-0"}')" \
	"$(c io.hostel.Service.Stop '{"name":"h"}')" \
	"$(c io.hostel.Call.Invoke '{"service":"h","wave":"ping()"}')" \
	"$(c io.hostel.Service.Start '{"name":"h"}')" \
	"$(c io.hostel.Service.Start '{"name":"nope"}')" \
	"$(c io.hostel.History.Read '{"limit":5}')" \
	"$(c io.hostel.History.Read '{"service":"h","kinds":["call.*"],"last":3}')" \
	"$(c io.hostel.History.Read '{"limit":0}')" \
	"$(c io.hostel.History.Stats)" \
	"$(c io.hostel.History.Prune '{"keepEvents":100000}')" \
	"$(c io.hostel.History.Prune '{"service":"h","keepEvents":0}')"

# values of every shape in results
H deploy "$VALUES" --name v >/dev/null 2>&1
H deploy "$SLEEP" --name sl >/dev/null 2>&1
run "$(c io.hostel.Call.Invoke '{"service":"v","export":"echo","args":{"s":"hi"}}')" \
	"$(c io.hostel.Call.Invoke '{"service":"v","wave":"make(3)"}')" \
	"$(c io.hostel.Call.Invoke '{"service":"v","wave":"calls()"}')"

# a call cancelled while it runs
H call sl 'sleep(10000)' >/dev/null 2>&1 &
SPID=$!
sl_started() {
	H logs -n 5 sl 2>/dev/null | grep -q call.started
}
wait_for 10 sl_started
CID=$(H logs sl 2>/dev/null | sed -n 's/.*call.started.* \([0-9a-f]*-[0-9]*\) .*/\1/p' | head -n 1)
test -n "$CID" || CID=$(H varlink io.hostel.History.Read '{"service":"sl","kinds":["call.started"]}' | grep -o '"call":"[^"]*"' | head -n 1 | cut -d'"' -f4)
run "$(c io.hostel.Call.Cancel "{\"callId\":\"$CID\"}")" \
	"$(c io.hostel.Service.Remove '{"name":"sl"}')" \
	"$(c io.hostel.Service.Remove '{"name":"nope"}')"
wait "$SPID"

kill -TERM $PIDS 2>/dev/null
wait
tap_finish "$LOG"
