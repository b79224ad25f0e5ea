#!/bin/sh
# daemon-wasi-durable.sh - WASI resources across hosteld restarts (issue
# 22 point 2, runtime/wasi/durable.c): the calc reactor, once it printed
# (the adapter holds its stdio streams), is snapshotted at a graceful
# stop and restored, and prints again as a guest.stdout event of the new
# run; the files guest keeps writing its open file at its offset across
# a graceful restart (durability stop) and across SIGKILL (durability
# commit); a file deleted while hosteld is down does not fail the
# restore: the guest's next write fails, and the file is not made again.
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when the
# programs are not built.  KEEP=1 keeps the temporary directory.

set -u

B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
NAME=daemon-wasi-durable
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
G=$S/tests/guests/wasi
need_programs "$HOSTELD" "$HOSTEL"

tap_tmpdir
SOCK=$T/h.sock
STATE=$T/state
LOG=$T/hosteld.log
CALC='hostel:calc/api@0.1.0'
FILES='hostel:files/api@0.1.0'
mkdir -p "$T/data" "$T/crash"

start_daemon() {
	"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$STATE" \
		2>>"$LOG" &
	DPID=$!
	PIDS="$PIDS $DPID"
	wait_for 10 alive
}
stop_daemon() {
	kill -"$1" "$DPID"
	wait "$DPID" 2>/dev/null
}
# c SERVICE CALL: its result (or error) on stdout
c() {
	H call "$1" "$2" 2>&1
}
events() {
	H logs "$1" 2>&1
}
# has_event SERVICE TEXT: its history has it (the start's events commit
# with the loop's next batch: poll)
has_event() {
	wait_for $((10 * ${HOSTEL_SLOW:-1})) sh -c \
		"'$HOSTEL' --socket '$SOCK' logs '$1' 2>&1 | grep -qF -- '$2'"
}
# stdout SERVICE: its guest.stdout lines
stdout() {
	H logs --json --kind guest.stdout "$1" |
		sed -n 's/.*"line":"\([^"]*\)".*/\1/p'
}

check "hosteld starts" start_daemon
H deploy "$G/calc.component.wasm" --name calc --durability stop \
	>/dev/null 2>&1
check "deploy calc --durability stop" test $? -eq 0
c calc "$CALC#log-now(\"before\")" >/dev/null
H deploy "$G/files.component.wasm" --name files --durability stop \
	--dir "$T/data::/data" >/dev/null 2>&1
check "deploy files --durability stop with a preopen" test $? -eq 0
check "files: open-log" eq "$(c files "$FILES#open-log(\"/data/log.txt\", false)")" 0
check "files: write-log" eq "$(c files "$FILES#write-log(\"one \")")" 0
H deploy "$G/files.component.wasm" --name crashy --durability commit \
	--dir "$T/crash::/data" >/dev/null 2>&1
check "deploy files --durability commit" test $? -eq 0
c crashy "$FILES#open-log(\"/data/log.txt\", false)" >/dev/null
check "crashy: write-log" eq "$(c crashy "$FILES#write-log(\"acked \")")" 0

# ---- a graceful restart -------------------------------------------------
stop_daemon TERM
check "hosteld restarts" start_daemon
check "calc was restored" has_event calc "store.restored"
events calc >"$T/calc.log"
check "calc was snapshotted with its stdio handles" \
	has "$T/calc.log" "store.snapshotted"
check "no snapshot refused" test "$(grep -c 'snapshot_failed' "$T/calc.log")" -eq 0
c calc "$CALC#log-now(\"after\")" >/dev/null
check "the restored stdout stream prints on the new run's sink" \
	eq "$(stdout calc | tr '\n' ' ')" "log: before log: after "
check "files was restored" has_event files "store.restored"
check "its file goes on at its offset" \
	eq "$(c files "$FILES#write-log(\"two\")")/$(c files "$FILES#tell-log()")" "0/7"
check "the file holds both writes" eq "$(cat "$T/data/log.txt")" "one two"

# ---- SIGKILL under durability commit ---------------------------------------
stop_daemon KILL
check "hosteld starts after SIGKILL" start_daemon
check "crashy: its file goes on after the crash" \
	eq "$(c crashy "$FILES#write-log(\"again\")")" 0
check "crashy: the file holds what was acknowledged and after" \
	eq "$(cat "$T/crash/log.txt")" "acked again"

# ---- the file vanished while hosteld was down --------------------------------
created=$(events files | grep -c 'store.created')
stop_daemon TERM
rm -f "$T/data/log.txt"
check "hosteld restarts once more" start_daemon
# this start's store.created, then what came of its restore
wait_for $((10 * ${HOSTEL_SLOW:-1})) sh -c \
	"test \$('$HOSTEL' --socket '$SOCK' logs files 2>&1 | grep -c 'store.created') -gt $created"
events files | grep -E 'store\.(restored|restore_failed)' | tail -1 \
	>"$T/files.last"
check "a vanished file does not fail the restore" \
	has "$T/files.last" "store.restored"
check "no restore refused" \
	test "$(events files | grep -c 'restore_failed')" -eq 0
out=$(c files "$FILES#write-log(\"three\")")
check "the guest's next write fails ($out)" test "$out" != 0
check "and the file is not made again" test ! -e "$T/data/log.txt"
check "the store goes on: another file opens" \
	eq "$(c files "$FILES#open-log(\"/data/new.txt\", false)")/$(c files "$FILES#write-log(\"fine\")")" "0/0"
check "and holds its write" eq "$(cat "$T/data/new.txt")" "fine"

stop_daemon TERM
tap_finish "$LOG"
