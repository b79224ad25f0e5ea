#!/bin/sh
# daemon-export-names.sh - export names as a client writes them, through
# a real hosteld and the real client (run/exportname.h): the calc
# guest's `greet(...)` resolves to hostel:calc/api@0.1.0#greet (WAVE and
# JSON, and the history's call.started names it in full), an unversioned
# interface name resolves, a misspelt name is ExportNotFound with the
# candidates and the count of exports, a name two interfaces export is
# ExportAmbiguous with both (tests/guests/mkcomponent names), an exact
# root name wins over an interface's; `hostel run --invoke 'greet(...)'`
# offline; and a core module deployed (tests/guests/core/demo.wasm) is
# InvalidComponent saying it is a core module, not a component.
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when the
# programs are not built.  KEEP=1 keeps the temporary directory.

set -u

B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
NAME=daemon-export-names
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
SEND=$B/tests/varlink-send
MK=$B/tests/guests/mkcomponent
CALC=$S/tests/guests/wasi/calc.component.wasm
need_programs "$HOSTELD" "$HOSTEL" "$SEND" "$MK"

tap_tmpdir

SOCK=$T/h.sock
LOG=$T/hosteld.log
# callout NAME ARGS...: `hostel call` into $T/NAME.out/.err, rc in $rc
callout() {
	o=$1
	shift
	H call "$@" >"$T/$o.out" 2>"$T/$o.err"
	rc=$?
}
# invoke NAME PARAMS: io.hostel.Call.Invoke with raw parameters, the
# reply in $T/NAME.json
invoke() {
	"$SEND" "$SOCK" call "{\"method\":\"io.hostel.Call.Invoke\",\"parameters\":$2}" \
		>"$T/$1.json" 2>&1
}

"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$T/state" \
	2>>"$LOG" &
PIDS="$PIDS $!"
wait_for 10 alive || {
	echo "daemon-export-names: hosteld did not start" >&2
	cat "$LOG" >&2
	exit 1
}

# ---- calc: one interface -----------------------------------------------------
H deploy "$CALC" --name calc >"$T/deploy.out" 2>&1
check "calc deploys" has "$T/deploy.out" "deployed calc (component"
callout g1 calc 'greet("names")'
check "greet(...) resolves to hostel:calc/api@0.1.0#greet" \
	eq "$(cat "$T/g1.out")/$rc" '"hello, names!"/0'
H logs --json calc >"$T/calc.json"
check "call.started records the full name" \
	eq "$(grep '"kind":"call.started"' "$T/calc.json" | tail -1 |
		grep -c '"export":"hostel:calc/api@0.1.0#greet"')" 1
callout g2 calc 'hostel:calc/api#add(40, 2)'
check "an unversioned interface name resolves" eq "$(cat "$T/g2.out")/$rc" "42/0"
callout g3 calc 'hostel:calc/api@0.1.0#greet("full")'
check "the full name still works" eq "$(cat "$T/g3.out")/$rc" '"hello, full!"/0'
invoke j1 '{"service":"calc","export":"greet","args":["json"]}'
check "JSON: export greet resolves" has "$T/j1.json" '"result":{"value":"hello, json!"}'
invoke j2 '{"service":"calc","export":"hostel:calc/api@0.1.0#greet","wave":"greet(\"both\")"}'
check "export and wave naming one function by two names agree" \
	has "$T/j2.json" '"result":{"value":"hello, both!"}'

callout m1 calc 'grete("x")'
check "a misspelt name: ExportNotFound, exit 4" eq "$rc" 4
check "its message lists the candidate and the count" \
	eq "$(cat "$T/m1.err")" "hostel call: ExportNotFound: service calc has no export \`grete\` (3 exported functions); did you mean: hostel:calc/api@0.1.0#greet"
invoke j3 '{"service":"calc","export":"api#greet","args":["x"]}'
check "JSON: the reply has candidates and exports" \
	has "$T/j3.json" '{"parameters":{"name":"calc","export":"api#greet","candidates":["hostel:calc/api@0.1.0#greet"],"exports":3},"error":"io.hostel.Call.ExportNotFound"}'
invoke j4 '{"service":"calc","wave":"frobnicate()"}'
check "nothing near: no candidates" \
	has "$T/j4.json" '"export":"frobnicate","candidates":[],"exports":3'

# ---- names: two interfaces and the root ---------------------------------------
"$MK" names "$T/names.wasm"
H deploy "$T/names.wasm" --name names >"$T/deploy2.out" 2>&1
check "the names component deploys" has "$T/deploy2.out" "deployed names (component"
callout a1 names 'count()'
check "a name two interfaces export: ExportAmbiguous, exit 2" eq "$rc" 2
check "its message lists both" \
	eq "$(cat "$T/a1.err")" "hostel call: ExportAmbiguous: \`count\` names 2 exports of service names: hostel:names/a@1.0.0#count, hostel:names/b@2.0.0#count"
invoke a2 '{"service":"names","export":"count"}'
check "JSON: the reply has matches and count" \
	has "$T/a2.json" '{"parameters":{"name":"names","export":"count","matches":["hostel:names/a@1.0.0#count","hostel:names/b@2.0.0#count"],"count":2},"error":"io.hostel.Call.ExportAmbiguous"}'
callout a3 names 'hostel:names/b#count()'
check "the unversioned interface name picks one" eq "$(cat "$T/a3.out")/$rc" "1/0"
callout a4 names 'get()'
check "an exact root name wins over hostel:names/a@1.0.0#get" \
	eq "$(cat "$T/a4.out")/$rc" "1/0"
H logs --json names >"$T/names.json"
check "call.started records the root's get" \
	eq "$(grep '"kind":"call.started"' "$T/names.json" | tail -1 |
		grep -c '"export":"get"')" 1
callout a5 names 'cuont()'
check "a misspelt ambiguous name lists both as candidates" \
	has "$T/a5.err" "did you mean: hostel:names/a@1.0.0#count, hostel:names/b@2.0.0#count"
H logs --json names >"$T/names2.json"
check "refused names leave no call.started" \
	eq "$(grep -c '"kind":"call.started"' "$T/names2.json")" 2

# ---- offline: hostel run --invoke ----------------------------------------------
"$HOSTEL" run --invoke 'greet("offline")' "$CALC" >"$T/r1.out" 2>"$T/r1.err"
check "hostel run --invoke 'greet(...)' resolves" \
	eq "$(cat "$T/r1.out")/$?" '"hello, offline!"/0'
"$HOSTEL" run --invoke 'count()' "$T/names.wasm" >"$T/r2.out" 2>"$T/r2.err"
rc=$?
check "hostel run: an ambiguous name, exit 2, with the matches" \
	eq "$rc/$(cat "$T/r2.err")" "2/hostel: $T/names.wasm: \`count\` is ambiguous: 2 exported functions match: hostel:names/a@1.0.0#count, hostel:names/b@2.0.0#count"
"$HOSTEL" run --invoke 'vlaue()' "$T/names.wasm" >"$T/r3.out" 2>"$T/r3.err"
rc=$?
check "hostel run: a misspelt name, exit 2, did you mean" \
	eq "$rc/$(cat "$T/r3.err")" "2/hostel: $T/names.wasm: no exported function \`vlaue\` (6 exported functions); did you mean: hostel:names/a@1.0.0#value"

# ---- a core module where a component is expected ------------------------------
CORE=$S/tests/guests/core/demo.wasm
MSG='this is a core WebAssembly module, not a component (hostel run runs core modules directly; wasm-tools component new makes a component from one)'
H deploy "$CORE" --name demo >"$T/core.out" 2>&1
rc=$?
check "deploying a core module: InvalidComponent, exit 3" eq "$rc" 3
check "its message says it is a core module and what to do" \
	eq "$(cat "$T/core.out")" "hostel deploy: InvalidComponent: $MSG"
"$SEND" "$SOCK" call "{\"method\":\"io.hostel.Component.Add\",\"parameters\":{\"bytes\":\"$(base64 -w0 "$CORE")\"}}" >"$T/add.json" 2>&1
check "Component.Add's reason says so" \
	has "$T/add.json" "\"kind\":\"malformed\",\"reason\":\"$MSG\",\"offset\":4"
"$HOSTEL" inspect --world root "$CORE" >/dev/null 2>"$T/insp.err"
rc=$?
check "hostel inspect --world of a core module says so, exit 2" \
	eq "$rc/$(cat "$T/insp.err")" "2/hostel inspect: $CORE: --world root: $MSG"
"$HOSTEL" inspect "$CORE" >"$T/insp.out" 2>&1
check "hostel inspect of a core module lists its exports" \
	grep -q '^export "' "$T/insp.out"
check "daemon still serves" alive

tap_finish
