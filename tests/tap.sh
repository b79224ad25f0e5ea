# tap.sh - shared helpers of hostel's shell tests; sourced, not run.
#
# A test script sets NAME, sources this file, calls need_programs and
# tap_tmpdir, makes its checks with check/ok/not_ok, and ends with
# tap_finish.  Output is TAP-like ("ok N - ...") and closes with the line
# "N passed, N failed"; the exit status is 0 when all passed, 1 otherwise,
# 99 (automake's hard error) when a program is missing.  KEEP=1 keeps the
# temporary directory for a post-mortem.  Its own variables are tap_*
# (and `failed`, PIDS, T), so a test's `n` or `i` cannot renumber its
# checks.

tap_n=0
failed=0
PIDS=
# Every hosteld a test starts checks its stores' written maps at each
# image of durability commit (daemon/durable.c verify_maps: a changed
# page no map marked aborts it); HOSTEL_SNAPSHOT_VERIFY=0 turns it off
# (scripts/test --valgrind: memcheck would read every page of every
# store at every commit).
export HOSTEL_SNAPSHOT_VERIFY="${HOSTEL_SNAPSHOT_VERIFY-1}"

ok() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $1"
}
not_ok() {
	tap_n=$((tap_n + 1))
	failed=$((failed + 1))
	echo "not ok $tap_n - $1"
}
# H ARGS...: the client on this test's daemon ($HOSTEL, $SOCK).
H() {
	"$HOSTEL" --socket "$SOCK" "$@"
}
# alive: that daemon answers (a test with several daemons redefines it).
alive() {
	H status >/dev/null 2>&1
}
# eq GOT WANT: equal, or say what was found.
eq() {
	test "$1" = "$2" || {
		echo "# expected '$2', got '$1'" >&2
		return 1
	}
}
# check DESCRIPTION COMMAND...: the command's status decides.
check() {
	c_desc=$1
	shift
	if "$@"; then ok "$c_desc"; else not_ok "$c_desc"; fi
}
# has FILE TEXT: FILE contains TEXT (a fixed string).
has() {
	grep -qF -- "$2" "$1"
}
# wait_for SECONDS COMMAND...: poll until the command succeeds.
wait_for() {
	w_tries=$(($1 * 20))
	shift
	while ! "$@" 2>/dev/null; do
		w_tries=$((w_tries - 1))
		test "$w_tries" -gt 0 || return 1
		sleep 0.05
	done
}
# need_programs PROGRAM...: each must be built.
need_programs() {
	for p in "$@"; do
		if ! test -x "$p"; then
			echo "$NAME: $p is not built" >&2
			exit 99
		fi
	done
}
# tap_tmpdir: T is a new temporary directory; at exit the processes in
# PIDS are killed and T is removed (unless KEEP is set).
tap_tmpdir() {
	T=$(mktemp -d "${TMPDIR:-/tmp}/hostel-$NAME.XXXXXX") || exit 99
	trap tap_cleanup EXIT
	test -n "${KEEP:-}" && trap - EXIT
	trap 'exit 1' INT TERM
}
tap_cleanup() {
	for p in $PIDS; do
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$T"
}
# tap_finish [LOG]: the closing lines; on failure LOG (a daemon log) is
# shown on stderr.
tap_finish() {
	echo "1..$tap_n"
	echo "$((tap_n - failed)) passed, $failed failed"
	if test "$failed" -ne 0; then
		if test -n "${1:-}" && test -r "$1"; then
			echo "$NAME: daemon log:" >&2
			cat "$1" >&2
		fi
		exit 1
	fi
	exit 0
}
