#!/bin/sh
# cm-wast.sh - the Component Model reference test suite through `hostel
# wast`: the six folders of $HOSTEL_SHARED/cm-testsuite (values, linking,
# resources, binary, validation, async).
#
# Every command must pass, except those listed in tests/cm-wast.xfail
# ("DIR/FILE.json:LINE reason").  A listed command that now passes fails
# this test too (remove it from the list), so the list only shrinks.
# The async folder runs under FIFO scheduling and then under the
# HOSTEL_SCHED_SEED values in $CM_WAST_SEEDS (default "1 2 4242"; set
# and empty: FIFO only, as the Valgrind run does), with the same
# expected failures: a test that depends on one order is a
# test defect (ARCHITECTURE "Scheduling policy"): such scripts are listed
# in tests/cm-wast.fifo with the reason and run under FIFO in those passes.
#
# Exit 0 when all pass, 1 otherwise, 77 (skip) without the suite, 99
# (hard error) when the client is not built.

set -u

B=${HOSTEL_BUILDDIR:-.}
SRC=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
SUITE=${HOSTEL_SHARED:-$SRC/../shared}/cm-testsuite
HOSTEL=$B/client/hostel
XFAIL=$SRC/tests/cm-wast.xfail
FIFO=$SRC/tests/cm-wast.fifo
SEEDS=${CM_WAST_SEEDS-1 2 4242} # set and empty: FIFO only

if ! test -d "$SUITE"; then
	echo "cm-wast: SKIP: $SUITE is absent (set HOSTEL_SHARED)"
	exit 77
fi
if ! test -x "$HOSTEL"; then
	echo "cm-wast: $HOSTEL is not built" >&2
	exit 99
fi
if ! test -r "$XFAIL" || ! test -r "$FIFO"; then
	echo "cm-wast: $XFAIL or $FIFO is missing" >&2
	exit 99
fi

tmp=$(mktemp) || exit 99
trap 'rm -f "$tmp"' EXIT INT TERM

status=0
tp=0 tf=0 ts=0
run() { # dir label [script...]  (no script: the whole dir)
	d=$1 label=$2
	shift 2
	test $# -gt 0 || set -- "$SUITE/$d"
	sed -n "s|^$d/||p" "$XFAIL" >"$tmp"
	out=$("$HOSTEL" wast -v --xfail "$tmp" "$@")
	rc=$?
	printf '%s\n' "$out" | grep '^  ' || :
	echo "cm-wast: $label: $(printf '%s\n' "$out" | tail -n 1)"
	# Add the group's counts to the totals.
	set -- $(printf '%s\n' "$out" | tail -n 1 |
		sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped.*/\1 \2 \3/p')
	tp=$((tp + ${1:-0})) tf=$((tf + ${2:-0})) ts=$((ts + ${3:-0}))
	if test $rc -ne 0; then
		status=1
	fi
}

for d in values linking resources binary validation async; do
	HOSTEL_SCHED_SEED= run "$d" "$d"
done
# Seeded passes: scripts in tests/cm-wast.fifo pin one schedule (test
# defects); they run under FIFO, the rest of the folder under the seed.
pinned=$(sed -n 's|^async/\([^ ]*\).*|\1|p' "$FIFO")
seeded=
fifo=
for f in "$SUITE"/async/*.json; do
	case " $(echo $pinned) " in
	*" ${f##*/} "*) fifo="$fifo $f" ;;
	*) seeded="$seeded $f" ;;
	esac
done
for seed in $SEEDS; do
	# shellcheck disable=SC2086 # word lists of paths without blanks
	HOSTEL_SCHED_SEED=$seed run async "async (seed $seed)" $seeded
	if test -n "$fifo"; then
		# shellcheck disable=SC2086
		HOSTEL_SCHED_SEED= run async "async (seed $seed, FIFO-pinned)" $fifo
	fi
done
echo "cm-wast: total: $tp passed, $tf failed, $ts skipped"
echo "$tp passed, $tf failed, $ts skipped"
exit $status
