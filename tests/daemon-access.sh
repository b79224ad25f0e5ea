#!/bin/sh
# daemon-access.sh - the access policy with a real hosteld and callers
# of other uids (setpriv, so the test needs root; it skips otherwise):
# the socket is created 0660 with the configured group, a caller outside
# that group cannot connect, roles from allow-call / allow-deploy /
# allow-admin gate the methods (PermissionDenied, exit 77), a service a
# deployer creates belongs to it so a second user can neither call it,
# manage it nor read its history, while services that belong to nobody
# stay callable; unknown principals are refused at start and on reload
# (which keeps the running policy).
#
# Output is TAP-like; exit 0 when all pass, 1 otherwise, 77 (skip) when
# not root or without setpriv, 99 when the programs are not built.

set -u

B=${HOSTEL_BUILDDIR:-.}
NAME=daemon-access
. "${HOSTEL_SRCDIR:-$(dirname "$0")/..}/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$(cd "$(dirname "$B/client/hostel")" && pwd)/hostel
MK=$B/tests/guests/mkcomponent
need_programs "$HOSTELD" "$HOSTEL" "$MK"

if test "$(id -u)" -ne 0; then
	echo "$NAME: SKIP: needs root to act as other uids (setpriv)"
	exit 77
fi
if ! command -v setpriv >/dev/null 2>&1; then
	echo "$NAME: SKIP: setpriv (util-linux) is not installed"
	exit 77
fi

tap_tmpdir
chmod 755 "$T"

# Uids and gids with no passwd entry: numeric principals need none.
GRP=40001    # the socket's group
CALLER=40002 # allow-call
DEPLOY=40003 # allow-deploy
OTHER=40004  # allow-deploy too: the second user
NOBODY=40010 # in the socket's group, in no allow list
OUTSIDE=40009

SOCK=$T/h.sock
STATE=$T/state
LOG=$T/hosteld.log
CONF=$T/hostel.conf
cat >"$CONF" <<EOF
socket-group = $GRP
allow-call = $CALLER
allow-deploy = $DEPLOY, $OTHER
allow-admin = none
EOF

# as UID GID COMMAND...: hostel as another user.
as() {
	a_uid=$1
	a_gid=$2
	shift 2
	setpriv --reuid="$a_uid" --regid="$a_gid" --clear-groups \
		"$HOSTEL" --socket "$SOCK" "$@"
}
# rc_is N COMMAND...: the command exits with N.
rc_is() {
	r_want=$1
	shift
	"$@" >"$T/last.out" 2>"$T/last.err"
	r_got=$?
	test "$r_got" -eq "$r_want" || {
		echo "# expected exit $r_want, got $r_got" >&2
		cat "$T/last.err" >&2
		return 1
	}
}

"$MK" counter "$T/counter.wasm" || exit 99
chmod 644 "$T/counter.wasm"

"$HOSTELD" --foreground --config "$CONF" --socket "$SOCK" \
	--state-dir "$STATE" 2>>"$LOG" &
DPID=$!
PIDS="$PIDS $DPID"
wait_for 10 H status >/dev/null || {
	echo "$NAME: hosteld did not start" >&2
	cat "$LOG" >&2
	exit 1
}

# ---- the socket ------------------------------------------------------------
check "the socket is 0660" test "$(stat -c %a "$SOCK")" = 660
check "the socket has the configured group" \
	test "$(stat -c %g "$SOCK")" = "$GRP"
rc_is 69 as $OUTSIDE $OUTSIDE status
check "a caller outside the socket's group cannot connect" test $? -eq 0

# ---- roles -----------------------------------------------------------------
rc_is 0 as $NOBODY $GRP status
check "anyone who can connect gets the daemon's status" test $? -eq 0
rc_is 77 as $NOBODY $GRP ps
check "a caller in no allow list cannot list services (exit 77)" \
	test $? -eq 0
check "the refusal says PermissionDenied" has "$T/last.err" \
	PermissionDenied
check "the daemon logs the refusal" has "$LOG" \
	"io.hostel.Service.List refused to uid $NOBODY"

rc_is 77 as $NOBODY $GRP metrics
check "nor read the metrics (exit 77)" test $? -eq 0

rc_is 0 H deploy "$T/counter.wasm" --name pub
check "root deploys a service that belongs to nobody" test $? -eq 0
rc_is 0 as $CALLER $GRP ps
check "a caller lists services" test $? -eq 0
rc_is 0 as $CALLER $GRP metrics
check "a caller reads the metrics" has "$T/last.out" 'service="pub"'
check "the list shows the public service" has "$T/last.out" pub
rc_is 0 as $CALLER $GRP call pub 'inc()'
check "a caller calls a service that belongs to nobody" test $? -eq 0
rc_is 77 as $CALLER $GRP deploy "$T/counter.wasm" --name c1
check "a caller cannot deploy" test $? -eq 0
rc_is 77 as $CALLER $GRP stop pub
check "a caller cannot stop a service" test $? -eq 0
rc_is 77 as $DEPLOY $GRP stop pub
check "a deployer cannot stop a service that is not its own" test $? -eq 0

# ---- ownership ---------------------------------------------------------------
rc_is 0 as $DEPLOY $GRP deploy "$T/counter.wasm" --name mine
check "a deployer deploys" test $? -eq 0
rc_is 0 as $DEPLOY $GRP call mine 'add(2, 3)'
check "the owner calls its service" test $? -eq 0
check "and gets its result" has "$T/last.out" 5
H ps --json >"$T/ps.json" 2>&1
check "the service belongs to the deployer" \
	grep -q "\"owner\": *$DEPLOY" "$T/ps.json"

rc_is 77 as $OTHER $GRP call mine 'inc()'
check "a second user is refused a call to it" test $? -eq 0
rc_is 77 as $OTHER $GRP inspect mine
check "a second user cannot inspect it" test $? -eq 0
rc_is 77 as $OTHER $GRP stop mine
check "a second user cannot stop it" test $? -eq 0
rc_is 77 as $OTHER $GRP logs mine
check "a second user cannot read its history" test $? -eq 0
rc_is 0 as $OTHER $GRP ps
check "a second user lists services" test $? -eq 0
check "without the other user's service" sh -c "! grep -q mine '$T/last.out'"
rc_is 77 as $CALLER $GRP call mine 'inc()'
check "a plain caller is refused it too" test $? -eq 0

rc_is 0 as $DEPLOY $GRP logs mine
check "the owner reads its history" test $? -eq 0
check "which holds its call" has "$T/last.out" call.returned
rc_is 0 as $DEPLOY $GRP call mine 'get()'
check "the refused calls never ran" test "$(cat "$T/last.out")" = 0
rc_is 0 H call mine 'inc()'
check "root (admin) calls any service" test $? -eq 0
rc_is 0 as $DEPLOY $GRP stop mine
check "the owner stops its service" test $? -eq 0

# ---- configuration errors ----------------------------------------------------
cat >"$CONF" <<EOF
socket-group = $GRP
allow-call = no-such-user-hostel
EOF
kill -HUP "$DPID"
wait_for 5 grep -q "no-such-user-hostel" "$LOG"
check "a reload with an unknown user is refused and logged" test $? -eq 0
rc_is 77 as $NOBODY $GRP ps
check "and the running policy is kept" test $? -eq 0

"$HOSTELD" --foreground --config "$CONF" --socket "$T/2.sock" \
	--state-dir "$T/state2" 2>"$T/bad.log"
check "hosteld refuses to start with an unknown user" test $? -ne 0
check "naming the key and the user" \
	has "$T/bad.log" "allow-call: unknown user 'no-such-user-hostel'"
printf 'allow-admin = al!ce\n' >"$CONF"
"$HOSTELD" --foreground --config "$CONF" --socket "$T/3.sock" \
	--state-dir "$T/state3" 2>"$T/bad3.log"
check "a malformed principal is a configuration error" test $? -ne 0
check "naming the line" has "$T/bad3.log" "hostel.conf:1: allow-admin"

kill -TERM "$DPID"
wait "$DPID"
tap_finish "$LOG"
