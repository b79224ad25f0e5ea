#!/bin/sh
# inspect-exports.sh - `hostel inspect` on every component binary of
# $HOSTEL_SHARED/cm-testsuite (issue 4: "hostel inspect on every
# instantiable component of the suite prints WIT that names every export
# with its type").
#
# Where the expected answers come from, and why.  The test must not echo
# our own decoder back, so it uses two sources that share no code with
# runtime/:
#
# 1. The reference implementation.  tests/inspect-exports.expected holds,
#    for every component the suite loads successfully (the files of its
#    `module`, `module_definition` and `assert_uninstantiable` commands),
#    the world-level `export` items of the WIT that wasm-tools prints for
#    it (`wasm-tools component wit`, run through jco's JS API by
#    `$0 --regenerate`; the tool version is in the file's header).  For
#    each such component our WIT must have exactly the same set of export
#    items, each normalised to one line (blank lines and indentation
#    dropped), so every export is named and carries the same type as the
#    reference gives it, nested interface bodies included.  A few suite
#    components have no WIT form for wasm-tools (it refuses them: exported
#    core modules, exported types, interface bodies with nested
#    instances...); the file marks them with "!" and the reason.
# 2. An independent binary reader, tests/cm-export-names.c (its own
#    LEB128 and export-section grammar, nothing from runtime/), lists each
#    component's top-level exports with their sorts.  Every one must appear
#    in our WIT as an item of that sort: `export N: func(...)` (or async),
#    `export N;` / `export N: ...` for an instance, a definition of N
#    after `// exported type:` for a type, `// export N: component` (core
#    module, value) for the sorts WIT cannot express.  This covers the
#    components of (1) that have no reference WIT and guards the reference
#    file against a suite that changed under it.
#
# Every other .wasm of the suite (assert_invalid / assert_malformed
# binaries) must be refused with exit status 3 and a "hostel inspect:"
# message, never a crash.  KNOWN below lists components whose WIT differs
# from the reference for a reason understood and not yet fixed; they are
# reported as TODO, and one that starts matching fails (remove it).
#
# Exit 0 when all pass, 1 otherwise, 77 (skip) without the suite, 99 when
# a program is missing.  `$0 --regenerate` rewrites the reference file; it
# needs node and JCO_API=/path/to/@bytecodealliance/jco/dist/api.js.

NAME=inspect-exports
B=${HOSTEL_BUILDDIR:-.}
SRC=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
SUITE=${HOSTEL_SHARED:-$SRC/../shared}/cm-testsuite
EXPECTED=$SRC/tests/inspect-exports.expected
HOSTEL=$B/client/hostel
NAMES=$B/tests/cm-export-names

# Components whose WIT is known to differ from wasm-tools', each with the
# reason (the list only shrinks; a listed one that matches fails).  None.
KNOWN=

# The world-level export items of a WIT text, one line each.  Input lines
# "### FILE" (regenerate mode) start a new file and are passed through.
NORMALISE='
/^### / { print; inw = 0; blk = ""; next }
/^!!! / { print; next }
/^world / { inw = 1; next }
/^}/ { inw = 0; next }
!inw { next }
{ sub(/[ \t\r]+$/, "") }
blk != "" {
	l = $0; sub(/^[ \t]+/, "", l)
	if (l != "") blk = blk " " l
	if ($0 ~ /^  }/) { print blk; blk = "" }
	next
}
/^  export / {
	l = $0; sub(/^  /, "", l)
	if (l ~ /;$/) print l; else blk = l
}'

if test "${1:-}" = --regenerate; then
	if ! test -d "$SUITE" || ! command -v node >/dev/null ||
		! test -r "${JCO_API:-}"; then
		echo "$0 --regenerate: needs $SUITE, node and" \
			"JCO_API=.../@bytecodealliance/jco/dist/api.js" >&2
		exit 2
	fi
	gen=$(mktemp "${TMPDIR:-/tmp}/inspect-exports.XXXXXX.mjs") || exit 1
	trap 'rm -f "$gen"' EXIT
	cat >"$gen" <<'EOF'
// The valid components of the suite (by its JSON commands) and the WIT
// wasm-tools gives each.  A refusal poisons the wasm-tools instance, so
// the remaining files go to a fresh process.
import { readFileSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
const { componentWit } = await import(process.env.JCO_API);
let files = process.argv.slice(3);
if (process.argv[2] === 'list') {
	const suite = process.env.SUITE, set = new Set();
	for (const d of readdirSync(suite, { withFileTypes: true })) {
		if (!d.isDirectory()) continue;
		for (const j of readdirSync(`${suite}/${d.name}`)) {
			if (!j.endsWith('.json')) continue;
			const s = JSON.parse(readFileSync(`${suite}/${d.name}/${j}`));
			for (const c of s.commands)
				if (['module', 'module_definition',
				     'assert_uninstantiable'].includes(c.type))
					set.add(`${d.name}/${c.filename}`);
		}
	}
	files = [...set].sort();
}
for (let i = 0; i < files.length; i++) {
	process.stdout.write(`### ${files[i]}\n`);
	try {
		const w = await componentWit(readFileSync(
			`${process.env.SUITE}/${files[i]}`));
		process.stdout.write(w.endsWith('\n') ? w : w + '\n');
	} catch (e) {
		process.stdout.write(`!!! ${String(e).split('\n')[0]}\n`);
		const r = spawnSync(process.argv[0],
			[process.argv[1], 'files', ...files.slice(i + 1)],
			{ stdio: ['ignore', 'inherit', 'ignore'] });
		process.exit(r.status);
	}
}
EOF
	ver=$(node -e 'const p=require(process.argv[1]);console.log(p.version)' \
		"$(dirname "$JCO_API")/../package.json" 2>/dev/null)
	{
		echo "# Reference for tests/inspect-exports.sh: the world-level"
		echo "# exports of wasm-tools' WIT (jco ${ver:-?}) for each valid"
		echo "# component of cm-testsuite.  Generated by"
		echo "# tests/inspect-exports.sh --regenerate; do not edit."
		SUITE=$SUITE node "$gen" list | awk "$NORMALISE" |
			sed -e 's/^### /= /' -e 's/^!!! /! wasm-tools: /'
	} >"$EXPECTED.tmp" && mv "$EXPECTED.tmp" "$EXPECTED"
	echo "wrote $EXPECTED: $(grep -c '^= ' "$EXPECTED") components"
	exit 0
fi

if ! test -d "$SUITE"; then
	echo "$NAME: SKIP: $SUITE is absent (set HOSTEL_SHARED)"
	exit 77
fi
. "$SRC/tests/tap.sh"
need_programs "$HOSTEL" "$NAMES"
if ! test -r "$EXPECTED"; then
	echo "$NAME: $EXPECTED is missing" >&2
	exit 99
fi
tap_tmpdir

# has_item FILE SORT NAME: FILE (our WIT) has an item of SORT called NAME.
has_item() {
	awk -v s="$2" -v n="$3" '
	function item(p) {
		return index($0, "  export " p) == 1 ||
			index($0, "  export %" p) == 1
	}
	s == "func" && (item(n ": func(") || item(n ": async func(")) { f = 1 }
	s == "instance" && ($0 == "  export " n ";" || item(n ": ")) { f = 1 }
	s == "type" && typed {
		w = $2; sub(/^%/, "", w); sub(/[;{]$/, "", w)
		if (w == n) f = 1
	}
	{ typed = ($0 == "  // exported type:") }
	s == "component" && $0 == "  // export " n ": component" { f = 1 }
	s == "core-module" && $0 == "  // export " n ": core module" { f = 1 }
	s == "value" && $0 == "  // export " n ": value" { f = 1 }
	END { exit !f }' "$1"
}

# split OUT DIR: the sections of a several-file output ("==> PATH <=="
# lines, hostel inspect and cm-export-names) into DIR/1, DIR/2, ... in
# order; DIR/N is absent for a file with no section.
split() {
	rm -rf "$2"
	mkdir -p "$2"
	awk -v d="$2" '/^==> .* <==$/ { n++; f = d "/" n; printf "" >f; next }
		n { print >f }' "$1"
}

valid=$T/valid
sed -n 's/^= //p' "$EXPECTED" >"$valid"
# One process for all of them (737 under Valgrind took 21 minutes one
# process each); a file that fails says so on stderr, the rest go on.
: >"$T/present"
for f in $(cat "$valid"); do
	if test -r "$SUITE/$f"; then
		echo "$SUITE/$f" >>"$T/present"
	else
		not_ok "$f: listed in $EXPECTED but absent from the suite"
	fi
done
# (a second, unreadable path keeps the output in sections for a list of one)
"$HOSTEL" inspect $(cat "$T/present") /dev/null/none >"$T/all.wit" 2>"$T/all.err"
rc=$?
check "hostel inspect of every valid component ends with exit 3 (the last, unreadable, path) ($rc)" \
	test "$rc" -eq 3
split "$T/all.wit" "$T/wit.d"
"$NAMES" $(cat "$T/present") /dev/null/none >"$T/all.names" 2>"$T/names.err"
split "$T/all.names" "$T/names.d"
k=0
for f in $(cat "$valid"); do
	why=
	test -r "$SUITE/$f" || continue
	k=$((k + 1))
	if grep -qF "hostel inspect: $SUITE/$f: " "$T/all.err" ||
		! test -f "$T/wit.d/$k"; then
		not_ok "$f: hostel inspect failed: $(grep -F "$SUITE/$f: " "$T/all.err" | head -n 1)"
		continue
	fi
	cp "$T/wit.d/$k" "$T/wit"
	# (2) every export the independent reader finds, with its sort.
	if grep -qF "$SUITE/$f: " "$T/names.err" || ! test -f "$T/names.d/$k"; then
		not_ok "$f: cm-export-names cannot read it"
		continue
	fi
	cp "$T/names.d/$k" "$T/names"
	nn=0
	while read -r sort name; do
		nn=$((nn + 1))
		has_item "$T/wit" "$sort" "$name" ||
			why="$why; no $sort item named '$name'"
	done <"$T/names"
	# (1) the export items against wasm-tools' WIT.
	awk -v f="$f" '$0 == "= " f { on = 1; next } /^= / { on = 0 } on' \
		"$EXPECTED" >"$T/exp"
	ref="export items match wasm-tools' WIT"
	if grep -q '^! ' "$T/exp"; then
		ref="no WIT from wasm-tools ($(sed -n 's/^! wasm-tools: //p' "$T/exp"))"
	else
		awk "$NORMALISE" "$T/wit" | sort >"$T/got"
		sort "$T/exp" >"$T/want"
		if ! cmp -s "$T/got" "$T/want"; then
			why="$why; export items differ from wasm-tools':"
			why="$why$(diff "$T/want" "$T/got" | sed -n 's/^\([<>]\)/ \1/p' |
				tr '\n' ' ' | cut -c1-400)"
		fi
	fi
	known=
	case " $KNOWN " in *" $f "*) known=1 ;; esac
	if test -z "$why" && test -n "$known"; then
		not_ok "$f: matches now: remove it from KNOWN"
	elif test -z "$why"; then
		ok "$f: $nn exports named with their sorts; $ref"
	elif test -n "$known"; then
		ok "$f # TODO known difference${why}"
	else
		not_ok "$f${why}"
	fi
done

# Every other binary of the suite is invalid: refused cleanly, each with
# its message (one process a folder; a crash would end it short of 3).
for d in "$SUITE"/*/; do
	d=$(basename "$d")
	nr=0 bad=
	: >"$T/invalid"
	for w in "$SUITE/$d"/*.wasm; do
		test -e "$w" || continue
		grep -qxF "$d/$(basename "$w")" "$valid" && continue
		nr=$((nr + 1))
		echo "$w" >>"$T/invalid"
	done
	test $nr -gt 0 || continue
	"$HOSTEL" inspect $(cat "$T/invalid") /dev/null/none >"$T/out" 2>"$T/err"
	rc=$?
	test $rc -eq 3 || bad=" (exit $rc)"
	for w in $(cat "$T/invalid"); do
		grep -qF "hostel inspect: $w: " "$T/err" ||
			bad="$bad $(basename "$w")(no message)"
	done
	# (nothing but the section lines on standard output)
	grep -qv '^==> .* <==$' "$T/out" && bad="$bad (output for an invalid binary)"
	if test -z "$bad"; then
		ok "$d/: $nr invalid binaries refused with exit 3 and a message"
	else
		not_ok "$d/: not refused cleanly:$bad"
	fi
done
tap_finish
