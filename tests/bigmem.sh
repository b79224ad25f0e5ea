#!/bin/sh
# bigmem.sh - big memories and values near 2^31 (issue 21 point 2):
# under `hostel run` (the offline tools follow the spec's limits: a
# memory may grow to its type's maximum) a component grows its memory
# to 65,530 pages, just under 4 GiB, and the canonical ABI then lifts
# strings above 2^31 and at the very end of the memory, and refuses
# (with the suite's words for a host peer) one that passes the end and
# one of 2^31 bytes.  What the 4 GiB memory costs is what it touches:
# the peak RSS of each run is measured and must stay under 256 MiB (Valgrind itself takes about 60).
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 77 without
# python3 (the RSS measurement), 99 when hostel is not built.

set -u
B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
NAME=bigmem
. "$S/tests/tap.sh"
HOSTEL=$B/client/hostel
need_programs "$HOSTEL"
PY=${HOSTEL_PYTHON:-/usr/bin/python3}
test -x "$PY" || {
	echo "$NAME: $PY is missing" >&2
	exit 77
}
G=$S/tests/guests/bigmem/bigmem.wasm
tap_tmpdir
# run F: `hostel run --invoke 'F()'`: its output in $T/F.out, its status
# in rc, its peak RSS in kB in rss
run() {
	rss=$("$PY" -c '
import resource, subprocess, sys
with open(sys.argv[1], "w") as out:
    rc = subprocess.call(sys.argv[2:], stdout=out, stderr=subprocess.STDOUT)
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
' "$T/$1.out" "$HOSTEL" run --invoke "$1()" "$G")
	rc=${rss% *}
	rss=${rss#* }
	echo "# $1: exit $rc, peak RSS $rss kB"
}
run grow
check "memory.grow to 65,530 pages succeeds (old size 1)" \
	test "$rc" -eq 0 -a "$(cat "$T/grow.out")" = 1
check "and costs what it touches (${rss} kB < 256 MiB)" test "$rss" -lt 262144
run high
check "a string above 2^31 lifts" \
	test "$rc" -eq 0 -a "$(grep -o 'u{0}' "$T/high.out" | wc -l)" -eq 32
run edge
check "the last 16 bytes of the memory lift" \
	test "$rc" -eq 0 -a "$(grep -o 'u{0}' "$T/edge.out" | wc -l)" -eq 16
check "(${rss} kB)" test "$rss" -lt 262144
run oob
check "one past the end traps, out of bounds (exit $rc)" \
	test "$rc" -ne 0 -a -n "$(grep 'string pointer/length out of bounds of memory' "$T/oob.out")"
run long
check "2^31 bytes trap: the length limit (exit $rc)" \
	test "$rc" -ne 0 -a -n "$(grep 'string length exceeds the maximum' "$T/long.out")"

# ---- hosteld: hostel.conf's service-memory bounds it ------------------------
HOSTELD=$B/daemon/hosteld
SOCK=$T/h.sock
printf 'service-memory = 64M\n' >"$T/hostel.conf"
"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$T/state" \
	--config "$T/hostel.conf" 2>>"$T/log" &
PIDS="$PIDS $!"
check "hosteld starts with service-memory = 64M" wait_for 10 alive
H deploy "$G" --name big >/dev/null 2>&1
check "memory.grow past it answers -1" test "$(H call big 'grow()' 2>&1)" = -1
H deploy "$G" --name big2 --memory 4294574080 >/dev/null 2>&1
check "a service's own limits.memory wins: it grows" \
	test "$(H call big2 'grow()' 2>&1)" = 1
kill -TERM $PIDS 2>/dev/null
wait
tap_finish "$T/log"
