#!/bin/sh
# startup.sh - startup of the real guests (issue 8): hostel
# (bench/startup.c) and, in the same run, jco 1.35 on Node as the peer
# (bench/startup.mjs) when node and npm are there.
#
#   make bench-startup                     # builds bench/startup, runs this
#   sh bench/startup.sh [--rounds N] [BUILDDIR]
#
# Guests: the 12 MB componentize-js guest tests/guests/js (greet) and the
# C reactor tests/guests/wasi/calc.  Targets (hostel): load (decode +
# validate + translate) < 300 ms, new store < 10 ms, first call < 20 ms.
# The machine is shared: both programs print CPU time beside wall time.
# jco goes to $GUESTS_SCRATCH (default /tmp/hostel-guests), never into
# the repository.  Never part of make check.
set -u
rounds=5
if test "${1:-}" = --rounds; then
	rounds=$2
	shift 2
fi
B=${1:-.}
here=$(cd "$(dirname "$0")" && pwd)
G=$here/../tests/guests
scratch=${GUESTS_SCRATCH:-/tmp/hostel-guests}

set -- \
	"$G/js/strings.component.wasm|hostel:jsguest/api@0.1.0|greet|\"bob\"" \
	"$G/wasi/calc.component.wasm|hostel:calc/api@0.1.0|greet|\"bob\""

if ! test -x "$B/bench/startup"; then
	echo "startup: $B/bench/startup is not built (make bench/startup)" >&2
	exit 1
fi
for g in "$@"; do
	IFS='|' read -r file iface fn arg <<-END
	$g
	END
	"$B/bench/startup" --rounds "$rounds" "$file" "$iface#$fn($arg)" ||
		exit 1
done

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "jco peer: node/npm missing; GUEST-TOOLCHAINS.md's figures for" \
		"the 12 MB guest: ~1 s transpile, 85 ms instantiate, 40 ms" \
		"first call"
	exit 0
fi
mkdir -p "$scratch" && cd "$scratch" || exit 1
if ! test -d node_modules/@bytecodealliance/jco; then
	test -f package.json || { npm init -y >/dev/null &&
		npm pkg set type=module; }
	npm install @bytecodealliance/jco@1.35.0 >&2 || exit 1
fi
cp "$here/startup.mjs" "$scratch/startup.mjs"
for g in "$@"; do
	IFS='|' read -r file iface fn arg <<-END
	$g
	END
	node startup.mjs --rounds "$rounds" "$file" "$iface" "$fn" "$arg" ||
		exit 1
done
