#!/bin/sh
# wasi-run.sh - `hostel run` on real WASI 0.2 guests (tests/guests/wasi,
# built by tests/guests/build.sh; binaries committed): a C command with
# the 0.2.12 and the 0.2.0 preview1 adapter (stdout, stderr, arguments,
# environment, a file read and a file written in a --dir preopen, a
# clock sleep, random bytes, exit codes), filesystem confinement (`..`,
# absolute paths and symlinks out of the preopen fail, symlinks inside
# work), a reactor with a custom world called with --invoke, and a C
# reactor calling WASI 0.2 pollables directly (p2poll).  The
# same command as a wasi_snapshot_preview1 core module (hello-preview1)
# must behave the same, except that preview1 exit codes are exact;
# a preview1 module holding files open stops at the open-files limit
# (tests/guests/hostile/p1files).
#
# Output is TAP-like ("ok N - ..."); exit 0 when all pass, 1 otherwise,
# 99 when the client is not built.

set -u

B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
HOSTEL=$B/client/hostel
G=$S/tests/guests/wasi
if ! test -x "$HOSTEL"; then
	echo "wasi-run: $HOSTEL is not built" >&2
	exit 99
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/hostel-wasi.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT

n=0
fail=0
nfailed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
bad() { n=$((n + 1)); fail=1; nfailed=$((nfailed + 1)); echo "not ok $n - $1"; }

# check NAME EXPECTED-RC FILE-WITH-EXPECTED-STDOUT-LINES -- hostel args
# runs hostel, compares the exit code and that every expected line
# appears in stdout.
check() {
	name=$1 want_rc=$2 want=$3
	shift 4
	"$HOSTEL" run "$@" >"$T/out" 2>"$T/err"
	rc=$?
	if test "$rc" != "$want_rc"; then
		bad "$name: exit $rc, expected $want_rc"
		sed 's/^/# /' "$T/err"
		return
	fi
	missing=
	while IFS= read -r line; do
		grep -qxF -- "$line" "$T/out" || missing="$missing [$line]"
	done <"$want"
	if test -n "$missing"; then
		bad "$name: stdout lacks$missing"
		sed 's/^/# /' "$T/out"
	else
		ok "$name"
	fi
}

mkdir -p "$T/data/sub" "$T/outside"
echo "hello from the input file" >"$T/data/input.txt"
echo "secret" >"$T/outside/secret.txt"
echo "inner" >"$T/data/sub/in.txt"
ln -s ../outside/secret.txt "$T/data/escape-link"
ln -s "$T/outside/secret.txt" "$T/data/abs-link"
ln -s ../input.txt "$T/data/sub/up-link"
ln -s .. "$T/data/sub/parent"
ln -s ../.. "$T/data/sub/grandparent"

for v in 0.2.12 0.2.0 preview1; do
	C=$G/hello-$v.component.wasm
	exit3=1 # WASI 0.2 exit carries only ok/err: a nonzero code exits 1
	if test "$v" = preview1; then
		C=$G/hello-preview1.wasm
		exit3=3
	fi
	rm -f "$T/data/output.txt"
	cat >"$T/want" <<-EOF
	hello from C, argc=4
	arg[1]=0
	arg[2]=two words
	arg[3]=ünïcode
	GREETING=hi there
	open /data/input.txt: ok: hello from the input file
	write /data/output.txt: ok
	slept>=2ms: yes
	random ok
	EOF
	check "$v: command prints args, env, reads the preopen" 0 "$T/want" -- \
		--dir "$T/data::/data" --env "GREETING=hi there" \
		"$C" 0 "two words" "ünïcode"
	if test "$(cat "$T/data/output.txt" 2>/dev/null)" = \
		"written by the guest"; then
		ok "$v: the guest wrote a file in the preopen"
	else
		bad "$v: output.txt not written"
	fi
	if grep -qxF "this goes to stderr" "$T/err"; then
		ok "$v: stderr reaches the process's stderr"
	else
		bad "$v: stderr missing"
	fi
	printf 'GREETING=(unset)\n' >"$T/want"
	check "$v: exit code 3 from main is $exit3" $exit3 "$T/want" -- "$C" 3
	check "$v: no preopen: the file read fails, exit 0" 0 "$T/want" -- \
		"$C" 0

	printf 'open /data/input.txt: ok: hello from the input file\n' \
		>"$T/want"
	check "$v: plain open" 0 "$T/want" -- --dir "$T/data::/data" \
		"$C" open /data/input.txt
	printf 'open /data/sub/up-link: ok: hello from the input file\n' \
		>"$T/want"
	check "$v: symlink staying inside is followed" 0 "$T/want" -- \
		--dir "$T/data::/data" "$C" open /data/sub/up-link
	printf 'open /data/sub/parent/input.txt: ok: hello from the input file\n' \
		>"$T/want"
	check "$v: symlink to a parent inside the preopen" 0 "$T/want" -- \
		--dir "$T/data::/data" "$C" open /data/sub/parent/input.txt
	for p in escape-link abs-link sub/grandparent/outside/secret.txt; do
		printf 'open /data/%s: error Operation not permitted\n' "$p" \
			>"$T/want"
		check "$v: escape through $p fails" 1 "$T/want" -- \
			--dir "$T/data::/data" "$C" open "/data/$p"
	done
	# guest-side `..` above the preopen: libc leaves no preopen to match
	"$HOSTEL" run --dir "$T/data::/data" "$C" open \
		/data/../outside/secret.txt >"$T/out" 2>&1
	if test $? = 1 && ! grep -q 'ok: secret' "$T/out" &&
		grep -q '^open .*: error' "$T/out"; then
		ok "$v: .. above the preopen fails"
	else
		bad "$v: .. above the preopen: $(cat "$T/out")"
	fi
	printf 'open /etc/passwd: error Capabilities insufficient\n' >"$T/want"
	check "$v: absolute host path outside every preopen fails" 1 \
		"$T/want" -- --dir "$T/data::/data" "$C" open /etc/passwd
	"$HOSTEL" run --dir "$T/data::/data" "$C" write \
		/data/../escaped.txt >/dev/null 2>&1
	if test -e "$T/escaped.txt"; then
		bad "$v: a write escaped the preopen"
	else
		ok "$v: writing through .. does not escape"
	fi
done

R=$G/calc.component.wasm
printf '42\n' >"$T/want"
check "reactor: add" 0 "$T/want" -- --invoke 'hostel:calc/api@0.1.0#add(2, 40)' "$R"
printf '"hello, bob!"\n' >"$T/want"
check "reactor: greet" 0 "$T/want" -- \
	--invoke 'hostel:calc/api@0.1.0#greet("bob")' "$R"
printf 'log: from wasi\n' >"$T/want"
check "reactor: WASI stdout from an export" 0 "$T/want" -- \
	--invoke 'hostel:calc/api@0.1.0#log-now("from wasi")' "$R"

# p2poll: C calling wasi:io/poll@0.2.12 and monotonic-clock
# subscribe-duration directly (no adapter): wait-all polls until every
# pollable was ready and returns the ns that passed
P=$G/p2poll.component.wasm
API=hostel:poll/api@0.1.0
"$HOSTEL" run --invoke "$API#wait-all([30, 10, 60, 20])" "$P" \
	>"$T/out" 2>"$T/err"
rc=$?
ns=$(cat "$T/out")
case $ns in '' | *[!0-9]*) ns=-1 ;; esac
if test $rc = 0 && test "$ns" -ge 60000000 && test "$ns" -lt 2000000000; then
	ok "p2poll: wait-all([30, 10, 60, 20]) took >= 60 ms ($ns ns)"
else
	bad "p2poll: wait-all: exit $rc, $(cat "$T/out" "$T/err")"
fi
printf '0\n' >"$T/want"
check "p2poll: poll-count([]) polls nothing" 0 "$T/want" -- \
	--invoke "$API#poll-count([])" "$P"
printf '1\n' >"$T/want"
check "p2poll: three ready pollables need one poll" 0 "$T/want" -- \
	--invoke "$API#poll-count([0, 0, 0])" "$P"
"$HOSTEL" run --invoke "$API#poll-count([100, 10])" "$P" >"$T/out" 2>&1
if test "$(cat "$T/out")" = 2; then
	ok "p2poll: 10 ms and 100 ms pollables become ready in two polls"
else
	bad "p2poll: poll-count([100, 10]): $(cat "$T/out")"
fi
printf 'true\n' >"$T/want"
check "p2poll: pollable.ready of a 0 ms subscription" 0 "$T/want" -- \
	--invoke "$API#ready-now(0)" "$P"
printf 'false\n' >"$T/want"
check "p2poll: pollable.ready of a 60 s subscription" 0 "$T/want" -- \
	--invoke "$API#ready-now(60000)" "$P"

"$HOSTEL" run --dir "$T/nonexistent::/x" "$G/hello-0.2.12.component.wasm" \
	>/dev/null 2>"$T/err"
if test $? = 2 && grep -q nonexistent "$T/err"; then
	ok "a missing --dir is a usage error"
else
	bad "missing --dir: $(cat "$T/err")"
fi

# preview1: --invoke runs the export with the same WASI context
printf 'arg[1]=5\n' >"$T/want"
check "preview1: --invoke '_start()' exits with proc_exit's code" 5 \
	"$T/want" -- --invoke '_start()' "$G/hello-preview1.wasm" 5
# preview1 bounds (issue 18, docs/limits.md): a 5000-byte path is
# nametoolong before the host copies it, and the 1025th file held open
# is errno mfile (exit 33; 100 or 101 say which bound failed)
mkdir -p "$T/p1files"
: >"$T/want"
check "preview1: long paths refused, open files stop at 1024 (mfile)" 33 \
	"$T/want" -- --dir "$T/p1files::/p1" "$S/tests/guests/hostile/p1files.wasm"
# paid WHAT GUEST CALL N TRAP: the host's work for GUEST's CALL (N rounds
# of it) is paid in fuel: under --fuel 100000 it traps TRAP, under
# 100000000 it returns N
paid() {
	"$HOSTEL" run --fuel 100000 --invoke "$3" "$2" >/dev/null 2>"$T/err"
	if test $? = 1 && grep -q "$5" "$T/err"; then
		ok "$1 under --fuel 100000: $5"
	else
		bad "$1 took no fuel: $(cat "$T/err")"
	fi
	got=$("$HOSTEL" run --fuel 100000000 --invoke "$3" "$2" 2>&1)
	if test "$got" = "$4"; then
		ok "$1 under --fuel 100000000: all $4 rounds run"
	else
		bad "$1 under enough fuel: $got"
	fi
}
# a preview1 call's work in guest memory: two random_get of 64 MiB take
# 2 x 4 Mi units (runtime/wasi/preview1.c)
paid "preview1: two 64 MiB random_get" \
	"$S/tests/guests/hostile/p1random.wasm" 'rounds(2)' 2 'out of fuel'
# a lowered WASI 0.2 call's result written into guest memory: three
# get-random-bytes of 1 MiB take 3 x 64 Ki units (cabi/cx.c)
paid "wasi 0.2: three 1 MiB get-random-bytes" \
	"$S/tests/guests/hostile/randomwork.wasm" 'spin(3)' 3 'all fuel consumed'
# a core module without WASI imports takes no arguments or preopens
"$HOSTEL" run "$S/tests/guests/core/demo.wasm" extra >/dev/null 2>"$T/err"
if test $? = 2 && grep -q 'need a WASI' "$T/err"; then
	ok "arguments to a core module without WASI are a usage error"
else
	bad "core module with arguments: $(cat "$T/err")"
fi

echo "1..$n"
echo "$((n - nfailed)) passed, $nfailed failed"
exit $fail
