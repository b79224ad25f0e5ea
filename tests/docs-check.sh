#!/bin/sh
# docs-check.sh - the man pages match the code: every method of every
# varlink interface description (ipc/*.varlink) is documented in
# hostel-protocol(7), every error name too, and every subcommand that
# `hostel --help` lists is documented in hostel(1); hosteld(8) names
# every interface served; hostel(1) and hostel.conf(5) give the default
# socket of ipc/socket-path.h and the duration units of ipc/timefmt.c;
# the example commands are ones Debian 12 ships (no varlinkctl).

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
DAEMON=$SRC/man/hosteld.8
CONF=$SRC/man/hostel.conf.5
for f in "$SRC"/ipc/*.varlink; do
	iface=$(sed -n 's/^interface \([^ ]*\).*/\1/p' "$f")
	check "hosteld(8) names $iface" grep -qE "^\.BR? $iface( |\$)" "$DAEMON"
done
NSOCK=$(sed -n 's/^#define HOSTEL_SOCKET_NAME "\(.*\)"/\1/p' \
	"$SRC/ipc/socket-path.h")
check "the socket's name from ipc/socket-path.h" test -n "$NSOCK"
for page in "$CLIENT" "$CONF"; do
	for p in "/run/hostel/$NSOCK" "/hostel/$NSOCK" 'RUNTIME_DIRECTORY'; do
		check "$(basename "$page") gives the default socket: $p" \
			grep -qF "$p" "$page"
	done
done
check "hostel(1) names no other socket" \
	sh -c "! grep -qE 'hostel/io\.hostel|XDG_RUNTIME_DIR/hostel/[^h]' '$CLIENT'"
UNITS=$(sed -n '/^} units\[\] = {/,/};/p' "$SRC/ipc/timefmt.c" |
	grep -o '{"[a-z]*"' | tr -d '{"')
check "duration units from ipc/timefmt.c" test -n "$UNITS"
for u in $UNITS; do
	for page in "$CLIENT" "$CONF"; do
		check "$(basename "$page") lists the duration unit $u" \
			grep -qx "\.B $u" "$page"
	done
done
check "no varlinkctl (Debian 12 does not ship it)" \
	sh -c "! grep -q varlinkctl '$SRC'/man/*.[1-8]"
check "hostel-protocol(7): the variant's shape is JSON" \
	grep -qF '.BI {"case": " name" ,\ "value": " payload" }' "$PROTO"
tap_finish
