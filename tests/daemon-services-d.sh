#!/bin/sh
# daemon-services-d.sh - services declared as files (issue 20 point 6):
# services.d/NAME.conf beside hostel.conf is deployed when hosteld
# starts and reconciled on SIGHUP: a new file creates its service, a
# changed one updates it, an unchanged one is left alone (its store
# keeps its state), a removed one (also while hosteld is down) removes
# it; a client cannot remove a file's service; a file with an error is
# logged with its path and line and the others go on; a client's
# service of the same name is never taken over.
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when the
# programs are not built.  KEEP=1 keeps the temporary directory.

set -u

B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
NAME=daemon-services-d
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
need_programs "$HOSTELD" "$HOSTEL"

tap_tmpdir
SOCK=$T/h.sock
STATE=$T/state
ETC=$T/etc
DIR=$ETC/services.d
LOG=$T/hosteld.log
mkdir -p "$DIR" "$T/lib"
cp "$S/tests/guests/ticker/ticker.wasm" "$S/tests/guests/hostile/hostile.wasm" "$T/lib/"
printf 'log-level = info\n' >"$ETC/hostel.conf"
start_daemon() {
	"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$STATE" \
		--config "$ETC/hostel.conf" 2>>"$LOG" &
	DPID=$!
	PIDS="$PIDS $DPID"
	wait_for 10 alive
}
# info NAME: the service's ServiceInfo as JSON
info() {
	H varlink io.hostel.Service.Inspect "{\"name\":\"$1\"}"
}
state_of() {
	H ps 2>/dev/null | awk -v n="$1" '$1 == n { print $2 }'
}
# reload: SIGHUP, then wait for the line that says it was read
reload() {
	r_before=$(grep -c "configuration reloaded" "$LOG")
	kill -HUP "$DPID"
	reloaded() {
		test "$(grep -c "configuration reloaded" "$LOG")" -gt "$r_before"
	}
	wait_for 10 reloaded
	sleep 0.2
}

cat >"$DIR/tick.conf" <<'EOF'
# a ticker, relative to the services.d folder
component = ../../lib/ticker.wasm
env = GREETING=hello
arg = --verbose
fuel-per-call = 100000000
deadline = 30s
EOF
cat >"$DIR/host.conf" <<EOF
component = $T/lib/hostile.wasm
memory = 1M
max-concurrent-calls = 4
autostart = yes
EOF
cat >"$DIR/bad.conf" <<'EOF'
component = /nowhere.wasm
memory = lots
EOF
printf 'component = /x.wasm\n' >"$DIR/.hidden.conf"
printf 'not a service file\n' >"$DIR/README"

"$HOSTELD" --check-config --config "$ETC/hostel.conf" >"$T/check.out" 2>&1
rc=$?
check "hosteld --check-config finds the bad file (exit $rc)" \
	test "$rc" -eq 1 -a -n "$(grep "$DIR/bad.conf:2: memory" "$T/check.out")"
check "and passes the good ones" \
	test "$(grep -c ': ok$' "$T/check.out")" -eq 3
mv "$DIR/bad.conf" "$T/bad.conf.away"
"$HOSTELD" --check-config --config "$ETC/hostel.conf" >"$T/check.out" 2>&1
check "without it: configuration ok (exit $?)" has "$T/check.out" "configuration ok"
mv "$T/bad.conf.away" "$DIR/bad.conf"

check "hosteld starts" start_daemon || {
	cat "$LOG" >&2
	exit 1
}
check "a file's service is deployed and running" \
	test "$(state_of tick)" = running
check "the other one too" test "$(state_of host)" = running
info tick >"$T/tick.json"
check "its config is the file's (env, args, limits)" \
	grep -q '"env":{"GREETING":"hello"}' "$T/tick.json"
check "its limits: fuelPerCall and deadline in ms" \
	grep -q '"deadlineMs":30000' "$T/tick.json"
check "it names its file" grep -q "\"source\":\"$DIR/tick.conf\"" "$T/tick.json"
check "a bad file is logged with its path and line" \
	has "$LOG" "services.d: $DIR/bad.conf:2: memory: expected a size"
check "and is not deployed" test -z "$(state_of bad)"
check "hidden files and other names are ignored" \
	test -z "$(grep -E 'hidden|README' "$LOG")"
H call tick 'start()' >/dev/null 2>&1
sleep 0.5
c1=$(H call tick 'count()' 2>/dev/null)
check "the ticker ticks ($c1)" test "${c1:-0}" -gt 0

# ---- a client cannot remove it -------------------------------------------------
H rm tick >"$T/rm.out" 2>&1
rc=$?
check "hostel rm of a file's service is refused (exit $rc)" test "$rc" -eq 5
check "with ServiceManaged naming the file" \
	has "$T/rm.out" "ServiceManaged"
check "and the service runs on" test "$(state_of tick)" = running

# ---- reload: unchanged, changed, new, removed, broken ---------------------------
cat >"$DIR/new.conf" <<EOF
component = $T/lib/hostile.wasm
autostart = no
EOF
sed -i 's/^memory = 1M$/memory = 2M/' "$DIR/host.conf"
reload
c2=$(H call tick 'count()' 2>/dev/null)
check "an unchanged file leaves its service alone (count $c1 -> $c2)" \
	test "${c2:-0}" -ge "${c1:-1}"
check "no tick: store not recreated" \
	test "$(grep -c 'service tick: started' "$LOG")" -eq 1
check "a changed file updates its service" \
	has "$LOG" "service host: updated from $DIR/host.conf"
info host >"$T/host.json"
check "with the new settings" grep -q '"memory":2097152' "$T/host.json"
check "and starts it again" test "$(state_of host)" = running
check "a new file creates its service" \
	has "$LOG" "service new: created from $DIR/new.conf"
check "autostart = no leaves it stopped" test "$(state_of new)" = stopped
rm "$DIR/new.conf"
printf 'component = %s\nbogus = 1\n' "$T/lib/hostile.wasm" >"$DIR/host.conf"
reload
check "a removed file removes its service" test -z "$(state_of new)"
check "said in the log" has "$LOG" "service new: removed ($DIR/new.conf is gone)"
check "a broken file is logged with its line" \
	has "$LOG" "services.d: $DIR/host.conf:2: unknown key 'bogus'"
check "and its service stays as it was" test "$(state_of host)" = running
check "with its settings" \
	test "$(info host | grep -c '"memory":2097152')" -eq 1

# ---- a client's service of the same name ----------------------------------------
H deploy "$T/lib/hostile.wasm" --name mine >/dev/null 2>&1
printf 'component = %s\n' "$T/lib/ticker.wasm" >"$DIR/mine.conf"
reload
check "a file never takes over a client's service" \
	has "$LOG" "services.d: $DIR/mine.conf: a service 'mine' made by a client exists"
check "which stays the client's" test -z "$(info mine | grep source)"
rm "$DIR/mine.conf"
reload
check "nor removes it when the file goes" test "$(state_of mine)" = running

# ---- removed while hosteld is down ------------------------------------------------
kill -TERM "$DPID"
wait "$DPID"
rm "$DIR/tick.conf"
check "hosteld restarts" start_daemon
check "a file removed while it was down removes its service" \
	test -z "$(state_of tick)"
check "the services of the other files are back" \
	test "$(state_of host)" = running

kill -TERM "$DPID" 2>/dev/null
wait
tap_finish "$LOG"
