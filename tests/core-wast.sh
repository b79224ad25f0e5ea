#!/bin/sh
# core-wast.sh - the core WebAssembly test suite through `hostel wast`,
# group by group: wasm2, multi-memory, simd, relaxed-simd, tail-call,
# exceptions and function-references (the groups of
# $HOSTEL_SHARED/core-testsuite/groups.json the engine supports), and of
# the gc group the scripts that need only typed function references
# (data, elem, global).
#
# Every command must pass, except those listed in tests/core-wast.xfail
# ("FILE.json:LINE reason").  A listed command that now passes fails this
# test too (remove it from the list), so the list only shrinks.  Failing
# commands are printed with what was expected and what happened.
#
# Exit 0 when all pass, 1 otherwise, 77 (skip) without the suite, 99
# (hard error) when the client is not built.

set -u

B=${HOSTEL_BUILDDIR:-.}
SRC=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
SUITE=${HOSTEL_SHARED:-$SRC/../shared}/core-testsuite
HOSTEL=$B/client/hostel
XFAIL=$SRC/tests/core-wast.xfail
core_groups="wasm2 multi-memory simd relaxed-simd tail-call exceptions function-references"
gc_typed_refs="data.json elem.json global.json"

if ! test -d "$SUITE"; then
	echo "core-wast: SKIP: $SUITE is absent (set HOSTEL_SHARED)"
	exit 77
fi
if ! test -x "$HOSTEL"; then
	echo "core-wast: $HOSTEL is not built" >&2
	exit 99
fi
if ! "$HOSTEL" --help | grep -q '^  wast '; then
	echo "core-wast: $HOSTEL has no wast command" >&2
	exit 99
fi
if ! test -r "$XFAIL"; then
	echo "core-wast: $XFAIL is missing" >&2
	exit 99
fi

status=0
tp=0 tf=0 ts=0
for g in $core_groups; do
	out=$("$HOSTEL" wast -v --xfail "$XFAIL" --group "$g" "$SUITE")
	rc=$?
	# The failing commands, then the group's totals.
	printf '%s\n' "$out" | grep '^  ' || :
	echo "core-wast: $g: $(printf '%s\n' "$out" | tail -n 1)"
	# Add the group's counts to the totals.
	set -- $(printf '%s\n' "$out" | tail -n 1 |
		sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped.*/\1 \2 \3/p')
	tp=$((tp + ${1:-0})) tf=$((tf + ${2:-0})) ts=$((ts + ${3:-0}))
	if test $rc -ne 0; then
		status=1
	fi
done
# The gc group's scripts that need only typed function references pass
# whole (the rest of that group is refused "GC not supported" at load).
for f in $gc_typed_refs; do
	out=$("$HOSTEL" wast -v --xfail "$XFAIL" "$SUITE/$f")
	rc=$?
	printf '%s\n' "$out" | grep '^  ' || :
	echo "core-wast: gc/$f: $(printf '%s\n' "$out" | tail -n 1)"
	set -- $(printf '%s\n' "$out" | tail -n 1 |
		sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped.*/\1 \2 \3/p')
	tp=$((tp + ${1:-0})) tf=$((tf + ${2:-0})) ts=$((ts + ${3:-0}))
	if test $rc -ne 0; then
		status=1
	fi
done
echo "core-wast: total: $tp passed, $tf failed, $ts skipped"
echo "$tp passed, $tf failed, $ts skipped"
exit $status
