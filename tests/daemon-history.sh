#!/bin/sh
# daemon-history.sh - hosteld's event history end to end: daemon.started
# at start, `hostel logs` (text, --json, filters, --since), `hostel logs
# -f` following a new event (SIGHUP -> daemon.reloaded) and ending when
# the daemon stops, a restart showing daemon.stopped then a new
# daemon.started, settings applied on reload, recovery of a call left
# open by a killed daemon, and refusing a corrupt or newer database.
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when the
# programs are not built.  KEEP=1 keeps the temporary directory.

set -u

B=${HOSTEL_BUILDDIR:-.}
NAME=daemon-history
. "${HOSTEL_SRCDIR:-$(dirname "$0")/..}/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
SEND=$B/tests/varlink-send
need_programs "$HOSTELD" "$HOSTEL" "$SEND"

tap_tmpdir

alive() {
	"$HOSTEL" --socket "$1" status >/dev/null 2>&1
}
# kinds FILE: the kinds of `hostel logs` text output, space-separated.
kinds() {
	awk '{printf "%s ", $4}' "$1"
}
# logs ARGS...: `hostel logs` on our socket into $T/out.
logs() {
	"$HOSTEL" --socket "$SOCK" logs "$@" >"$T/out" 2>"$T/err"
}

SOCK=$T/h.sock
STATE=$T/state
CONF=$T/hostel.conf
LOG=$T/hosteld.log
printf 'log-level = info\n' >"$CONF"
DPID=
start() {
	"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$STATE" \
		--config "$CONF" 2>>"$LOG" &
	DPID=$!
	PIDS="$PIDS $DPID"
	wait_for 20 alive "$SOCK"
}

# ---- first start ------------------------------------------------------------
check "daemon starts" start
check "database and lock in the state directory" \
	sh -c "test -f '$STATE/hostel.db' && test -f '$STATE/hostel.lock'"
check "recovery count is logged" has "$LOG" "0 interrupted call(s) recovered"
logs
check "hostel logs exits 0" test $? -eq 0
check "daemon.started is event 1" grep -q '^1 [0-9T:.-]*Z - daemon.started {' \
	"$T/out"
check "and the only one" test "$(wc -l <"$T/out")" -eq 1
check "daemon.started names the pid" has "$T/out" "\"pid\":$DPID"
logs --json
check "--json: one object per event" \
	grep -q '^{"seq":1,"time":"[0-9T:.-]*Z","service":null,"call":null,"kind":"daemon.started","payload":{' \
	"$T/out"

# ---- following ------------------------------------------------------------------
"$HOSTEL" --socket "$SOCK" logs -f >"$T/follow" 2>"$T/follow.err" &
FPID=$!
PIDS="$PIDS $FPID"
check "-f prints the backlog" wait_for 10 has "$T/follow" "daemon.started"
stats_followers() {
	"$SEND" "$SOCK" call '{"method":"io.hostel.History.Stats"}' |
		grep -q "\"followers\":$1"
}
check "Stats counts the follower" wait_for 10 stats_followers 1
kill -HUP "$DPID"
check "-f follows a new event (SIGHUP: daemon.reloaded)" wait_for 10 \
	has "$T/follow" "daemon.reloaded {\"config\":\"$CONF\",\"status\":\"reloaded\"}"
printf 'log-level = info\ndatabase-synchronous = normal\nhistory-keep-events = 50\n' \
	>"$CONF"
kill -HUP "$DPID"
check "reload applies database-synchronous" wait_for 10 \
	has "$LOG" "database-synchronous is now normal"
check "the second reload is followed too" wait_for 10 \
	sh -c "test \$(grep -c daemon.reloaded '$T/follow') -eq 2"
"$SEND" "$SOCK" call '{"method":"io.hostel.History.Stats"}' >"$T/stats"
check "Stats: synchronous and retention as reloaded" \
	sh -c "grep -q '\"synchronous\":\"normal\"' '$T/stats' &&
		grep -q '\"keepEvents\":50,' '$T/stats'"
check "Stats: commits and latency" \
	grep -q '"lastSeq":3,"commits":[1-9]' "$T/stats"
kill -TERM "$DPID"
wait "$DPID"
check "SIGTERM: daemon exits 0" test $? -eq 0
wait "$FPID"
check "-f exits 0 when the daemon stops" test $? -eq 0
check "-f saw daemon.stopped last" \
	sh -c "tail -n 1 '$T/follow' | grep -q ' - daemon.stopped {\"uptimeMs\":'"
check "-f printed nothing on stderr" test ! -s "$T/follow.err"

# ---- restart ------------------------------------------------------------------------
check "daemon restarts on the same state" start
logs
check "restart: stopped, then a new started" test "$(kinds "$T/out")" = \
	"daemon.started daemon.reloaded daemon.reloaded daemon.stopped daemon.started "
check "restart: seqs 1..5" test "$(awk '{printf "%s ", $1}' "$T/out")" = \
	"1 2 3 4 5 "
check "restart: synchronous from the file" \
	sh -c "tail -n 1 '$T/out' | grep -q '\"synchronous\":\"normal\"'"
logs --kind daemon.stopped
check "--kind" test "$(kinds "$T/out")" = "daemon.stopped "
logs --since 4
check "--since" test "$(kinds "$T/out")" = "daemon.stopped daemon.started "
logs --kind 'daemon.*' --kind nothing.here --since 5
check "--kind FAMILY.* and several kinds" test "$(kinds "$T/out")" = \
	"daemon.started "
logs --since 99
check "--since past the end: no lines, exit 0" \
	sh -c "test $? -eq 0 && ! test -s '$T/out'"
logs no-such-service
check "a service without events: no lines, exit 0" \
	sh -c "test $? -eq 0 && ! test -s '$T/out'"
logs --kind 'not a kind'
check "bad kind: exit 1 and InvalidParameter" \
	sh -c "test $? -eq 1 && grep -q InvalidParameter '$T/err'"
logs --since 0
check "--since 0: usage error" test $? -eq 2
"$HOSTEL" --socket "$SOCK" logs --help >"$T/out"
check "logs --help" has "$T/out" "usage: hostel logs"
"$SEND" "$SOCK" call '{"method":"org.varlink.service.GetInfo"}' >"$T/out"
check "GetInfo lists io.hostel.History" has "$T/out" '"io.hostel.History"'
"$SEND" "$SOCK" describe io.hostel.History >"$T/out"
check "io.hostel.History IDL parses" \
	has "$T/out" "io.hostel.History: 2 methods, 2 errors, 1 types"

# ---- a killed daemon: its open call is interrupted at the next start ----------------
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null
if command -v sqlite3 >/dev/null 2>&1; then
	sqlite3 "$STATE/hostel.db" "INSERT INTO events (time, service, call,
		kind, payload) VALUES (1, 'svc', 'c1', 'call.started',
		'{\"export\":\"run\"}')" 2>"$T/err"
	check "a call left open (sqlite3)" test $? -eq 0
	check "restart after SIGKILL" start
	check "one interrupted call recovered" \
		has "$LOG" "1 interrupted call(s) recovered"
	logs --call c1
	check "the call ends with call.interrupted" \
		test "$(kinds "$T/out")" = "call.started call.interrupted "
	check "interrupted carries the reason" \
		has "$T/out" '{"reason":"hosteld stopped while the call ran"}'
	logs --kind 'daemon.*' --since 5
	check "no daemon.stopped after a SIGKILL" test "$(kinds "$T/out")" = \
		"daemon.started daemon.started "
	check "daemon.started counts the interrupted call" \
		sh -c "tail -n 1 '$T/out' | grep -q '\"interrupted\":1'"
	kill -TERM "$DPID"
	wait "$DPID"
	check "clean stop" test $? -eq 0
	cp -r "$STATE" "$T/newer"
	sqlite3 "$T/newer/hostel.db" "PRAGMA user_version = 99"
	"$HOSTELD" --foreground --socket "$T/n.sock" --state-dir "$T/newer" \
		2>"$T/err"
	check "a newer database is refused: exit 1" test $? -eq 1
	check "and says why" has "$T/err" "newer than this hostel understands"
else
	ok "# SKIP open-call recovery: sqlite3 (Debian package sqlite3) not found"
	kill -TERM "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
fi

# ---- unusable databases ------------------------------------------------------------------
mkdir "$T/bad"
printf 'this is not a database, just some text of 40 bytes\n%.0s' \
	1 2 3 4 5 6 7 8 9 10 >"$T/bad/hostel.db"
"$HOSTELD" --foreground --socket "$T/b.sock" --state-dir "$T/bad" 2>"$T/err"
check "corrupt database: exit 1" test $? -eq 1
check "corrupt database: says so" \
	has "$T/err" "is not an SQLite database or is corrupt"
check "corrupt database: socket not left behind" test ! -e "$T/b.sock"
"$HOSTELD" --socket "$T/b.sock" --state-dir "$T/bad" 2>"$T/err"
check "detached start with a corrupt database: exit 1" test $? -eq 1
"$HOSTEL" --socket "$T/b.sock" logs 2>/dev/null
check "logs without a daemon: exit 69" test $? -eq 69

for f in "$LOG" "$T/err"; do
	if grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$f"; then
		not_ok "no sanitizer report in $(basename "$f")"
		cat "$f" >&2
	fi
done

tap_finish "$LOG"
