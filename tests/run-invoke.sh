#!/bin/sh
# run-invoke.sh - `hostel run` on core modules: --invoke with integer and
# float arguments typed by the signature, result printing (signed
# integers, round-trippable floats, NaN payloads, multiple results),
# _start, spectest imports, traps (exit 1), usage errors (exit 2) and
# unloadable files (exit 3, with the offset of a decoding error).
#
# The modules are committed as hex text below (hand-assembled; each one's
# functions are described where it is used) and turned into binaries with
# printf, so no tool beyond a POSIX shell is needed.
#
# Output is TAP-like ("ok N - ..."); exit 0 when all pass, 1 otherwise,
# 99 (hard error) when the client has no `run` command or when
# it is not built.

set -u

B=${HOSTEL_BUILDDIR:-.}
HOSTEL=$B/client/hostel
if ! test -x "$HOSTEL"; then
	echo "run-invoke: $HOSTEL is not built" >&2
	exit 99
fi
if ! "$HOSTEL" --help | grep -q '^  run '; then
	echo "run-invoke: $HOSTEL has no run command" >&2
	exit 99
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/hostel-run.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT

# hex TEXT: the bytes written as hex digits (whitespace ignored).
hex() {
	h=$(printf '%s' "$1" | tr -d ' \t\n')
	while test -n "$h"; do
		b=${h%"${h#??}"}
		h=${h#??}
		# shellcheck disable=SC2059
		printf "\\$(printf '%03o' "0x$b")"
	done
}

mod() {
	hex "$2" >"$T/$1.wasm"
}

# calc: add (i32 i32)->i32, add64 (i64 i64)->i64, fdiv (f64 f64)->f64,
# f32id (f32)->f32, div (i32 i32)->i32 (div_s), pair ()->(i32 i64)
# returning -1 and 1234567890123, f64id (f64)->f64.
mod calc '
0061736d0100000001220660027f7f017f60027e7e017e60027c7c017c60017d
017d6000027f7e60017c017c0308070001020300040507330703616464000005
6164643634000104666469760002056633326964000303646976000404706169
72000505663634696400060a37070700200020016a0b0700200020017c0b0700
20002001a30b040020000b0700200020016d0b0b00417f42cb89ec8ff7230b04
0020000b'
# start_ok: imports spectest.print_i32; _start calls it with 42.
mod start_ok '
0061736d0100000001080260017f006000000216010873706563746573740970
72696e745f693332000003020101070a01065f737461727400010a0801060041
2a10000b'
# start_trap: _start is unreachable.
mod start_trap '
0061736d0100000001040160000003020100070a01065f737461727400000a05
010300000b'
# no_start: exports only f ()->().
mod no_start '
0061736d0100000001040160000003020100070501016600000a040102000b'
# start_section_trap: its start function (start section) is unreachable.
mod start_section_trap '
0061736d01000000010401600000030201000801000a05010300000b'
# env_import: imports "env" "f", which `hostel run` does not provide.
mod env_import '
0061736d0100000001040160000002090103656e7601660000'
# spectest_global: get ()->i32 returns the imported spectest.global_i32.
mod spectest_global '
0061736d010000000105016000017f0218010873706563746573740a676c6f62
616c5f693332037f00030201000707010367657400000a0601040023000b'
# malformed: a type section whose size passes the end of the file.
mod malformed '
0061736d0100000001050160'

n=0
failed=0

# check NAME WANT_STATUS WANT_STDOUT [STDERR_PATTERN] -- ARGS...
check() {
	name=$1 want_rc=$2 want_out=$3 want_err=$4
	shift 5
	n=$((n + 1))
	out=$("$HOSTEL" run "$@" 2>"$T/err")
	rc=$?
	err=$(cat "$T/err")
	if test "$rc" = "$want_rc" && test "$out" = "$want_out" &&
		{ test -z "$want_err" || printf '%s' "$err" | grep -q -- "$want_err"; }; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		echo "#   status $rc (want $want_rc)"
		echo "#   stdout: $out"
		echo "#   want:   $want_out"
		echo "#   stderr: $err"
		test -n "$want_err" && echo "#   want stderr matching: $want_err"
		failed=$((failed + 1))
	fi
}

C=$T/calc.wasm
nl='
'
check "add" 0 3 "" -- --invoke 'add(1, 2)' "$C"
check "hex and negative" 0 15 "" -- --invoke 'add(-1,0x10)' "$C"
check "i32 wraps, prints signed" 0 -2147483648 "" -- --invoke 'add(2147483647, 1)' "$C"
check "unsigned spelling of -1" 0 -1 "" -- --invoke 'add(4294967295, 0)' "$C"
check "negative hex" 0 -17 "" -- --invoke 'add(-0x10, -1)' "$C"
check "i64" 0 9223372036854775807 "" -- --invoke 'add64(-9223372036854775808, -1)' "$C"
check "i64 unsigned max" 0 -2 "" -- --invoke 'add64(18446744073709551615, 0xffffffffffffffff)' "$C"
check "f64 shortest round trip" 0 0.3333333333333333 "" -- --invoke 'fdiv(1, 3)' "$C"
check "f64 exact" 0 2.5 "" -- --invoke 'fdiv(5, 2)' "$C"
check "inf" 0 inf "" -- --invoke 'fdiv(1, 0)' "$C"
check "-inf" 0 -inf "" -- --invoke 'fdiv(-1.0, 0)' "$C"
check "f64 big" 0 1e+300 "" -- --invoke 'f64id(1e300)' "$C"
check "f64 -0" 0 -0 "" -- --invoke 'f64id(-0.0)' "$C"
check "f64 nan" 0 nan "" -- --invoke 'f64id(nan)' "$C"
check "f64 -nan" 0 -nan "" -- --invoke 'f64id(-nan)' "$C"
check "f64 nan payload" 0 nan:0x1 "" -- --invoke 'f64id(nan:0x1)' "$C"
check "f64 hex float" 0 0.75 "" -- --invoke 'f64id(0x1.8p-1)' "$C"
check "f32 shortest round trip" 0 0.1 "" -- --invoke 'f32id(0.1)' "$C"
check "f32 max" 0 3.4028235e+38 "" -- --invoke 'f32id(3.4028235e38)' "$C"
check "f32 nan payload" 0 -nan:0x200000 "" -- --invoke 'f32id(-nan:0x200000)' "$C"
check "f32 inf" 0 inf "" -- --invoke 'f32id(inf)' "$C"
check "two results" 0 "-1${nl}1234567890123" "" -- --invoke 'pair()' "$C"
check "--invoke= form, no parentheses" 0 "-1${nl}1234567890123" "" -- --invoke=pair "$C"
check "trap exits 1" 1 "" "^hostel: trap: integer divide by zero$" -- --invoke 'div(1, 0)' "$C"
check "overflow trap" 1 "" "hostel: trap: integer overflow" -- --invoke 'div(-2147483648, -1)' "$C"
check "too few arguments" 2 "" "takes 2 arguments" -- --invoke 'add(1)' "$C"
check "not a number" 2 "" "not a valid i32" -- --invoke 'add(x, 1)' "$C"
check "i32 out of range" 2 "" "not a valid i32" -- --invoke 'add(4294967296, 0)' "$C"
check "i32 below range" 2 "" "not a valid i32" -- --invoke 'add(-2147483649, 0)' "$C"
check "float for an integer" 2 "" "not a valid i32" -- --invoke 'add(1.5, 0)' "$C"
check "bad float" 2 "" "not a valid f64" -- --invoke 'fdiv(1.0x, 1)' "$C"
check "empty argument" 2 "" "bad --invoke" -- --invoke 'add(1,,2)' "$C"
check "unclosed call" 2 "" "bad --invoke" -- --invoke 'add(1, 2' "$C"
check "unknown export" 2 "" 'no export "nosuch"' -- --invoke 'nosuch()' "$C"
check "unknown option" 2 "" "unknown option" -- --bogus "$C"
check "no file" 2 "" "usage" --
check "no --invoke, no _start" 2 "" "no --invoke and no _start export" -- "$T/no_start.wasm"
check "_start with a spectest import" 0 "" "" -- "$T/start_ok.wasm"
check "_start traps" 1 "" "^hostel: trap: unreachable$" -- "$T/start_trap.wasm"
check "start section traps" 1 "" "^hostel: trap: unreachable$" -- --invoke 'x()' "$T/start_section_trap.wasm"
check "spectest global" 0 666 "" -- --invoke 'get()' "$T/spectest_global.wasm"
check "import other than spectest" 3 "" 'unknown import "env" "f"' -- "$T/env_import.wasm"
check "malformed file, with offset" 3 "" "malformed module at offset [0-9]*: length out of bounds" -- "$T/malformed.wasm"
check "missing file" 3 "" "No such file" -- "$T/missing.wasm"

echo "1..$n"
echo "$((n - failed)) passed, $failed failed"
if test $failed -ne 0; then
	echo "run-invoke: $failed of $n failed"
	exit 1
fi
exit 0
