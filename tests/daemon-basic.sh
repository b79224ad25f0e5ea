#!/bin/sh
# daemon-basic.sh - hosteld end to end, without the runtime: startup and
# refusal, `hostel status`, introspection, the standard errors, broken
# clients (bad JSON, oversize, half messages, clients that never read),
# `more`/`oneway`/`upgrade`, pipelining, SIGHUP reload, SIGTERM stop,
# detaching, and the systemd protocols (socket activation, sd_notify,
# watchdog) through tests/fake-systemd.  After every bad client the daemon
# must still answer others.
#
# Output is TAP-like ("ok N - ..."); exit 0 when all pass, 1 otherwise,
# 99 (hard error) when the programs are not built.  KEEP=1 keeps the
# temporary directory (logs, sockets) for a post-mortem.

set -u

B=${HOSTEL_BUILDDIR:-.}
NAME=daemon-basic
. "${HOSTEL_SRCDIR:-$(dirname "$0")/..}/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
SEND=$B/tests/varlink-send
FAKESD=$B/tests/fake-systemd
need_programs "$HOSTELD" "$HOSTEL" "$SEND" "$FAKESD"

tap_tmpdir

alive() {
	"$HOSTEL" --socket "$1" status >/dev/null 2>&1
}
# still_serves LABEL: the main daemon answers a fresh client.
still_serves() {
	check "daemon still serves after: $1" alive "$SOCK"
}
# vs ARGS...: run varlink-send on the main socket into $T/out.
vs() {
	"$SEND" "$SOCK" "$@" >"$T/out" 2>"$T/err"
}

SOCK=$T/hosteld.sock
LOG=$T/hosteld.log
STATE=$T/state
CONF=$T/hostel.conf
# The socket comes from the file, so a reload can try to change it.
printf '# test configuration\nsocket = %s\nlog-level = info\n' "$SOCK" \
	>"$CONF"

# ---- startup ------------------------------------------------------------
"$HOSTELD" --foreground --state-dir "$STATE" --config "$CONF" 2>"$LOG" &
DPID=$!
PIDS="$PIDS $DPID"
check "daemon starts and listens" wait_for 20 alive "$SOCK"
check "state directory created" test -d "$STATE"
check "startup is logged with a <6> prefix" has "$LOG" "<6>hosteld "

# ---- hostel status -----------------------------------------------------------
"$HOSTEL" --socket "$SOCK" status >"$T/status" 2>&1
check "hostel --socket PATH status exits 0" test $? -eq 0
check "status shows the version" grep -q '^hosteld [0-9]' "$T/status"
check "status shows the socket" has "$T/status" "socket:       $SOCK"
check "status shows the state dir" has "$T/status" "state dir:    $STATE"
HOSTEL_SOCKET=$SOCK "$HOSTEL" status --json >"$T/status" 2>&1
check "HOSTEL_SOCKET and --json work" \
	has "$T/status" "\"socket\":\"$SOCK\""
check "--json is Status's parameters, no envelope" \
	grep -q '^{"version":"[^"]*","pid":' "$T/status"
# ---- hostel varlink ------------------------------------------------------------
"$HOSTEL" --socket "$SOCK" varlink io.hostel.Daemon.Status >"$T/out" 2>&1
check "varlink METHOD: the reply's parameters on a line, exit 0" \
	sh -c "test $? -eq 0 && test \$(wc -l <'$T/out') -eq 1 &&
		grep -q '^{\"version\":\"[^\"]*\",\"pid\":$DPID,' '$T/out'"
"$HOSTEL" --socket "$SOCK" varlink org.varlink.service.GetInterfaceDescription \
	'{"interface":"io.hostel.History"}' >"$T/out" 2>&1
check "varlink METHOD JSON: with parameters" \
	grep -q '^{"description":"# The event history' "$T/out"
"$HOSTEL" --socket "$SOCK" varlink io.hostel.Daemon.Nope >"$T/out" 2>"$T/err"
check "varlink: an error reply goes to stderr, exit non-zero" \
	sh -c "test $? -ne 0 && ! test -s '$T/out' &&
		grep -q 'answered org.varlink.service.MethodNotFound' '$T/err'"
"$HOSTEL" --socket "$SOCK" varlink io.hostel.Daemon.Status '[]' 2>"$T/err"
check "varlink: parameters not an object: usage error" \
	sh -c "test $? -eq 2 && grep -q 'must be a JSON object' '$T/err'"
"$HOSTEL" varlink >/dev/null 2>&1
check "varlink without a method: usage error" test $? -eq 2
# Closed connections are counted out as the daemon sees their end: poll.
conns_are() {
	"$HOSTEL" --socket "$SOCK" status --json | grep -q "\"connections\":$1}"
}
check "Status counts the caller's connection" wait_for 5 conns_are 1
# The holder keeps its connection until it is killed: a holder on a timer
# raced a slow status client (Valgrind, a loaded CI) and had left already.
"$SEND" -t 120000 "$SOCK" expect-silence 120000 >/dev/null 2>&1 &
HOLDER=$!
check "Status counts another open connection" wait_for 10 conns_are 2
kill "$HOLDER" 2>/dev/null
wait "$HOLDER" 2>/dev/null
check "Status reports the daemon's pid" has "$T/status" "\"pid\":$DPID"
"$HOSTEL" status --socket "$T/nothing.sock" 2>"$T/err"
check "unreachable daemon exits 69" test $? -eq 69
check "unreachable message names the socket" has "$T/err" "$T/nothing.sock"

# ---- introspection ---------------------------------------------------------
vs call '{"method":"org.varlink.service.GetInfo"}'
check "GetInfo lists the interfaces" has "$T/out" \
	'"interfaces":["org.varlink.service","io.hostel.Daemon","io.hostel.History","io.hostel.Component","io.hostel.Service","io.hostel.Call"]'
check "GetInfo names the product" has "$T/out" '"product":"hosteld"'
vs describe org.varlink.service describe io.hostel.Daemon
check "org.varlink.service IDL parses" \
	has "$T/out" "org.varlink.service: 2 methods, 6 errors, 0 types"
check "io.hostel.Daemon IDL parses" \
	has "$T/out" "io.hostel.Daemon: 2 methods, 3 errors, 0 types"
vs call '{"method":"org.varlink.service.GetInterfaceDescription","parameters":{"interface":"com.example.Nope"}}'
check "unknown interface description: InterfaceNotFound" has "$T/out" \
	'{"parameters":{"interface":"com.example.Nope"},"error":"org.varlink.service.InterfaceNotFound"}'

# ---- standard errors; the connection stays usable ----------------------------
vs call '{"method":"io.hostel.Daemon.Nope"}' \
	call '{"method":"com.example.Thing.Do"}' \
	call '{"method":"org.varlink.service.GetInterfaceDescription"}' \
	call '{"method":"org.varlink.service.GetInterfaceDescription","parameters":{"interface":"io.hostel.Daemon","x":1}}' \
	call '{"method":"io.hostel.Daemon.Status","parameters":[1]}' \
	call '{"method":"io.hostel.Daemon.Status","upgrade":true}' \
	call '{"method":"io.hostel.Daemon.Status"}'
check "unknown method: MethodNotFound" has "$T/out" \
	'{"parameters":{"method":"io.hostel.Daemon.Nope"},"error":"org.varlink.service.MethodNotFound"}'
check "unknown interface: InterfaceNotFound" has "$T/out" \
	'{"parameters":{"interface":"com.example.Thing"},"error":"org.varlink.service.InterfaceNotFound"}'
check "missing parameter: InvalidParameter" has "$T/out" \
	'{"parameters":{"parameter":"interface"},"error":"org.varlink.service.InvalidParameter"}'
check "unknown parameter: InvalidParameter" has "$T/out" \
	'{"parameters":{"parameter":"x"},"error":"org.varlink.service.InvalidParameter"}'
check "parameters not an object: InvalidParameter" has "$T/out" \
	'{"parameters":{"parameter":"parameters"},"error":"org.varlink.service.InvalidParameter"}'
check "upgrade refused: InvalidParameter" has "$T/out" \
	'{"parameters":{"parameter":"upgrade"},"error":"org.varlink.service.InvalidParameter"}'
check "same connection still answers after errors" \
	grep -q '"stateDirectory"' "$T/out"

# ---- more, oneway, pipelining, half-close ---------------------------------------
vs call '{"method":"io.hostel.Daemon.Status","more":true}'
check "more: one final reply without continues" \
	sh -c "grep -q '\"stateDirectory\"' '$T/out' && ! grep -q continues '$T/out'"
vs send '{"method":"io.hostel.Daemon.Status","oneway":true}' \
	send '{"method":"io.hostel.Daemon.Nope","oneway":true}' \
	expect-silence 300 \
	call '{"method":"org.varlink.service.GetInfo"}'
check "oneway: no reply, not even an error" \
	sh -c "test \$(wc -l <'$T/out') -eq 1 && grep -q '\"product\"' '$T/out'"
vs raw '{"method":"org.varlink.service.GetInfo"}\0{"method":"io.hostel.Daemon.Status"}\0{"method":"x.y.Z"}\0' \
	recv recv recv
check "pipelined calls answered in order" sh -c "
	sed -n 1p '$T/out' | grep -q '\"product\"' &&
	sed -n 2p '$T/out' | grep -q '\"uptimeMs\"' &&
	sed -n 3p '$T/out' | grep -q InterfaceNotFound"
vs send '{"method":"io.hostel.Daemon.Status"}' shutdown recv expect-close
check "half-closed client still gets its reply" \
	grep -q '"uptimeMs"' "$T/out"

# ---- broken clients --------------------------------------------------------------
vs raw '{"method": nope}\0' expect-close
check "bad JSON: ProtocolError, then closed" has "$T/out" \
	'"error":"io.hostel.Daemon.ProtocolError"'
check "bad JSON reason says where" has "$T/out" 'invalid JSON at line 1'
still_serves "bad JSON"
vs raw '[1,2]\0' expect-close
check "not an object: ProtocolError" has "$T/out" \
	'{"parameters":{"reason":"a message must be a JSON object"},"error":"io.hostel.Daemon.ProtocolError"}'
vs send '{"parameters":{}}' expect-close
check "no method: ProtocolError" has "$T/out" 'the message has no \"method\"'
vs send '{"method":"io.hostel.Daemon.Status","more":"yes"}' expect-close
check "flag of the wrong type: ProtocolError" has "$T/out" \
	'\"more\" must be a boolean'
still_serves "protocol errors"
# An oversize call is skipped to its NUL, answered ValueTooLarge with
# its size, and the connection reads on.
vs junk 17000000 raw '\0' recv call '{"method":"io.hostel.Daemon.Status"}'
check "oversize message: ValueTooLarge with its size and the limit" \
	has "$T/out" \
	'{"parameters":{"value":"argument","size":17000000,"limit":16777216},"error":"io.hostel.Call.ValueTooLarge"}'
check "the connection goes on after an oversize message" \
	grep -q '"uptimeMs"' "$T/out"
check "oversize is logged" has "$LOG" \
	"a call of 17000000 bytes, more than the 16777216 a message may have"
vs junk 17000000 shutdown expect-close
check "a client that leaves inside one gets what it sent, then closed" \
	has "$T/out" \
	'{"parameters":{"value":"argument","size":17000000,"limit":16777216},"error":"io.hostel.Call.ValueTooLarge"}'
still_serves "an oversize message"
vs raw '{"method":"io.hostel.Dae'
check "half message, then disconnect" wait_for 5 \
	has "$LOG" "client left in the middle of a message (24 bytes"
still_serves "a half message"
vs flood 40000 '{"method":"org.varlink.service.GetInterfaceDescription","parameters":{"interface":"org.varlink.service"}}' \
	wait-hup
check "client that never reads is dropped" \
	has "$LOG" "the client does not read its replies"
still_serves "a client that never reads"

# ---- refusing to start -------------------------------------------------------------
"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$STATE" 2>"$T/err"
check "second daemon on a live socket exits 1" test $? -eq 1
check "second daemon says why" has "$T/err" \
	"another hosteld is already listening on $SOCK"
: >"$T/plain"
"$HOSTELD" --foreground --socket "$T/plain" --state-dir "$STATE" 2>"$T/err"
rc=$?
check "a non-socket file is not replaced" \
	sh -c "test $rc -eq 1 && grep -q 'is not a socket' '$T/err' && test -f '$T/plain'"
printf 'socket = /tmp/x.sock\nlog-level = info\nbogus = 1\n' >"$T/bad.conf"
"$HOSTELD" --foreground --config "$T/bad.conf" --state-dir "$STATE" \
	2>"$T/err"
check "config error at startup exits 1" test $? -eq 1
check "config error names file and line" \
	has "$T/err" "$T/bad.conf:3: unknown key 'bogus'"
"$HOSTELD" --bogus 2>/dev/null
check "unknown option exits 2" test $? -eq 2
"$HOSTELD" --version | grep -q '^hosteld [0-9]'
check "--version" test $? -eq 0
"$HOSTELD" --help | grep -q -- '--state-dir DIR'
check "--help" test $? -eq 0

# ---- SIGHUP reload -------------------------------------------------------------------
printf 'log-level = debug\nsocket = %s/elsewhere.sock\n' "$T" >"$CONF"
kill -HUP "$DPID"
check "SIGHUP: log-level change applied and logged" wait_for 5 \
	has "$LOG" "log-level changed from info to debug"
check "SIGHUP: socket change needs a restart" wait_for 5 \
	has "$LOG" "socket changed to $T/elsewhere.sock; still using $SOCK until hosteld is restarted"
alive "$SOCK"
check "debug logging is live after reload" wait_for 5 \
	has "$LOG" "<7>connection"
printf 'log-level = debug\n\nnope = 1\n' >"$CONF"
kill -HUP "$DPID"
check "SIGHUP with a bad file keeps the configuration" wait_for 5 \
	has "$LOG" "reload failed, keeping the current configuration: $CONF:3: unknown key 'nope'"
still_serves "a bad reload"

# ---- SIGTERM -------------------------------------------------------------------------
"$SEND" -t 10000 "$SOCK" call '{"method":"io.hostel.Daemon.Status"}' \
	expect-close >"$T/idle" 2>&1 &
IDLE=$!
wait_for 5 grep -q uptimeMs "$T/idle"
kill -TERM "$DPID"
wait "$DPID"
check "SIGTERM: exit status 0" test $? -eq 0
PIDS=
check "SIGTERM: socket file removed" test ! -e "$SOCK"
wait "$IDLE"
check "SIGTERM: idle client is closed cleanly" test $? -eq 0
check "SIGTERM: logged" \
	grep -q 'stopping ([1-9][0-9]* open connection(s))' "$LOG"
"$HOSTEL" --socket "$SOCK" status 2>/dev/null
check "status after stop exits 69" test $? -eq 69

# ---- stale socket, detaching -----------------------------------------------------------
S2=$T/d2.sock
"$HOSTELD" --socket "$S2" --state-dir "$STATE" 2>"$T/log2"
check "without --foreground: returns 0 once ready" test $? -eq 0
check "detached daemon serves" alive "$S2"
P2=$("$HOSTEL" --socket "$S2" status --json |
	sed -n 's/.*"pid":\([0-9]*\).*/\1/p')
PIDS="$PIDS $P2"
kill -KILL "$P2"
check "SIGKILL leaves a stale socket file" wait_for 5 \
	sh -c "! kill -0 $P2 && test -S '$S2'"
"$HOSTELD" --socket "$S2" --state-dir "$STATE" 2>"$T/log2"
check "stale socket is replaced" alive "$S2"
check "stale socket removal is logged" has "$T/log2" \
	"removed stale socket $S2"
P2=$("$HOSTEL" --socket "$S2" status --json |
	sed -n 's/.*"pid":\([0-9]*\).*/\1/p')
PIDS="$PIDS $P2"
kill -TERM "$P2"
check "detached daemon stops on SIGTERM" wait_for 10 test ! -e "$S2"

# ---- out of file descriptors ------------------------------------------------------------
S3=$T/d3.sock
(ulimit -n 32 && exec "$HOSTELD" --foreground --socket "$S3" \
	--state-dir "$STATE") 2>"$T/log5" &
P3=$!
PIDS="$PIDS $P3"
wait_for 20 alive "$S3"
HOLD=
# Holders stay until they are killed (as above, no race with a slow start).
for i in $(seq 1 40); do
	"$SEND" -t 120000 "$S3" expect-silence 120000 >/dev/null 2>&1 &
	HOLD="$HOLD $!"
done
check "EMFILE: accept failure is logged" wait_for 20 \
	has "$T/log5" "accept: Too many open files"
for p in $HOLD; do
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
done
check "EMFILE: serves again once descriptors are free" \
	wait_for 10 alive "$S3"
kill -TERM "$P3"
wait "$P3"
check "EMFILE: clean exit" test $? -eq 0

# ---- systemd: socket activation, notify, watchdog ----------------------------------------
A=$T/act.sock
printf 'log-level = info\n' >"$T/act.conf"
: >"$T/sd"
"$FAKESD" --listen "$A" --notify "$T/notify.sock" --watchdog-usec 100000 \
	-- "$HOSTELD" --state-dir "$STATE" --config "$T/act.conf" \
	>"$T/sd" 2>"$T/log3" &
SD=$!
PIDS="$PIDS $SD"
check "activated: READY=1 with STATUS" wait_for 20 \
	has "$T/sd" "READY=1 STATUS=Listening on $A"
"$HOSTEL" --socket "$A" status --json >"$T/status" 2>&1
check "activated: serves on the passed socket" \
	has "$T/status" "\"socket\":\"$A\""
check "activated: WATCHDOG=1 pings" wait_for 5 has "$T/sd" "WATCHDOG=1"
kill -HUP "$SD"
check "activated: SIGHUP sends RELOADING=1 with MONOTONIC_USEC" \
	wait_for 5 grep -q '^RELOADING=1 MONOTONIC_USEC=[0-9]' "$T/sd"
check "activated: READY=1 again after the reload" wait_for 5 \
	sh -c "test \$(grep -c '^READY=1' '$T/sd') -eq 2"
kill -TERM "$SD"
wait "$SD"
check "activated: exits 0 on SIGTERM (not detached)" test $? -eq 0
check "activated: STOPPING=1 sent" has "$T/sd" "STOPPING=1"
check "activated: exit seen by the manager" has "$T/sd" "EXIT=0"

# The background job truncates $T/sd only once it runs: empty it here, or
# the wait below may see the last run's READY=1 (a race under load).
: >"$T/sd"
"$FAKESD" --listen "$T/other.sock" --listen "$T/act2.sock" \
	--fdnames other:varlink --notify "@hostel-test-$$" \
	-- "$HOSTELD" --foreground --state-dir "$STATE" >"$T/sd" 2>"$T/log4" &
SD=$!
PIDS="$PIDS $SD"
check "abstract NOTIFY_SOCKET receives READY=1" wait_for 20 \
	has "$T/sd" "READY=1"
"$HOSTEL" --socket "$T/act2.sock" status --json >"$T/status" 2>&1
check "several fds: the one named varlink is used" \
	has "$T/status" "\"socket\":\"$T/act2.sock\""
kill -HUP "$SD"
check "no --config: SIGHUP says so" wait_for 5 \
	has "$T/log4" "no configuration file (--config) to reload"
kill -TERM "$SD"
wait "$SD"
check "several fds: clean exit" test $? -eq 0
PIDS=

# ---- sanitizers and stray errors ------------------------------------------------------------
for f in "$LOG" "$T/log2" "$T/log3" "$T/log4" "$T/log5"; do
	if grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$f"; then
		not_ok "no sanitizer report in $(basename "$f")"
		cat "$f" >&2
	fi
done

tap_finish "$LOG"
