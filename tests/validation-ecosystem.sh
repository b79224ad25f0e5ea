#!/bin/sh
# validation-ecosystem.sh - validation as the ecosystem does it (issue 21
# point 3): components that wasmparser (the validator of wasm-tools and
# every toolchain) accepts load, and the cases the spec makes invalid
# stay refused, with the reason.  Each guest's source says which rule.
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 99 when the
# programs are not built.

set -u
B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
NAME=validation-ecosystem
. "$S/tests/tap.sh"
HOSTEL=$B/client/hostel
need_programs "$HOSTEL"
G=$S/tests/guests/names
tap_tmpdir

# refused GUEST WHAT MESSAGE: hostel inspect refuses GUEST.wasm, saying
# MESSAGE (a grep pattern)
refused() {
	"$HOSTEL" inspect "$G/$1.wasm" >"$T/out" 2>&1
	rc=$?
	check "$2 are refused (exit $rc)" test "$rc" -ne 0
	check "naming why: $3" grep -q "$3" "$T/out"
}

"$HOSTEL" inspect "$G/http-names.wasm" >"$T/out" 2>&1
check "a type \`method\` beside \`[method]incoming-request.method\` (wasi:http) loads" \
	test $? -eq 0
check "and its WIT shows both: the variant and the resource's method" \
	test -n "$(grep '^  variant method {' "$T/out")" -a \
	-n "$(grep '^    method: func() -> method;' "$T/out")"
refused ll-clash "\`foo\` and \`[method]foo.foo\`" \
	'export name `\[method\]foo.foo` conflicts with previous name `foo`'
"$HOSTEL" inspect "$G/reexport.wasm" >"$T/out" 2>&1
check "an instance export whose func names the instance's own type export loads (wit-component's shim)" \
	test $? -eq 0
check "and exports the interface" grep -q '^  export x:y/api;' "$T/out"
"$HOSTEL" inspect "$G/outer-alias.wasm" >"$T/out" 2>&1
check "outer aliases of count 2 in core module types (the enclosing component's types) load" \
	test $? -eq 0
# the next two in wasmparser's words
refused outer-alias-past "outer aliases one past the outermost component" \
	'invalid outer alias count of 2'
refused async-ctor "async [constructor]s" \
	'constructor function cannot be async'
"$HOSTEL" inspect "$G/version-case.wasm" >"$T/out" 2>&1
check "interface names a version's case apart (@1.0.0-RC, @1.0.0-rc) are two names" \
	test $? -eq 0
refused version-case-clash "interface labels a case apart (a:b/C, a:b/c)" \
	'import name `a:b/c@1.0.0` conflicts with previous name `a:b/C@1.0.0`'
# One start function at most (wasmparser's add_start; wasm-tools' tests
# have it).  The text formats refuse a second (start), so the binary is
# written here: a type func(), its import "a", a start section calling
# it (index 0, no arguments, no results), then the same section again.
printf '\000asm\015\000\001\000\007\005\001\100\000\001\000\012\006\001\000\001a\001\000\011\003\000\000\000' \
	>"$T/one-start.wasm"
cp "$T/one-start.wasm" "$T/two-starts.wasm"
printf '\011\003\000\000\000' >>"$T/two-starts.wasm"
"$HOSTEL" inspect "$T/one-start.wasm" >"$T/out" 2>&1
check "a start section loads" test $? -eq 0
"$HOSTEL" inspect "$T/two-starts.wasm" >"$T/out" 2>&1
check "a second start section is refused, in wasmparser's words" \
	grep -q 'component cannot have more than one start function' "$T/out"
# The value section (🪙; wasmparser has none): its bytes must be one
# value of its type (runtime/component/value.c).  value_case NAME BYTES
# WANT: a component of one value section (octal escapes: id 12, its
# size, 1 value, the valtype, the length, the bytes); WANT "ok" or the
# reason's words.
value_case() {
	printf "\000asm\015\000\001\000$2" >"$T/v-$1.wasm"
	"$HOSTEL" inspect "$T/v-$1.wasm" >"$T/out" 2>&1
	if [ "$3" = ok ]; then
		check "value $1 loads" test $? -eq 0
	else
		check "value $1 is refused: $3" grep -q "invalid value: $3" "$T/out"
	fi
}
value_case u32-300 '\014\005\001\171\002\254\002' ok
value_case string '\014\007\001\163\004\003\150\303\251' ok
value_case canonical-nan '\014\007\001\166\004\000\000\300\177' ok
value_case bool-2 '\014\004\001\177\001\002' 'invalid bool'
value_case trailing '\014\006\001\171\003\254\002\000' 'bytes past the value'
value_case not-utf8 '\014\006\001\163\003\002\303\050' 'malformed UTF-8'
value_case other-nan '\014\007\001\166\004\001\000\300\177' 'a NaN that is not canonical'
value_case leb-too-long '\014\011\001\171\006\200\200\200\200\200\000' \
	'integer representation too long'
value_case u32-too-big '\014\010\001\171\005\377\377\377\377\037' \
	'integer too large'
tap_finish
