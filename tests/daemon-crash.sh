#!/bin/sh
# daemon-crash.sh - invariants 5 and 6 across crashes: hosteld is killed
# with SIGKILL while CRASH_CALLS calls are in flight (some ran, some run,
# most wait in the service's queue) and restarted on the same state.
# After each restart:
#   - every call the history shows started has exactly one terminal
#     event (over all rounds so far);
#   - every call whose client got its "started" reply is in the history,
#     and closed;
#   - every reply a client received before the kill is in the history as
#     that call's terminal event, with the same outcome (and for a
#     return, the same result): a reply is sent only once durable;
#   - the calls cut off end with call.interrupted, and as many as the
#     restarted daemon says it recovered.
#
# The core is crash_round, one kill-and-restart; CRASH_ITERATIONS rounds
# run (default 3, for make check; a crash loop sets e.g. 50).  Each call
# is a client process speaking raw varlink with "more", so it learns its
# call id at once ({"state": "started"}) and then gets the final reply.
# A round's calls are the counter's `inc`, but for one `spin` (an endless
# loop that only the per-call fuel limit stops, seconds later) at a place
# that varies from round to round: the calls queued before it end, the
# spin and the calls queued behind it are in flight when SIGKILL comes.
# The counter's images (durability commit, the default) hold the spin:
# after the restart it goes on under what was left of its budget and
# traps as it would have (the store is then made anew).
# A few calls answered before the burst make sure some replies were
# received whatever the daemon's write scheduling.
#
# Then durability "commit" (issue 22): a second counter, dctr, deployed
# with --durability commit, takes increments from CRASH_COMMIT_CLIENTS
# clients (default 4, each a loop of `hostel call dctr 'inc()'`) while
# hosteld is killed with SIGKILL at a random moment, CRASH_COMMIT_KILLS
# times (default 5; the crash loop, scripts/crash-loop, sets 50).  After
# every restart, with no replay: the counter (get()) equals the number of
# its increments whose call.returned is in the history, exactly; those
# results are 1..N, each once (the store never went back nor skipped);
# and every increment a client was told of is among them.
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when the
# programs are not built.  KEEP=1 keeps the temporary directory.

set -u

B=${HOSTEL_BUILDDIR:-.}
NAME=daemon-crash
. "${HOSTEL_SRCDIR:-$(dirname "$0")/..}/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
SEND=$B/tests/varlink-send
MK=$B/tests/guests/mkcomponent
need_programs "$HOSTELD" "$HOSTEL" "$SEND" "$MK"
if ! command -v sqlite3 >/dev/null 2>&1; then
	echo "$NAME: SKIP: sqlite3 (Debian package sqlite3) not found" >&2
	exit 77
fi

CRASH_ITERATIONS=${CRASH_ITERATIONS:-3}
CRASH_CALLS=${CRASH_CALLS:-100}
# Fuel of one call: `spin` burns all of it (seconds), so the calls queued
# behind it are surely in flight when the kill comes.
CRASH_FUEL=${CRASH_FUEL:-300000000}

tap_tmpdir

SOCK=$T/h.sock
STATE=$T/state
LOG=$T/hosteld.log
DPID=
start() {
	"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$STATE" \
		2>>"$LOG" &
	DPID=$!
	PIDS="$PIDS $DPID"
	wait_for 30 alive
}
# The events of the whole history as "CALL KIND RESULT" lines (RESULT
# only for call.returned), from `hostel logs --json`.
history_calls() {
	H logs --json --kind 'call.*' >"$T/events.json" || return 1
	sed -nE 's/^\{"seq":[0-9]+,"time":"[^"]*","service":("[^"]*"|null),"call":"([^"]*)","kind":"([^"]*)","payload":(.*)\}$/\2 \3 \4/p' \
		"$T/events.json" |
		awk '{ r = "-"
		       if ($2 == "call.returned") {
			       r = $3; sub(/^\{"results":/, "", r); sub(/\}$/, "", r)
		       }
		       print $1, $2, r }'
}
# finals ROUND: how many clients of the round got their final reply.
finals() {
	cat "$T/r$1".*.out 2>/dev/null | grep -vc '"continues":true'
}
# db SQL: a query on the live database, read-only (WAL lets a reader in
# beside the daemon's writer).  The kill is timed on what is durable, not
# on replies, which a busy daemon may write late.
db() {
	sqlite3 -readonly -cmd '.timeout 5000' "$STATE/hostel.db" "$1"
}
TERMINAL="'call.returned','call.trapped','call.cancelled','call.failed','call.interrupted'"
# counts BASE: "STARTED ENDED", the calls durably started and ended
# since seq BASE.
counts() {
	db "SELECT (SELECT count(*) FROM events WHERE seq > $1 AND
		kind = 'call.started'), (SELECT count(*) FROM events WHERE
		seq > $1 AND kind IN ($TERMINAL))" | tr '|' ' '
}
# in_flight BASE: every call of the round durably started (seq > BASE)
# and some not durably ended.
in_flight() {
	set -- $(counts "$1")
	test "$1" -eq "$CRASH_CALLS" -a "$2" -lt "$1"
}

# What each client of a round saw, as "CALL EXPECTED RESULT": EXPECTED is
# the terminal kind its final reply implies, or "open" when it only got
# the started reply (the kill came first); RESULT as in history_calls.
client_outcomes() {
	for f in "$T/r$1".*.out; do
		id=$(sed -n '1s/.*"callId":"\([^"]*\)".*/\1/p' "$f")
		test -n "$id" || continue
		last=$(sed -n '2p' "$f")
		res=-
		case $last in
		'') kind=open ;;
		*'"error":"io.hostel.Call.CallTrapped"'*) kind=call.trapped ;;
		*'"error":"io.hostel.Call.CallCancelled"'*) kind=call.cancelled ;;
		*'"error":"io.hostel.Call.CallInterrupted"'*) kind=call.interrupted ;;
		*'"error":'*) kind=call.failed ;;
		*'"state":"returned"'*)
			kind=call.returned
			res=$(printf '%s\n' "$last" |
				sed -n 's/.*"result":{"value":\([^,}]*\)}.*/\1/p')
			;;
		*) kind=unknown ;;
		esac
		echo "$id $kind $res"
	done
}

# backlog N: N connections wait to be accepted (ss(8) shows the accept
# queue of a listening socket as its Recv-Q); without ss, a pause.
backlog() {
	if command -v ss >/dev/null 2>&1; then
		test "$(ss -xlH src "$SOCK" | awk '{ print $3 }')" = "$1"
	else
		sleep 2
	fi
}

# crash_round ROUND: CRASH_CALLS calls, SIGKILL once some have been
# answered, restart, check.  The daemon is running before and after.
crash_round() {
	r=$1
	# Where the spin goes: from round to round, 0 to 20% of the calls
	# come before it.
	spin_at=$(((r * r * 7 + r * 3) % (CRASH_CALLS / 5 + 1)))
	recovered_before=$(grep -c 'interrupted call(s) recovered' "$LOG")
	# A few calls answered for sure before the burst: whatever the
	# daemon's write scheduling, some replies precede the kill.
	for k in 0 1 2; do
		"$SEND" -t 60000 "$SOCK" \
			send '{"method":"io.hostel.Call.Invoke","more":true,"parameters":{"service":"counter","export":"inc"}}' \
			recv recv >"$T/r$r.pre$k.out" 2>/dev/null
	done
	base=$(db "SELECT coalesce(max(seq), 0) FROM events")
	# The daemon is paused while the clients connect, so all the calls
	# arrive together and queue up: then they are all in flight at once.
	kill -STOP "$DPID"
	i=0
	CPIDS=
	while [ $i -lt "$CRASH_CALLS" ]; do
		if [ $i -eq "$spin_at" ]; then exp=spin; else exp=inc; fi
		"$SEND" -t 120000 "$SOCK" \
			send "{\"method\":\"io.hostel.Call.Invoke\",\"more\":true,\"parameters\":{\"service\":\"counter\",\"export\":\"$exp\"}}" \
			recv recv >"$T/r$r.$i.out" 2>/dev/null &
		CPIDS="$CPIDS $!"
		i=$((i + 1))
	done
	wait_for 30 backlog "$CRASH_CALLS"
	kill -CONT "$DPID"
	# Every call durably started, the spin and those behind it in
	# flight: now.
	wait_for 60 in_flight "$base"
	cut=$?
	kill -KILL "$DPID"
	set -- $(counts "$base")
	wait "$DPID" 2>/dev/null
	got=$(finals "$r")
	burst=$(cat "$T/r$r".[0-9]*.out 2>/dev/null | grep -vc '"continues":true')
	for p in $CPIDS; do
		wait "$p" 2>/dev/null
	done
	check "round $r: SIGKILL with $(($1 - $2)) calls in flight ($1 of $CRASH_CALLS started, $2 ended; spin at $spin_at)" \
		test "$cut" -eq 0
	check "round $r: hosteld restarts on the same state" start

	client_outcomes "$r" >"$T/r$r.clients"
	history_calls >"$T/r$r.history"
	check "round $r: the history can be read" test -s "$T/r$r.history"
	# Every started call has exactly one terminal event.
	awk '$2 == "call.started" { s[$1]++ }
	     $2 != "call.started" { t[$1]++ }
	     END { for (c in s) if (s[c] != 1 || t[c] != 1) print c, s[c], t[c]
		   for (c in t) if (!(c in s)) print c, "no start" }' \
		"$T/r$r.history" >"$T/r$r.bad"
	check "round $r: every started call ended exactly once" \
		test ! -s "$T/r$r.bad"
	# What each client saw against the history.
	awk 'NR == FNR { if ($2 == "call.started") s[$1] = 1
			 else { k[$1] = $2; res[$1] = $3 }
			 next }
	     { if (!($1 in s) || !($1 in k))
		       print $1, "missing from the history"
	       else if ($2 != "open" && ($2 != k[$1] || $3 != res[$1]))
		       print $1, "client saw", $2, $3, "history has", k[$1], res[$1] }' \
		"$T/r$r.history" "$T/r$r.clients" >"$T/r$r.mismatch"
	check "round $r: every call a client saw start is in the history, closed" \
		sh -c "! grep -q 'missing' '$T/r$r.mismatch'"
	check "round $r: every reply received is the call's durable terminal event" \
		sh -c "! grep -q 'client saw' '$T/r$r.mismatch'"
	check "round $r: clients saw $(wc -l <"$T/r$r.clients") call ids and got $got replies before the kill ($burst of the burst's)" \
		test "$got" -ge 3
	# The calls cut off: interrupted, as many as recovery reports.
	n_int=$(db "SELECT count(*) FROM events WHERE seq > $base AND
		kind = 'call.interrupted'")
	check "round $r: cut-off calls end as call.interrupted ($n_int)" \
		test "$n_int" -ge 1
	check "round $r: no client got a reply for an interrupted call" \
		test "$(awk 'NR == FNR { if ($2 == "call.interrupted") i[$1] = 1
				       next }
			       $2 != "open" && ($1 in i) { n++ }
			       END { print n + 0 }' "$T/r$r.history" \
			"$T/r$r.clients")" -eq 0
	recovered=$(grep 'interrupted call(s) recovered' "$LOG" | tail -n 1 |
		sed -n 's/.*; \([0-9]*\) interrupted call(s) recovered.*/\1/p')
	total=$(grep -c ' call.interrupted ' "$T/r$r.history")
	check "round $r: recovery reports what it closed ($recovered)" \
		test "$(grep -c 'interrupted call(s) recovered' "$LOG")" -gt \
		"$recovered_before" -a "${recovered:-x}" = \
		"$((total - INTERRUPTED))"
	INTERRUPTED=$total
}

"$MK" counter "$T/counter.wasm" || exit 99
check "hosteld starts" start
H deploy "$T/counter.wasm" --fuel "$CRASH_FUEL" >/dev/null 2>&1
check "deploy the counter (fuel $CRASH_FUEL per call)" test $? -eq 0
INTERRUPTED=0
round=1
while [ $round -le "$CRASH_ITERATIONS" ]; do
	crash_round $round
	round=$((round + 1))
done
# The spin each image held came back in flight (issue 22): under what
# was left of its fuel budget it traps "all fuel consumed" as it would
# have, which poisons the counter and makes its store anew, instead of
# spinning on with no budget at all.
restored_calls() {
	sed -n 's/.*: \([0-9]*\) call(s) in flight at the image go on.*/\1/p' \
		"$LOG" | awk '{ n += $1 } END { print n + 0 }'
}
restored_spent() {
	test "$(grep -c 'a call restored in flight trapped: wasm trap: all fuel consumed' "$LOG")" \
		-ge "$(restored_calls)"
}
check "the spins restored in flight ($(restored_calls)) came back with their fuel budgets" \
	test "$(restored_calls)" -ge 1
check "each trapped \"all fuel consumed\" after a restart" \
	wait_for 120 restored_spent
answers() { H call counter 'inc()' >"$T/out" 2>&1; }
check "after $CRASH_ITERATIONS crashes the service still answers" \
	wait_for 30 answers

# ---- durability commit: the counter survives SIGKILL exactly ---------------
CRASH_COMMIT_KILLS=${CRASH_COMMIT_KILLS:-5}
CRASH_COMMIT_CLIENTS=${CRASH_COMMIT_CLIENTS:-4}
# commit_client FILE: increments until the daemon goes; each value the
# client was told of, a line
commit_client() {
	while H call dctr 'inc()' >>"$1" 2>/dev/null; do :; done
}
# The results of dctr's durably returned increments, one per line.
inc_results() {
	# (IN, not a join: the subquery is built once, a join looked the
	# start up again for every row and took minutes past 10^4 events)
	db "SELECT json_extract(payload, '$.results') FROM events
		WHERE service = 'dctr' AND kind = 'call.returned' AND call IN
		(SELECT call FROM events WHERE service = 'dctr' AND
		 kind = 'call.started' AND
		 json_extract(payload, '$.export') = 'inc')"
}
# A random pause of 0.1 to 1.5 s (seeded by the round and the time),
# times HOSTEL_SLOW (clients under Valgrind take seconds a call).
pause() {
	sleep "$(awk -v r="$1" -v k="${HOSTEL_SLOW:-1}" 'BEGIN { srand(r * 7919 + srand()); printf "%.2f", k * (0.1 + rand() * 1.4) }')"
}
# durable_incs_past N: more than N increments of dctr are durable.
durable_incs_past() {
	test "$(inc_results | wc -l)" -gt "$1"
}
commit_round() {
	cr=$1
	CPIDS=
	i=0
	while [ "$i" -lt "$CRASH_COMMIT_CLIENTS" ]; do
		commit_client "$T/c$cr.$i.acks" &
		CPIDS="$CPIDS $!"
		i=$((i + 1))
	done
	# the kill comes at a random moment once the round has begun to
	# count: some increment of it durable
	wait_for $((30 * ${HOSTEL_SLOW:-1})) durable_incs_past "$LAST_N"
	pause "$cr"
	kill -KILL "$DPID"
	wait "$DPID" 2>/dev/null
	for p in $CPIDS; do
		wait "$p" 2>/dev/null
	done
	if ! start; then
		not_ok "commit $cr: hosteld restarts"
		return
	fi
	inc_results | sort -n >"$T/c$cr.results"
	durable=$(wc -l <"$T/c$cr.results")
	value=$(H call dctr 'get()' 2>&1)
	acked=$(cat "$T"/c"$cr".*.acks 2>/dev/null | wc -l)
	ACKED=$((ACKED + acked))
	if [ "$value" != "$durable" ]; then
		not_ok "commit $cr: the counter ($value) equals its durable increments ($durable)"
		COMMIT_BAD=$((COMMIT_BAD + 1))
	fi
	if ! seq 1 "$durable" | cmp -s - "$T/c$cr.results"; then
		not_ok "commit $cr: the durable increments returned 1..$durable, each once"
		COMMIT_BAD=$((COMMIT_BAD + 1))
	fi
	cat "$T"/c*.acks 2>/dev/null | LC_ALL=C sort | uniq -d >"$T/c$cr.dup"
	LC_ALL=C sort "$T/c$cr.results" >"$T/c$cr.sorted"
	cat "$T"/c*.acks 2>/dev/null | LC_ALL=C sort -u |
		LC_ALL=C comm -23 - "$T/c$cr.sorted" >"$T/c$cr.lost"
	if [ -s "$T/c$cr.dup" ] || [ -s "$T/c$cr.lost" ]; then
		not_ok "commit $cr: every increment acknowledged is durable, once ($(wc -l <"$T/c$cr.lost") lost, $(wc -l <"$T/c$cr.dup") twice)"
		COMMIT_BAD=$((COMMIT_BAD + 1))
	fi
	echo "# commit $cr: $durable durable increments, $acked acknowledged this round, counter $value"
	LAST_N=$durable
}

"$MK" counter "$T/dctr.wasm" || exit 99
H deploy "$T/dctr.wasm" --name dctr --durability commit >/dev/null 2>&1
check "deploy a counter with durability commit" test $? -eq 0
ACKED=0
COMMIT_BAD=0
LAST_N=0
round=1
while [ $round -le "$CRASH_COMMIT_KILLS" ]; do
	commit_round $round
	round=$((round + 1))
done
check "after $CRASH_COMMIT_KILLS SIGKILLs under load the counter equals its durable increments every time ($COMMIT_BAD mismatches)" \
	test "$COMMIT_BAD" -eq 0
check "the clients were told of $ACKED increments, $LAST_N are durable" \
	test "$ACKED" -gt 0 -a "$LAST_N" -ge "$ACKED"
check "the restores came from images (store.restored with upto)" \
	test "$(db "SELECT count(*) FROM events WHERE service = 'dctr' AND
		kind = 'store.restored' AND json_extract(payload, '$.upto') > 0")" -ge "$CRASH_COMMIT_KILLS"
kill -TERM "$DPID"
wait "$DPID"
check "clean stop" test $? -eq 0
if grep -qE 'AddressSanitizer|runtime error|LeakSanitizer' "$LOG"; then
	not_ok "no sanitizer report in the daemon log"
fi
tap_finish "$LOG"
