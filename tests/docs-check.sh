#!/bin/sh
# docs-check.sh - the man pages match the code: every method of every
# varlink interface description (ipc/*.varlink) is documented in
# hostel-protocol(7), every error name too, and every subcommand that
# `hostel --help` lists is documented in hostel(1).
#
# Output is TAP-like; closes with "N passed, N failed".

set -u
B=${HOSTEL_BUILDDIR:-.}
NAME=docs-check
SRC=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
. "$SRC/tests/tap.sh"
HOSTEL=$B/client/hostel
need_programs "$HOSTEL"

PROTO=$SRC/man/hostel-protocol.7
CLIENT=$SRC/man/hostel.1
for f in "$SRC"/ipc/*.varlink; do
	iface=$(sed -n 's/^interface \([^ ]*\).*/\1/p' "$f")
	check "$iface is described in hostel-protocol(7)" grep -qF "$iface" "$PROTO"
	for m in $(sed -n 's/^method \([A-Za-z]*\).*/\1/p' "$f"); do
		check "$iface.$m is documented" grep -qw "$m" "$PROTO"
	done
	for e in $(sed -n 's/^error \([A-Za-z]*\).*/\1/p' "$f"); do
		check "$iface error $e is documented" grep -qw "$e" "$PROTO"
	done
done
for c in $("$HOSTEL" --help | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p'); do
	check "hostel $c is documented in hostel(1)" \
		grep -qE "^\.(SS|TP|B|BR|IP).*\b$c\b" "$CLIENT"
done
tap_finish
