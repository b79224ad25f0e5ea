#!/bin/sh
# daemon-durable.sh - durable stores, first increment (issue 22): a
# service of durability "stop" is snapshotted when hosteld stops
# gracefully (SIGTERM) and restored when it starts again, so the demo
# counter goes on counting; one of durability "none" starts from 0; a
# snapshot taken on request (hostel snapshot) is what a SIGKILL falls
# back to (what came after it is lost); a snapshot of another component
# (a services.d file that changed its component) is refused, with
# store.restore_failed in the history, and the store is fresh.  The
# ticker, parked on a clock wait between ticks (live async state: a
# task, its thread, a waitable set, a subtask, a pending host call),
# keeps counting across a graceful restart with no call to start it
# again: its count goes on from where it was (a fresh ticker stays 0).
# Durability "commit": the values guest (a memory that grows) keeps its
# state across SIGKILL with no snapshot taken on request; each call adds
# a delta of the pages it changed (one or two for a short echo, not the
# memory), `hostel ps` counts them, and `hostel snapshot` folds them into
# a full one.  (tests/daemon-crash.sh kills it under load.)  With
# snapshot-interval (a services.d file's), a stop service is snapshotted
# after it ran, so a SIGKILL comes back to that.  A ticker of
# durability commit comes back from SIGKILL at least at the count a call
# was told before the kill, and ticks on with no call to start it.
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when the
# programs are not built.  KEEP=1 keeps the temporary directory.

set -u

B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
NAME=daemon-durable
TICKER=$S/tests/guests/ticker/ticker.wasm
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
MK=$B/tests/guests/mkcomponent
need_programs "$HOSTELD" "$HOSTEL" "$MK"

tap_tmpdir
SOCK=$T/h.sock
STATE=$T/state
ETC=$T/etc
LOG=$T/hosteld.log
mkdir -p "$ETC/services.d"
"$MK" counter "$T/counter.wasm" || exit 99
"$MK" names "$T/names.wasm" || exit 99
printf 'log-level = info\n' >"$ETC/hostel.conf"
printf 'component = %s\ndurability = stop\n' "$T/counter.wasm" \
	>"$ETC/services.d/filed.conf"
printf 'component = %s\ndurability = stop\nsnapshot-interval = 1s\n' \
	"$T/counter.wasm" >"$ETC/services.d/periodic.conf"

start_daemon() {
	"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$STATE" \
		--config "$ETC/hostel.conf" 2>>"$LOG" &
	DPID=$!
	PIDS="$PIDS $DPID"
	wait_for 10 alive
}
stop_daemon() {
	kill -"$1" "$DPID"
	wait "$DPID" 2>/dev/null
}
inc() {
	H call "$1" 'inc()' 2>&1
}
# events SERVICE: its history, one event a line
events() {
	H logs "$1" 2>&1
}
has_events() {
	events "$1" | grep -q "$2"
}

check "hosteld starts" start_daemon
H deploy "$T/counter.wasm" --name durable --durability stop >/dev/null 2>&1
check "deploy --durability stop" test $? -eq 0
H deploy "$T/counter.wasm" --name volatile --durability none >/dev/null 2>&1
check "deploy --durability none" test $? -eq 0
H deploy "$T/counter.wasm" --name defaulted >/dev/null 2>&1
check "deploy with the default durability" test $? -eq 0
out=$(H deploy "$T/counter.wasm" --name bad --durability always 2>&1)
check "an unknown durability is refused" eq "$(echo "$out" | grep -c 'durability')" 1
for i in 1 2 3; do
	inc durable >/dev/null
	inc volatile >/dev/null
	inc filed >/dev/null
	inc defaulted >/dev/null
done
check "the counters count" eq "$(inc durable)/$(inc volatile)/$(inc filed)/$(inc defaulted)" "4/4/4/4"
check "ps shows the durability" test -n "$(H ps | grep -E '^durable +running .* stop ')"
check "ps shows none" test -n "$(H ps | grep -E '^volatile +running .* none ')"
check "ps shows commit for the default" test -n "$(H ps | grep -E '^defaulted +running .* commit ')"
H deploy "$TICKER" --name ticker --durability stop >/dev/null 2>&1
check "deploy the ticker" test $? -eq 0
H call ticker 'start()' >/dev/null 2>&1
count() {
	H call ticker 'count()' 2>/dev/null
}
ticked() {
	test "$(count)" -ge "$1" 2>/dev/null
}
check "the ticker ticks" wait_for $((10 * ${HOSTEL_SLOW:-1})) ticked 3

# ---- a graceful restart -----------------------------------------------------
before=$(count)
stop_daemon TERM
check "hosteld restarts" start_daemon
check "the ticker counts on from $before, not from 0" \
	wait_for $((10 * ${HOSTEL_SLOW:-1})) ticked $((before + 2))
check "the ticker's store was restored" has_events ticker store.restored
check "durability stop: the counter goes on" eq "$(inc durable)" 5
check "durability none: a fresh store" eq "$(inc volatile)" 1
check "a services.d file's durability" eq "$(inc filed)" 5
check "the default (commit): the counter goes on" eq "$(inc defaulted)" 5
events durable >"$T/durable.log"
check "store.snapshotted at the stop" has "$T/durable.log" "store.snapshotted"
check "store.restored at the start" has "$T/durable.log" "store.restored"
check "no snapshot of a none service" test "$(events volatile | grep -c 'store.snapshot')" -eq 0
check "ps shows the last snapshot" test -z "$(H ps | grep -E '^durable ' | grep -E ' stop +- ')"

# ---- a snapshot on request, then a crash ------------------------------------
inc durable >/dev/null # 6
out=$(H snapshot durable 2>&1)
echo "$out" >"$T/snap.out"
check "hostel snapshot" has "$T/snap.out" "snapshot of durable:"
inc durable >/dev/null # 7: lost by the crash
stop_daemon KILL
check "hosteld starts after SIGKILL" start_daemon
check "SIGKILL: the last snapshot comes back (what came after is lost)" \
	eq "$(inc durable)" 7

# ---- the component changed: the snapshot is refused --------------------------
printf 'component = %s\ndurability = stop\n' "$T/names.wasm" \
	>"$ETC/services.d/filed.conf"
r_before=$(grep -c "configuration reloaded" "$LOG")
kill -HUP "$DPID"
reloaded() {
	test "$(grep -c "configuration reloaded" "$LOG")" -gt "$r_before"
}
wait_for 10 reloaded
sleep 0.2
events filed >"$T/filed.log"
check "a snapshot of another component: store.restore_failed" \
	has "$T/filed.log" "store.restore_failed"
check "the reason names the component" has "$T/filed.log" "the snapshot is of component"
check "and the store is fresh" eq "$(H call filed 'get()' 2>&1)" 0
check "the refusal is logged" has "$LOG" "snapshot refused, a fresh store"

# ---- durability stop with snapshot-interval ------------------------------------
interval_snaps() {
	events periodic | grep -c 'store.snapshotted.*interval'
}
# (each start made it dirty: earlier intervals may have snapshotted it;
# and a slow call, under Valgrind, lets one land between two of the
# increments: the snapshot wanted is one after the last call returned)
for i in 1 2 3; do
	inc periodic >/dev/null
done
snapped() {
	events periodic >"$T/periodic.log"
	last_snap=$(grep -n 'store.snapshotted.*interval' "$T/periodic.log" |
		tail -n 1 | cut -d: -f1)
	last_call=$(grep -n 'call.returned' "$T/periodic.log" |
		tail -n 1 | cut -d: -f1)
	test -n "$last_snap" && test "${last_call:-0}" -lt "$last_snap"
}
check "snapshot-interval: a snapshot within the interval after calls" \
	wait_for $((5 * ${HOSTEL_SLOW:-1})) snapped
stop_daemon KILL
check "hosteld starts after SIGKILL" start_daemon
check "the interval's snapshot comes back after SIGKILL" eq "$(inc periodic)" 4
check "store.restored says up to which event" \
	sh -c "'$HOSTEL' --socket '$SOCK' logs periodic 2>&1 | grep 'store.restored' | tail -n 1 | grep -q upto"
sleep 1.5 # the interval's snapshot of that call
p1=$(interval_snaps)
sleep 2.2
p2=$(interval_snaps)
check "an idle store is not snapshotted again ($p1 -> $p2)" eq "$p2" "$p1"

# ---- durability commit -------------------------------------------------------
VALUES=$S/tests/guests/values/values.wasm
db() {
	sqlite3 -readonly -cmd '.timeout 5000' "$STATE/hostel.db" "$1"
}
H deploy "$VALUES" --name mem --durability commit >/dev/null 2>&1
check "deploy --durability commit" test $? -eq 0
H call mem 'make(300000)' >/dev/null 2>&1
H call mem 'echo("kept")' >/dev/null 2>&1
calls=$(H call mem 'calls()' 2>&1)
check "the values guest counts its calls ($calls)" eq "$calls" 2
if command -v sqlite3 >/dev/null 2>&1; then
	d0=$(db "SELECT count(*) FROM store_deltas WHERE service = 'mem'")
	big=$(db "SELECT max(size) FROM store_deltas WHERE service = 'mem'")
	H call mem 'echo("x")' >/dev/null 2>&1
	d1=$(db "SELECT count(*) FROM store_deltas WHERE service = 'mem'")
	# (a turn of the store that ran nothing more, in a later commit,
	# adds a delta of no pages)
	last=$(db "SELECT max(size) FROM store_deltas WHERE service = 'mem' AND n > $d0")
	check "a call adds a delta ($d0 -> $d1)" test "$d1" -gt "$d0"
	check "of the pages it changed: $last bytes for a short echo (a page is 65536; make's delta $big)" \
		test "$last" -le $((2 * 65536 + 4096)) -a "$big" -ge $((4 * 65536))
	# (the commit may hold other services' later events: upto is its last)
	check "the delta is in its call.returned's commit (upto at or past it)" \
		test "$(db "SELECT upto FROM store_deltas WHERE service = 'mem' ORDER BY n DESC LIMIT 1")" -ge \
		"$(db "SELECT max(seq) FROM events WHERE service = 'mem' AND kind = 'call.returned'")"
else
	H call mem 'echo("x")' >/dev/null 2>&1
fi
check "ps counts the deltas" test -n "$(H ps | grep -E '^mem +running .* commit +[0-9.]+[BKM]/[0-9]+[smh]\+[0-9]+')"
# the ticker under commit: its task, parked on a timer, rides every commit
H deploy "$TICKER" --name cticker --durability commit >/dev/null 2>&1
H call cticker 'start()' >/dev/null 2>&1
ccount() {
	H call cticker 'count()' 2>/dev/null
}
cticked() {
	test "$(ccount)" -ge "$1" 2>/dev/null
}
check "a ticker of durability commit ticks" wait_for $((10 * ${HOSTEL_SLOW:-1})) cticked 3
# A call longer than a turn: the commits the ticker's events make while
# hostile's spin() runs (until its deadline) find its thread stopped out
# of fuel, which passes by itself: no store.snapshot_failed within
# IMAGE_TRANSIENT_MS (daemon/durable.c).
H deploy "$S/tests/guests/hostile/hostile.wasm" --name spinner \
	--durability commit >/dev/null 2>&1
H call --deadline 1500 spinner 'spin()' >/dev/null 2>&1
check "a call longer than a turn records no store.snapshot_failed" sh -c "
	'$HOSTEL' --socket '$SOCK' logs --kind store.snapshot_failed spinner >'$T/spin.log' &&
	! grep -q . '$T/spin.log'"
# A call in flight across commits (gate.wasm's nap waits an hour: under
# the sanitizers the checks before the kill take over a minute) is in
# their images: the counts acknowledged beside it come back after
# SIGKILL (before, no commit had an image while it waited, and the
# crash came back to the store before the nap).
GATE=$S/tests/guests/async/gate.wasm
H deploy "$GATE" --name napper --durability commit >/dev/null 2>&1
H call napper 'nap(3600000)' >/dev/null 2>&1 &
NAP=$!
PIDS="$PIDS $NAP"
napping() {
	H logs --kind call.started napper 2>/dev/null | grep -qF '"export":"nap"'
}
wait_for $((10 * ${HOSTEL_SLOW:-1})) napping
works=""
for i in 1 2 3; do
	works="$works$(H call napper 'work()' 2>&1) "
done
check "beside a nap in flight, work() counts ($works)" eq "$works" "1 2 3 "
# Live exceptions (exnref in a global, a table, other exceptions'
# payloads: tests/guests/exn) are in a commit's image.
H deploy "$S/tests/guests/exn/exn.wasm" --name exns --durability commit >/dev/null 2>&1
for n in 1 2 3; do H call exns "keep($n)" >/dev/null 2>&1; done
H call exns 'keep-fn()' >/dev/null 2>&1
check "the exceptions guest keeps its exceptions (sum 12006)" \
	eq "$(H call exns 'sum()' 2>&1)" 12006
# A handle of a resource type the deny-by-default fallback made
# (wasi:sockets' network: a resource that is nothing) is in the image
# (before, every image of such a store was refused "a handle of host
# resource type network"): after SIGKILL the handle is still taken, so
# the next one the guest gets is 2.
H deploy "$S/tests/guests/deny/sockets.wasm" --name denied \
	--durability commit >/dev/null 2>&1
check "a denied interface's resource: net() gets handle 1" \
	eq "$(H call denied 'net()' 2>&1)" 1
# Background work longer than a turn (tests/guests/loop start-crunch:
# it returns, then its task crunches for seconds) is in the image of the
# commit of its return, where the fuel stopped it: after SIGKILL it goes
# on and ends with the value it would have had.  (Before, images were
# refused while it ran, and the kill came back to the store before it.)
LOOP=$S/tests/guests/loop/loop.wasm
CRUNCH=$((150000000 / ${HOSTEL_SLOW:-1}))
crunched=$("$HOSTEL" run --invoke "crunch($CRUNCH)" "$LOOP" 2>&1)
H deploy "$LOOP" --name cruncher --durability commit >/dev/null 2>&1
check "start-crunch() returns while its task crunches on" \
	eq "$(H call cruncher "start-crunch($CRUNCH)" 2>&1)" ""
# Calls in flight longer than a turn are in the image too, each with
# what is left of its fuel budget (before, images were refused while
# one ran): after SIGKILL crunch() goes on without its client and ends
# with its value; one past the service's deadline (counted again from
# the restore) is stopped as a deadline stops a call.
H deploy "$LOOP" --name longcall --durability commit >/dev/null 2>&1
H deploy "$LOOP" --name overdue --durability commit \
	--deadline $((3000 * ${HOSTEL_SLOW:-1})) >/dev/null 2>&1
H call longcall "crunch($CRUNCH)" >/dev/null 2>&1 &
H call overdue "crunch(4000000000)" >/dev/null 2>&1 &
running() {
	test "$("$HOSTEL" --socket "$SOCK" logs --kind call.started "$1" 2>/dev/null | grep -c '"export":"crunch')" -ge 1
}
wait_for 10 running longcall
wait_for 10 running overdue
sleep 0.5
H call exns 'count()' >/dev/null 2>&1 # a commit while both crunch
cbefore=$(ccount)
stop_daemon KILL
check "hosteld starts after SIGKILL" start_daemon
check "commit: the counts acknowledged beside a call in flight are back (work() is 4)" \
	eq "$(H call napper 'work()' 2>&1)" 4
check "store.restored counts the call in flight that goes on (calls 1)" sh -c "
	'$HOSTEL' --socket '$SOCK' logs --json --kind store.restored napper | tail -n 1 |
	grep -q '\"calls\": *1'"
check "and the log says so" grep -q "napper: 1 call(s) in flight at the image go on" "$LOG"
check "the call in flight is call.interrupted in the history" sh -c "
	'$HOSTEL' --socket '$SOCK' logs --kind call.interrupted napper | grep -q nap"
check "and no image of napper was refused" sh -c "
	'$HOSTEL' --socket '$SOCK' logs --kind store.snapshot_failed napper >'$T/napper.log' &&
	! grep -q . '$T/napper.log'"
check "commit: the denied interface's handle is back after SIGKILL (net() gets 2)" \
	eq "$(H call denied 'net()' 2>&1)" 2
check "and no image of denied was refused" sh -c "
	'$HOSTEL' --socket '$SOCK' logs --kind store.snapshot_failed denied >'$T/denied.log' &&
	! grep -q . '$T/denied.log'"
check "commit: live exceptions are back after SIGKILL (sum, count, the funcref one)" \
	eq "$(H call exns 'sum()' 2>&1)/$(H call exns 'count()' 2>&1)/$(H call exns 'call-kept()' 2>&1)" "12006/3/7"
check "and no image of exns was refused" sh -c "
	'$HOSTEL' --socket '$SOCK' logs --kind store.snapshot_failed exns >'$T/exns.log' &&
	! grep -q . '$T/exns.log'"
crunch_done() {
	test "$(H call cruncher 'runs()' 2>&1)" = 1
}
check "the crunching task went on from where the fuel stopped it, to the end" \
	wait_for $((30 * ${HOSTEL_SLOW:-1})) crunch_done
check "with the value it would have had ($crunched)" \
	eq "$(H call cruncher 'last()' 2>&1)" "$crunched"
check "the calls in flight stopped out of fuel came back with the image" sh -c "
	grep -q 'longcall: 1 call(s) in flight at the image go on' '$LOG' &&
	grep -q 'overdue: 1 call(s) in flight at the image go on' '$LOG'"
long_done() {
	test "$(H call longcall 'runs()' 2>&1)" = 1
}
check "the restored crunch() ran to its end, answering nobody" \
	wait_for $((30 * ${HOSTEL_SLOW:-1})) long_done
check "with the value it would have had ($crunched)" \
	eq "$(H call longcall 'last()' 2>&1)" "$crunched"
check "and the log says it returned" \
	grep -q 'longcall: a call restored in flight returned' "$LOG"
overdue_stopped() {
	grep -q 'overdue: a call restored in flight exceeded its deadline' "$LOG"
}
check "the restored call past its deadline was stopped" \
	wait_for $((20 * ${HOSTEL_SLOW:-1})) overdue_stopped
check "which poisoned the service (store.poisoned) and made its store anew" \
	sh -c "'$HOSTEL' --socket '$SOCK' logs overdue 2>&1 | grep -q 'store.poisoned.*deadline'"
cafter=$(ccount)
check "commit: the ticker comes back from SIGKILL at $cafter, at least its acknowledged $cbefore" \
	test "${cafter:-0}" -ge "${cbefore:-1}"
check "and ticks on with no call to start it again" \
	wait_for $((10 * ${HOSTEL_SLOW:-1})) cticked $((cbefore + 3))
check "commit: the store is back after SIGKILL, every acknowledged call in it" \
	eq "$(H call mem 'calls()' 2>&1)" 3
check "and the memory: echo still answers from a heap that grew" \
	eq "$(H call mem 'echo("again")' 2>&1)" '"again"'
events mem >"$T/mem.log"
check "store.restored says the deltas and upto" \
	sh -c "grep 'store.restored' '$T/mem.log' | grep -q 'upto'"
out=$(H snapshot mem 2>&1)
check "hostel snapshot under commit" eq "$(echo "$out" | grep -c 'snapshot of mem:')" 1
H call mem 'calls()' >/dev/null 2>&1 # a commit after the request
if command -v sqlite3 >/dev/null 2>&1; then
	echo "# mem: snapshot upto $(db "SELECT coalesce(upto, 'null') FROM snapshots WHERE service = 'mem'"), deltas (n:upto) $(db "SELECT group_concat(n || ':' || upto, ' ') FROM store_deltas WHERE service = 'mem'")"
	check "the full snapshot replaced the deltas before it" \
		test "$(db "SELECT count(*) FROM store_deltas WHERE service = 'mem' AND
			upto < (SELECT upto FROM snapshots WHERE service = 'mem')")" -eq 0 -a \
		"$(db "SELECT count(*) FROM snapshots WHERE service = 'mem' AND upto > 0")" -eq 1
fi

# ---- folds: the writer folds deltas into the snapshot (store/folds.h) -------
# Each echo of a new 100 KB string changes about two pages: a delta of
# about 130 KB.  Past max(the snapshot, 1 MiB) of deltas the history's
# writer folds them into the snapshot between batches (its upto moves
# on); the loop writes no compaction image, and the chain restores
# exactly after SIGKILL.
if command -v sqlite3 >/dev/null 2>&1; then
	H deploy "$VALUES" --name folder --durability commit >/dev/null 2>&1
	H call folder 'calls()' >/dev/null 2>&1
	up0=$(db "SELECT upto FROM snapshots WHERE service = 'folder'")
	for i in $(seq 1 24); do
		head -c 75000 /dev/urandom | base64 -w 0 >"$T/s.txt"
		H call --arg-file s="$T/s.txt" folder echo >/dev/null 2>&1
	done
	sleep 0.5 # the writer's gap after the last batch
	up1=$(db "SELECT upto FROM snapshots WHERE service = 'folder'")
	fd=$(db "SELECT count(*) || ' ' || coalesce(sum(size), 0) FROM store_deltas WHERE service = 'folder'")
	echo "# folder: snapshot upto $up0 -> $up1; deltas left (count bytes) $fd"
	check "folds: the snapshot took deltas in (its upto $up0 -> $up1)" \
		test "${up1:-0}" -gt "${up0:-0}"
	check "folds: the deltas left stay bounded (${fd#* } bytes in ${fd% *})" \
		test "${fd#* }" -le $((2 * 1048576)) -a "${fd% *}" -lt 24
	# (The images' kinds only, as below: the whole history is big.)
	check "folds: no compaction image from the loop" sh -c "
		'$HOSTEL' --socket '$SOCK' logs --kind store.snapshotted \
			--kind store.snapshot_failed folder >'$T/folder.log' &&
		! grep -q 'trigger.*compaction' '$T/folder.log'"
	stop_daemon KILL
	check "hosteld starts after SIGKILL (folds)" start_daemon
	check "folds: the folded chain restores every call" \
		eq "$(H call folder 'calls()' 2>&1)" 24
	check "folds: and it goes on (make(3))" \
		eq "$(H call folder 'make(3)' 2>&1)" '"abc"'
	# Only the two kinds: the folder's 24 echoes of 100 KB make its
	# whole history a few MB, seconds to read under memcheck.
	ev=$(H logs --kind store.restored --kind store.restore_failed folder 2>&1)
	nf=$(echo "$ev" | grep -c 'store.restore_failed')
	nr=$(echo "$ev" | grep -c 'store.restored')
	check "folds: store.restored, never restore_failed ($nr, $nf)" \
		test "$nf" -eq 0 -a "$nr" -ge 1
	test "$nf" -eq 0 -a "$nr" -ge 1 || echo "$ev" | sed 's/^/# /'
fi

# A graceful stop interrupts the calls under way rather than stopping
# them midway (which would poison the instance, so no stop image): the
# image holds them, each ends CallInterrupted for its client
# (call.interrupted), and the next start brings them back going on; a
# call that ran no guest code (at its instance's gate) ends cancelled.
# stopnap: Stop of a durability stop service; gated: hosteld's SIGTERM
# under commit.
H deploy "$GATE" --name stopnap --durability stop >/dev/null 2>&1
H deploy "$GATE" --name gated --durability commit >/dev/null 2>&1
for i in 1 2; do
	H call stopnap 'work()' >/dev/null 2>&1
	H call gated 'work()' >/dev/null 2>&1
done
# The nap and the hold outlast the clients that follow them (under
# Valgrind a client call takes about a second: HOSTEL_SLOW).
NAP_MS=$((3000 * ${HOSTEL_SLOW:-1}))
H call stopnap "nap($NAP_MS)" >"$T/sn.out" 2>"$T/sn.err" &
SN=$!
PIDS="$PIDS $SN"
started() { # SERVICE EXPORT: its call.started is in the history
	# the export's field: the bare name is in the service's ("stopnap")
	H logs --kind call.started "$1" 2>/dev/null | grep -qF "\"export\":\"$2\""
}
wait_for $((10 * ${HOSTEL_SLOW:-1})) started stopnap nap
H stop stopnap >/dev/null 2>&1
wait "$SN"
snrc=$?
check "Stop (durability stop): the nap under way ends CallInterrupted, exit 1" \
	eq "$snrc/$(grep -c CallInterrupted "$T/sn.err")" "1/1"
check "... call.interrupted in the history, no call.cancelled" sh -c "
	'$HOSTEL' --socket '$SOCK' logs stopnap >'$T/sn.log' 2>&1 &&
	grep -q 'call.interrupted' '$T/sn.log' && ! grep -q 'call.cancelled' '$T/sn.log'"
check "... the stop's snapshot took it (store.snapshotted, no refusal)" sh -c "
	grep -q 'store.snapshotted' '$T/sn.log' && ! grep -q 'store.snapshot_failed' '$T/sn.log'"
H start stopnap >/dev/null 2>&1
check "started again: the store is back (count() is 2)" \
	eq "$(H call stopnap 'count()' 2>&1)" 2
check "... and the nap with it, going on (store.restored calls 1)" sh -c "
	'$HOSTEL' --socket '$SOCK' logs --json --kind store.restored stopnap | tail -n 1 |
	grep -q '\"calls\": *1'"
napped() {
	grep -q 'stopnap: a call restored in flight returned' "$LOG"
}
check "... to its end, answering nobody" \
	wait_for $((15 * ${HOSTEL_SLOW:-1})) napped
H call gated "hold($NAP_MS)" >"$T/gh.out" 2>"$T/gh.err" &
GH=$!
wait_for $((10 * ${HOSTEL_SLOW:-1})) started gated hold
H call gated 'work()' >"$T/gw.out" 2>"$T/gw.err" &
GW=$!
PIDS="$PIDS $GH $GW"
wait_for $((10 * ${HOSTEL_SLOW:-1})) sh -c "
	'$HOSTEL' --socket '$SOCK' logs --kind call.started gated | grep -c '\"export\":\"work\"' | grep -qx 3"
stop_daemon TERM
wait "$GH"
ghrc=$?
wait "$GW"
gwrc=$?
check "SIGTERM (commit): the hold under way ends CallInterrupted" \
	eq "$ghrc/$(grep -c CallInterrupted "$T/gh.err")" "1/1"
check "... the work() at its gate, which ran no guest code, CallCancelled" \
	eq "$gwrc/$(grep -c CallCancelled "$T/gw.err")" "1/1"
check "hosteld restarts after a graceful stop" start_daemon
check "commit: and after a graceful stop" eq "$(H call mem 'calls()' 2>&1)" 4
check "gated: the store is back without the cancelled work() (count() is 2)" \
	eq "$(H call gated 'count()' 2>&1)" 2
held() {
	grep -q 'gated: a call restored in flight returned' "$LOG"
}
check "... the hold came back and goes on to its end" \
	wait_for $((15 * ${HOSTEL_SLOW:-1})) held
check "... and then the gate opens: work() counts on (3)" \
	eq "$(H call gated 'work()' 2>&1)" 3

stop_daemon TERM
tap_finish "$LOG"
