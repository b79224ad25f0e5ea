#!/bin/sh
# wasi-p3-files.sh - wasi:filesystem@0.3.0 for real (issue 21 point 4;
# runtime/wasi/filesystem_p3.c): tests/guests/wasi/p3files.wasm takes
# the first preopen of get-directories, writes files through
# write-via-stream, reads them back through read-via-stream, stats them,
# makes a directory, is refused a path out of the preopen, and lists
# the preopen through read-directory (records written at the store's
# scheduling steps, cm_host_end_defer); under
# `hostel run` and as a hosteld service, whose store keeps its 0.3
# descriptor, a file stream and a directory stream across SIGKILL.
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when the
# programs are not built.

set -u
B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
NAME=wasi-p3-files
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
need_programs "$HOSTELD" "$HOSTEL"
G=$S/tests/guests/wasi/p3files.wasm
tap_tmpdir
SOCK=$T/h.sock
LOG=$T/hosteld.log
D=$T/data
mkdir -p "$D"

# run CALL: `hostel run` with $D preopened as /, output in $out
run() {
	out=$("$HOSTEL" run --dir "$D::/" --invoke "$1" "$G" 2>&1)
}
run 'dirs()'
check "get-directories@0.3.0: one preopen" eq "$out" 1
run 'write-file("a.txt", "hello files\n")'
check "open-at (create, truncate) and write-via-stream: ok" eq "$out" 0
check "... the file holds the text" eq "$(cat "$D/a.txt")" "hello files"
run 'read-file("a.txt")'
check "read-via-stream gives it back" eq "$out" 'ok("hello files\n")'
run 'stat("a.txt")'
check "stat-at: a regular-file (5) of 12 bytes" eq "$out" 'ok((5, 12))'
# 300,000 bytes: many of the guest's 4 KiB reads
awk 'BEGIN { for (i = 0; i < 30000; i++) printf "line %04d\n", i % 10000 }' >"$D/big.txt"
run 'stat("big.txt")'
check "stat-at of a big file: 300000 bytes" eq "$out" 'ok((5, 300000))'
"$HOSTEL" run --dir "$D::/" --invoke 'read-file("big.txt")' "$G" >"$T/big.out" 2>&1
check "read-via-stream of 300000 bytes, in many reads" \
	test "$(wc -c <"$T/big.out")" -gt 300000 -a \
	"$(grep -c 'line 9999' "$T/big.out")" -ge 1
run 'read-file("nope")'
check "a missing file: err no-entry (1 + 19)" eq "$out" 'err(20)'
run 'mkdir("sub")'
check "create-directory-at: ok" eq "$out/$(test -d "$D/sub" && echo dir)" "0/dir"
run 'mkdir("sub")'
check "... again: exist (1 + 6)" eq "$out" 7
run 'stat("sub")'
check "stat-at of it: a directory (2)" test "${out#ok((2, }" != "$out"
run 'escape()'
check "open-at ../outside: not-permitted (1 + 30)" eq "$out" 31
run 'list-dir()'
check "read-directory: the entries with their types" \
	eq "$(echo "$out" | sed 's/^ok("//; s/")$//' | tr , '\n' | grep . | sort | tr '\n' ' ')" \
	"a.txt/5 big.txt/5 sub/2 "
# 150 more: many of the guest's reads of 16, and of the host's steps
i=0
while [ $i -lt 150 ]; do : >"$D/f$i"; i=$((i + 1)); done
run 'list-dir()'
check "read-directory of 153 entries, in many reads" \
	eq "$(echo "$out" | tr , '\n' | grep -c '/5$')" 152
"$HOSTEL" run --invoke 'dirs()' "$G" >"$T/none.out" 2>&1
check "no preopen: get-directories is empty" eq "$(cat "$T/none.out")" 0

start_daemon() {
	"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$T/state" 2>>"$LOG" &
	DPID=$!
	PIDS="$PIDS $DPID"
	wait_for $((10 * ${HOSTEL_SLOW:-1})) alive
}
check "hosteld starts" start_daemon
H deploy "$G" --name files --dir "$D::/" >/dev/null 2>&1
check "as a service: write-file" \
	eq "$(H call files 'write-file("b.txt", "from the daemon")' 2>&1)" 0
check "... read-file" eq "$(H call files 'read-file("b.txt")' 2>&1)" \
	'ok("from the daemon")'
check "... the commits' images took the 0.3 descriptor (no store.snapshot_failed)" \
	eq "$(H logs --kind store.snapshot_failed files 2>&1 | grep -c snapshot_failed)" 0
# a file stream and a directory stream kept open across the images
check "open-log: a write-via-stream kept open" \
	eq "$(H call files 'open-log("log.txt")' 2>&1)" 0
check "log: a line through it" eq "$(H call files 'log("one\n")' 2>&1)" 0
check "list-some(2): a read-directory kept open after 2 entries" \
	eq "$(H call files 'list-some(2)' 2>&1)" 2
check "... the commits' images took both streams (no store.snapshot_failed)" \
	eq "$(H logs --kind store.snapshot_failed files 2>&1 | grep -c snapshot_failed)" 0
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null
check "hosteld starts after SIGKILL" start_daemon
check "the kept file stream came back: log writes on at its offset" \
	eq "$(H call files 'log("two\n")' 2>&1)/$(H call files 'close-log()' 2>&1)" "0/0"
check "... the file holds both lines" eq "$(cat "$D/log.txt")" "one
two"
n=$(ls -A "$D" | wc -l)
check "the kept directory stream came back past its 2 entries ($n in all)" \
	eq "$(H call files 'list-rest()' 2>&1)" $((n - 2))
check "the store's preopen descriptor came back: read-file" \
	eq "$(H call files 'read-file("b.txt")' 2>&1)" 'ok("from the daemon")'
check "read-directory as a service (the entries written at service turns)" \
	eq "$(H call files 'list-dir()' 2>&1 | tr , '\n' | grep -c '/5$')" \
	"$(find "$D" -maxdepth 1 -type f | wc -l)"
# a kept stream whose file vanished across the restart comes back lost
H call files 'open-log("gone.txt")' >/dev/null 2>&1
H call files 'log("x\n")' >/dev/null 2>&1
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null
rm -f "$D/gone.txt"
check "hosteld starts after SIGKILL (the file gone)" start_daemon
check "the stream of a vanished file: its write is dropped, the result no-entry" \
	eq "$(H call files 'log("y\n")' 2>&1)/$(H call files 'close-log()' 2>&1)" "101/20"
check "... not created again" test ! -e "$D/gone.txt"
check "no restore failed" \
	eq "$(H logs --kind store.restore_failed files 2>&1 | grep -c restore_failed)" 0
kill -TERM "$DPID"
wait "$DPID" 2>/dev/null
tap_finish "$LOG"
