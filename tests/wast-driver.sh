#!/bin/sh
# wast-driver.sh - `hostel wast` itself: that it passes what holds and
# fails what does not (wrong values, NaN classes, result counts, traps,
# loads and links that should fail), skips text-only modules, resolves
# spectest and registered imports, honours --group, and that --xfail
# turns listed failures into expected failures while a listed command
# that passes, a stale entry or an entry without a reason fail the run.
# Without this, a driver that passed everything would make
# tests/core-wast.sh meaningless.
#
# The modules are hex text (see tests/run-invoke.sh for what they hold).
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when
# the client has no `wast` command or is not built.

set -u

B=${HOSTEL_BUILDDIR:-.}
HOSTEL=$B/client/hostel
if ! test -x "$HOSTEL"; then
	echo "wast-driver: $HOSTEL is not built" >&2
	exit 99
fi
if ! "$HOSTEL" --help | grep -q '^  wast '; then
	echo "wast-driver: $HOSTEL has no wast command" >&2
	exit 99
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/hostel-wast.XXXXXX") || exit 99
trap 'test -n "${KEEP:-}" || rm -rf "$T"' EXIT

hex() {
	h=$(printf '%s' "$1" | tr -d ' \t\n')
	while test -n "$h"; do
		b=${h%"${h#??}"}
		h=${h#??}
		# shellcheck disable=SC2059
		printf "\\$(printf '%03o' "0x$b")"
	done
}

# calc: add, add64, fdiv, f32id, div, pair, f64id (as in run-invoke.sh).
hex '
0061736d0100000001220660027f7f017f60027e7e017e60027c7c017c60017d
017d6000027f7e60017c017c0308070001020300040507330703616464000005
6164643634000104666469760002056633326964000303646976000404706169
72000505663634696400060a37070700200020016a0b0700200020017c0b0700
20002001a30b040020000b0700200020016d0b0b00417f42cb89ec8ff7230b04
0020000b' >"$T/calc.wasm"
# spectest_global: get ()->i32 returns the imported spectest.global_i32.
hex '
0061736d010000000105016000017f0218010873706563746573740a676c6f62
616c5f693332037f00030201000707010367657400000a0601040023000b' \
	>"$T/sg.wasm"
# importer: imports "M" "get" ()->i32; twice ()->i32 calls it twice.
hex '
0061736d010000000105016000017f020901014d0367657400000302010007090105
747769636500010a09010700100010006a0b' >"$T/importer.wasm"
# env_import: imports "env" "f"; start_trap: start function unreachable.
hex '0061736d0100000001040160000002090103656e7601660000' >"$T/env.wasm"
hex '0061736d01000000010401600000030201000801000a05010300000b' \
	>"$T/starttrap.wasm"
# malformed: a section size past the end.
hex '0061736d0100000001050160' >"$T/bad.wasm"

m() { # m LINE FILE [NAME]: a module command
	printf '{"type":"module","line":%s,"filename":"%s","module_type":"binary","kind":"module"%s},\n' \
		"$1" "$2" "${3:+,\"name\":\"$3\"}"
}
ret() { # ret LINE FIELD ARGS EXPECTED [MODULE]
	printf '{"type":"assert_return","line":%s,"action":{"type":"invoke",%s"field":"%s","args":[%s]},"expected":[%s]},\n' \
		"$1" "${5:+\"module\":\"$5\",}" "$2" "$3" "$4"
}
trp() { # trp LINE FIELD ARGS TEXT
	printf '{"type":"assert_trap","line":%s,"action":{"type":"invoke","field":"%s","args":[%s]},"text":"%s"},\n' \
		"$1" "$2" "$3" "$4"
}
file() { # file TYPE LINE FILE [TEXT]
	printf '{"type":"%s","line":%s,"filename":"%s","module_type":"binary","kind":"module","text":"%s"},\n' \
		"$1" "$2" "$3" "${4:-}"
}
i32() { printf '{"type":"i32","value":"%s"}' "$1"; }
f64() { printf '{"type":"f64","value":"%s"}' "$1"; }
script() { # script NAME < commands
	{
		printf '{"source_filename":"%s.wast","commands":[\n' "$1"
		cat
		printf '{"type":"action","line":999,"action":{"type":"invoke","module":"$calc","field":"add","args":[%s,%s]}}]}\n' \
			"$(i32 0)" "$(i32 0)"
	} >"$T/$1.json"
}

# Every command holds: 19 passed (with the final action), 1 skipped (16).
script good <<EOF2
$(m 1 calc.wasm '$calc')
$(ret 2 add "$(i32 1),$(i32 2)" "$(i32 3)")
$(ret 3 f64id "$(f64 9221120237041090560)" '{"type":"f64","value":"nan:canonical"}')
$(ret 4 f64id "$(f64 9222246136947933184)" '{"type":"f64","value":"nan:arithmetic"}')
$(ret 5 pair "" "$(i32 -1),{\"type\":\"i64\",\"value\":\"1234567890123\"}")
$(ret 6 add "$(i32 1),$(i32 1)" "{\"type\":\"either\",\"values\":[$(i32 3),$(i32 2)]}")
$(trp 7 div "$(i32 1),$(i32 0)" "integer divide by zero")
{"type":"action","line":8,"action":{"type":"invoke","field":"add","args":[$(i32 1),$(i32 2)]}},
$(m 9 sg.wasm)
{"type":"register","line":10,"as":"M"},
$(ret 11 get "" "$(i32 666)")
$(m 12 importer.wasm)
$(ret 13 twice "" "$(i32 1332)")
$(ret 14 add "$(i32 2),$(i32 2)" "$(i32 4)" '$calc')
$(file assert_invalid 15 bad.wasm "length out of bounds")
{"type":"assert_malformed","line":16,"filename":"x.wat","module_type":"text","kind":"module","text":"x"},
$(file assert_unlinkable 17 env.wasm "unknown import")
$(file assert_uninstantiable 18 starttrap.wasm "unreachable")
$(ret 19 f32id '{"type":"f32","value":"1056964608"}' '{"type":"f32","value":"1056964608"}' '$calc')
EOF2

# Every command but line 1 (and the final action) fails: 2 passed, 13 failed.
script bad <<EOF2
$(m 1 calc.wasm '$calc')
$(ret 2 add "$(i32 1),$(i32 2)" "$(i32 4)")
$(ret 3 f64id "$(f64 4607182418800017408)" '{"type":"f64","value":"nan:canonical"}')
$(ret 4 f64id "$(f64 9222246136947933184)" '{"type":"f64","value":"nan:canonical"}')
$(trp 5 add "$(i32 1),$(i32 2)" "integer divide by zero")
$(trp 6 div "$(i32 1),$(i32 0)" "integer overflow")
$(ret 7 pair "" "$(i32 -1)")
$(file assert_invalid 8 calc.wasm "type mismatch")
$(ret 9 add '{"type":"i64","value":"1"},{"type":"i64","value":"2"}' "$(i32 3)")
$(ret 10 add "$(i32 1),$(i32 2)" '{"type":"i64","value":"3"}')
$(file assert_unlinkable 11 starttrap.wasm "unknown import")
$(ret 12 nosuch "" "")
$(m 13 bad.wasm)
$(ret 14 add "$(i32 1),$(i32 2)" "$(i32 3)")
EOF2
printf '{"groups":{"g1":{"files":["good.wast"]}}}\n' >"$T/groups.json"

n=0
failed=0
ok() {
	n=$((n + 1))
	if test "$1" = 0; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

# expect NAME STATUS LAST_LINE_PATTERN -- ARGS: run and check
expect() {
	name=$1 want=$2 pat=$3
	shift 4
	"$HOSTEL" wast "$@" >"$T/out" 2>"$T/err"
	rc=$?
	if test $rc = "$want" && { test -z "$pat" || grep -q -- "$pat" "$T/out" "$T/err"; }; then
		ok 0 "$name"
	else
		ok 1 "$name"
		echo "#   status $rc (want $want), want output matching: $pat"
		sed 's/^/#   /' "$T/out" "$T/err"
	fi
}

expect "good script passes" 0 "^19 passed, 0 failed, 1 skipped$" -- "$T/good.json"
expect "bad script fails" 1 "^2 passed, 13 failed, 0 skipped$" -- -v "$T/bad.json"
for l in 2 3 4 5 6 7 8 9 10 11 12 13 14; do
	n=$((n + 1))
	if grep -q "^  bad.json:$l: " "$T/out"; then
		echo "ok $n - -v reports bad.json:$l"
	else
		echo "not ok $n - -v reports bad.json:$l"
		failed=$((failed + 1))
	fi
done
expect "a directory runs every script" 1 "^21 passed, 13 failed, 1 skipped$" -- "$T"
expect "--group runs the group's scripts" 0 "^good.json: 19 passed" -- --group g1 "$T"
expect "unknown group" 2 'no group "g2"' -- --group g2 "$T"
expect "no arguments" 2 "usage" --

for l in 2 3 4 5 6 7 8 9 10 11 12 13 14; do
	echo "bad.json:$l deliberately wrong"
done >"$T/xfail"
expect "listed failures are expected" 0 "(13 expected failures)" -- --xfail "$T/xfail" "$T/bad.json"
printf 'bad.json:1 passes\n' >>"$T/xfail"
expect "a listed command that passes fails the run" 1 "bad.json:1: module: XPASS" -- --xfail "$T/xfail" "$T/bad.json"
printf 'bad.json:2 x\nbad.json:77 stale\n' >"$T/xfail2"
expect "a stale entry fails the run" 1 "bad.json:77: stale" -- --xfail "$T/xfail2" "$T/bad.json"
printf 'bad.json:2\n' >"$T/xfail3"
expect "an entry needs a reason" 2 "expected \"FILE.json:LINE reason\"" -- --xfail "$T/xfail3" "$T/bad.json"

echo "1..$n"
echo "$((n - failed)) passed, $failed failed"
if test $failed -ne 0; then
	echo "wast-driver: $failed of $n failed"
	exit 1
fi
exit 0
