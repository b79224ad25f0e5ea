#!/bin/sh
# layering.sh - every #include stays within its layer's "may use" column
# (issue 19 point 6).  The table is read from docs/architecture.md
# ("## Layers"), so the document is the single source: a file may include
# headers of its own folder, config.h, the C library, and what its row
# names (a folder `x/`, a header `x/y.h`, an external `<lib.h>` or
# `<dir/>`, "the runtime API": the headers of "### The runtime API").
# External headers no row names (libc, libm) are not restricted.  Rows
# whose column says "anything" are not checked.
#
# Usage: layering.sh [TREE]: TREE (default HOSTEL_SRCDIR or ..) is the
# source tree to check, with its own docs/architecture.md.
#
# Output is TAP-like: one line per layer, one per include out of its
# layer; closes with "N passed, N failed".

set -u
NAME=layering
SRC=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
. "$SRC/tests/tap.sh"
TREE=${1:-$SRC}
DOC=$TREE/docs/architecture.md

if ! test -r "$DOC"; then
	echo "$NAME: $DOC is missing" >&2
	exit 99
fi

# The table as lines "LAYER<tab>TOKEN": TOKEN is a backticked item of the
# row's "may use" column, "API" for "the runtime API", "ANY" for anything;
# and "API<tab>HEADER" for each header of the runtime API.
RULES=$(awk -F'|' '
	/^## / { sec = $0 }
	/^### / { sub3 = $0 }
	/^## Layers/ { sub3 = "" }
	function ticks(s, out,   n) {
		n = 0
		while (match(s, /`[^`]*`/)) {
			out[++n] = substr(s, RSTART + 1, RLENGTH - 2)
			s = substr(s, RSTART + RLENGTH)
		}
		return n
	}
	sec ~ /^## Layers/ && sub3 == "" && /^\| `/ {
		nl = ticks($2, layers)
		nu = ticks($4, uses)
		for (i = 1; i <= nl; i++) {
			if ($4 ~ /anything/) print layers[i] "\tANY"
			if ($4 ~ /the runtime API/) print layers[i] "\tAPI"
			for (j = 1; j <= nu; j++) print layers[i] "\t" uses[j]
			if (nu == 0) print layers[i] "\tNONE"
		}
	}
	sub3 ~ /^### The runtime API/ && /^\| `/ {
		if (ticks($2, h) > 0) print "API\t" h[1]
	}
' "$DOC")

nlayers=$(printf '%s\n' "$RULES" | awk -F'\t' '$1 != "API"' | cut -f1 | sort -u | wc -l)
napi=$(printf '%s\n' "$RULES" | awk -F'\t' '$1 == "API"' | wc -l)
check "docs/architecture.md has a layer table ($nlayers layers)" test "$nlayers" -gt 0
check "docs/architecture.md lists the runtime API ($napi headers)" test "$napi" -gt 0

# Every include of every .c/.h of a checked layer, as
# "LAYER<tab>FILE<tab>KIND<tab>TARGET" (KIND q: "x", a: <x>).
unchecked=$(printf '%s\n' "$RULES" | awk -F'\t' '$2 == "ANY" { print $1 }' | tr '\n' ' ')
layers=
for L in $(printf '%s\n' "$RULES" | awk -F'\t' '$1 != "API"' | cut -f1 | sort -u); do
	case " $unchecked " in *" $L "*) continue ;; esac
	test -d "$TREE/$L" || continue
	test -n "$(find "$TREE/$L" -name '*.[ch]' -type f | head -1)" || continue
	layers="$layers $L"
done
for L in $layers; do
	(cd "$TREE" && find "$L" -name '*.[ch]' -type f | sort) | while read -r f; do
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/q\t\1/p; s/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\([^>]*\)>.*/a\t\1/p' "$TREE/$f" |
			while IFS='	' read -r kind target; do
				printf '%s\t%s\t%s\t%s\n' "$L" "$f" "$kind" "$target"
			done
	done
done >"${TMPDIR:-/tmp}/layering.$$"
INCS=${TMPDIR:-/tmp}/layering.$$
trap 'rm -f "$INCS"' EXIT

# Resolve quoted includes the way the build does (-I runtime, -I .), then
# judge each against the rules.
VERDICTS=$(printf '%s\n' "$RULES" | awk -F'\t' -v tree="$TREE" '
	function exists(p) { return (system("test -f \"" tree "/" p "\"") == 0) }
	NR == FNR {
		if ($1 == "API") api[$2] = 1
		else {
			rules[$1] = rules[$1] "\n" $2
			if ($2 ~ /^</) ext[$2] = 1
		}
		next
	}
	function allowed(layer, path,   n, toks, i, t) {
		n = split(rules[layer], toks, "\n")
		for (i = 1; i <= n; i++) {
			t = toks[i]
			if (t == "API" && (path in api)) return 1
			if (t ~ /\/$/ && index(path, t) == 1) return 1
			if (t == path) return 1
		}
		return 0
	}
	function extallowed(layer, hdr,   n, toks, i, t, e, restricted) {
		restricted = 0
		for (e in ext) {
			t = substr(e, 2, length(e) - 2)
			if (hdr == t || (t ~ /\/$/ && index(hdr, t) == 1))
				restricted = 1
		}
		if (!restricted) return 1
		n = split(rules[layer], toks, "\n")
		for (i = 1; i <= n; i++) {
			if (toks[i] !~ /^</) continue
			t = substr(toks[i], 2, length(toks[i]) - 2)
			if (hdr == t || (t ~ /\/$/ && index(hdr, t) == 1)) return 1
		}
		return 0
	}
	{
		layer = $1; file = $2; kind = $3; target = $4
		count[layer]++
		if (kind == "a") {
			if (!extallowed(layer, target))
				print "BAD\t" file " includes <" target ">: layer " layer " may not use it"
			next
		}
		if (target == "config.h") next
		dir = file; sub(/\/[^\/]*$/, "", dir)
		if (exists("runtime/" target)) path = "runtime/" target
		else if (exists(target)) path = target
		else if (exists(dir "/" target)) path = dir "/" target
		else {
			print "BAD\t" file " includes \"" target "\", which is no file of the tree"
			next
		}
		if (index(path, layer) == 1) next
		if (!allowed(layer, path))
			print "BAD\t" file " includes \"" target "\" (" path "): layer " layer " may not use it"
	}
	END { for (l in count) print "LAYER\t" l "\t" count[l] }
' - "$INCS")

for L in $layers; do
	c=$(printf '%s\n' "$VERDICTS" | awk -F'\t' -v l="$L" '$1 == "LAYER" && $2 == l { print $3 }')
	bad=$(printf '%s\n' "$VERDICTS" | awk -F'\t' -v l="$L" '$1 == "BAD" && index($2, l) == 1' | wc -l)
	check "$L: ${c:-0} includes, $bad out of its row" test "$bad" -eq 0
done
while IFS='	' read -r tag msg; do
	test "$tag" = BAD && not_ok "$msg"
done <<EOF
$VERDICTS
EOF
tap_finish
