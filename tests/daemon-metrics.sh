#!/bin/sh
# daemon-metrics.sh - io.hostel.Daemon.GetMetrics, `hostel metrics` and
# `hostel top` (issue 20 point 5).  The text must pass a strict
# OpenMetrics parser (Debian's python3-prometheus-client, its
# openmetrics parser: TYPE/UNIT/HELP, _total counters, cumulative
# histograms with +Inf equal to _count, stateset and info rules, "# EOF"
# last) and its numbers must match the history: calls by outcome per
# service against the terminal events in hostel.db, events and the last
# sequence number against the events table, and a ticker's fuel,
# memory and pending host calls as it runs.
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 77 without
# sqlite3 or the parser, 99 when the programs are not built.  KEEP=1
# keeps the temporary directory.

set -u

B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
NAME=daemon-metrics
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
HOSTILE=$S/tests/guests/hostile/hostile.wasm
SLEEP=$S/tests/guests/async/sleep.wasm
TICKER=$S/tests/guests/ticker/ticker.wasm
# Debian's interpreter: its python3-prometheus-client (scripts/setup)
PY=${HOSTEL_PYTHON:-/usr/bin/python3}
need_programs "$HOSTELD" "$HOSTEL"
command -v sqlite3 >/dev/null 2>&1 || {
	echo "$NAME: sqlite3 is not installed" >&2
	exit 77
}
"$PY" -c 'import prometheus_client.openmetrics.parser' 2>/dev/null || {
	echo "$NAME: $PY has no prometheus_client (python3-prometheus-client)" >&2
	exit 77
}

tap_tmpdir
SOCK=$T/h.sock
STATE=$T/state
LOG=$T/hosteld.log
q() {
	sqlite3 -cmd '.timeout 5000' "$STATE/hostel.db" "$1"
}
# strict FILE: the OpenMetrics parser reads FILE whole; prints the
# number of families, or the parser's complaint
strict() {
	"$PY" - "$1" <<'EOF'
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
try:
    families = list(text_string_to_metric_families(open(sys.argv[1]).read()))
except Exception as e:
    print("invalid: %s" % e)
    sys.exit(1)
print(len(families))
EOF
}
# val FILE SAMPLE: the value of the sample line SAMPLE (name and labels,
# exactly as printed), empty if absent
val() {
	awk -v s="$2" 'substr($0, 1, length(s) + 1) == s " " { print $2; exit }' "$1"
}
scrape() {
	H metrics >"$1" 2>"$T/metrics.err"
}
svc() {
	printf '%s{service="%s"%s}' "$1" "$2" "${3:+,$3}"
}

"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$STATE" 2>>"$LOG" &
PIDS="$PIDS $!"
check "hosteld starts" wait_for 10 alive || {
	cat "$LOG" >&2
	exit 1
}
H deploy "$HOSTILE" --name hostile >/dev/null 2>&1
H deploy "$SLEEP" --name sl >/dev/null 2>&1

# ---- calls of every outcome -----------------------------------------------------
for i in 1 2 3; do H call hostile 'ping()' >/dev/null 2>&1; done
H call hostile 'boom()' >/dev/null 2>&1
H call hostile 'ping()' >/dev/null 2>&1
H call sl 'sleep(20000)' >"$T/sleep.out" 2>&1 &
SPID=$!
sl_started() {
	test "$(q "SELECT count(*) FROM events WHERE service = 'sl' AND kind = 'call.started'")" -ge 1
}
wait_for 10 sl_started
CID=$(q "SELECT call FROM events WHERE service = 'sl' AND kind = 'call.started'")
H varlink io.hostel.Call.Cancel "{\"callId\":\"$CID\"}" >/dev/null 2>&1
wait "$SPID"
H call sl 'sleep(1)' >/dev/null 2>&1
# a refusal before call.started is in neither
H call hostile 'nope()' >/dev/null 2>&1
sleep 0.5

scrape "$T/m1"
check "hostel metrics prints the text (exit 0)" test -s "$T/m1"
fam=$(strict "$T/m1")
check "a strict OpenMetrics parser accepts it ($fam families)" \
	test "$fam" -gt 20 2>/dev/null
check "it ends with # EOF" test "$(tail -n 1 "$T/m1")" = "# EOF"

mismatch=0
for s in hostile sl; do
	for o in returned trapped cancelled failed; do
		m=$(val "$T/m1" "$(svc hostel_service_calls_total "$s" "outcome=\"$o\"")")
		h=$(q "SELECT count(*) FROM events WHERE service = '$s' AND kind = 'call.$o'")
		echo "# $s $o: metrics ${m:-none}, history $h"
		test "${m:-x}" = "$h" || mismatch=$((mismatch + 1))
	done
done
check "calls by outcome match the history's terminal events ($mismatch differ)" \
	test "$mismatch" -eq 0
check "every outcome was seen: returned, trapped, cancelled" \
	test "$(val "$T/m1" "$(svc hostel_service_calls_total hostile 'outcome="returned"')")" -ge 3 -a \
	"$(val "$T/m1" "$(svc hostel_service_calls_total hostile 'outcome="trapped"')")" -ge 1 -a \
	"$(val "$T/m1" "$(svc hostel_service_calls_total sl 'outcome="cancelled"')")" -eq 1
ended=$(q "SELECT count(*) FROM events WHERE service = 'hostile' AND kind IN ('call.returned', 'call.trapped', 'call.cancelled', 'call.failed')")
check "the latency histogram counts each ended call ($ended)" \
	test "$(val "$T/m1" "$(svc hostel_service_call_duration_seconds_count hostile)")" = "$ended"
check "the poisoning is counted (store.poisoned)" \
	test "$(val "$T/m1" "$(svc hostel_service_poisonings_total hostile)")" = \
	"$(q "SELECT count(*) FROM events WHERE service = 'hostile' AND kind = 'store.poisoned'")"
check "and the store's recreation (store.recreated)" \
	test "$(val "$T/m1" "$(svc hostel_service_restarts_total hostile)")" = \
	"$(q "SELECT count(*) FROM events WHERE service = 'hostile' AND kind = 'store.recreated'")"
check "events made durable match the events table" \
	test "$(val "$T/m1" hostel_history_events_total)" = "$(q "SELECT count(*) FROM events")"
check "the last sequence number matches it" \
	test "$(val "$T/m1" hostel_history_last_seq)" = "$(q "SELECT max(seq) FROM events")"
check "the commit latency histogram counts every commit" \
	test "$(val "$T/m1" hostel_history_commit_seconds_count)" = \
	"$(val "$T/m1" hostel_history_commits_total)"
check "the services by state: 2 running" \
	test "$(val "$T/m1" 'hostel_services{state="running"}')" = 2
check "a service's state is a stateset" \
	test "$(val "$T/m1" 'hostel_service_state{service="sl",hostel_service_state="running"}')" = 1

# ---- a ticker as it runs ---------------------------------------------------------
H deploy "$TICKER" >/dev/null 2>&1
H call ticker 'start()' >/dev/null 2>&1
sleep 0.5
scrape "$T/m2"
sleep 1
scrape "$T/m3"
f2=$(val "$T/m2" "$(svc hostel_service_fuel_used_total ticker)")
f3=$(val "$T/m3" "$(svc hostel_service_fuel_used_total ticker)")
check "the ticker's fuel grows while it ticks ($f2 -> $f3)" \
	test "${f3:-0}" -gt "${f2:-0}"
check "it waits on a host call (a clock wait)" \
	test "$(val "$T/m3" "$(svc hostel_service_pending_host_calls ticker)")" -ge 1
check "its linear memory is counted" \
	test "$(val "$T/m3" "$(svc hostel_service_memory_bytes ticker 'kind="linear"')")" -ge 65536
check "its instances are counted" \
	test "$(val "$T/m3" "$(svc hostel_service_instances ticker)")" -ge 1
check "the history's commits grow with the ticks" \
	test "$(val "$T/m3" hostel_history_commits_total)" -gt \
	"$(val "$T/m2" hostel_history_commits_total)"
fam=$(strict "$T/m3")
check "the text stays valid with three services ($fam families)" \
	test "$fam" -gt 20 2>/dev/null

# ---- one service ------------------------------------------------------------------
H metrics --service sl >"$T/m4" 2>&1
check "--service keeps the per-service samples to that one" \
	test -z "$(grep -E 'service="(hostile|ticker)"' "$T/m4")" -a \
	-n "$(grep 'service="sl"' "$T/m4")"
check "and stays valid" eval "strict \"\$T/m4\" >/dev/null"
H metrics --service nope >"$T/m5" 2>&1
rc=$?
check "an unknown service is ServiceNotFound, exit 4 ($rc)" \
	test "$rc" -eq 4 -a -n "$(grep ServiceNotFound "$T/m5")"

# ---- hostel top --------------------------------------------------------------------
H top -n 2 -d 0.5 >"$T/top" 2>&1
rc=$?
check "hostel top -n 2 prints two tables (exit $rc)" \
	test "$rc" -eq 0 -a "$(grep -c '^SERVICE ' "$T/top")" -eq 2
tick_rate=$(awk '$1 == "ticker" { r = $6 } END { print r }' "$T/top")
check "its second table has the ticker's fuel rate ($tick_rate/s)" \
	awk -v r="$tick_rate" 'BEGIN { exit !(r + 0 > 0) }'
check "and every service a row" \
	test "$(grep -cE '^(hostile|sl|ticker) ' "$T/top")" -eq 6
H top -d 0 >/dev/null 2>&1
check "a delay below 0.1 s is a usage error (exit 2)" test $? -eq 2

kill -TERM $PIDS 2>/dev/null
wait
tap_finish "$LOG"
