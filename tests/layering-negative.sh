#!/bin/sh
# layering-negative.sh - tests/layering.sh fails where it must.  On a copy
# of runtime/ and docs/architecture.md it passes as the tree is; then, one
# at a time, a file gets an include its row of the layer table forbids and
# the check must fail, naming that file: the static half of the Component
# Model including the run time (the cycle issue 19 removed), the Canonical
# ABI including the component AST, the value layer including the ABI,
# core wasm including the value layer, the engine including SQLite.
#
# Output is TAP-like; closes with "N passed, N failed".

set -u
NAME=layering-negative
SRC=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
. "$SRC/tests/tap.sh"
tap_tmpdir

copy() {
	rm -rf "$T/tree" &&
		mkdir -p "$T/tree/docs" &&
		cp "$SRC/docs/architecture.md" "$T/tree/docs/" &&
		cp -R "$SRC/runtime" "$T/tree/"
}
layering() {
	sh "$SRC/tests/layering.sh" "$T/tree" >"$T/out" 2>&1
}

copy || exit 99
check "the copy of the tree passes the check" layering

# bad FILE INCLUDE: FILE including INCLUDE fails the check, named.
bad() {
	copy || exit 99
	printf '#include %s\n' "$2" >>"$T/tree/$1"
	if layering; then
		not_ok "$1 including $2 fails the check"
	else
		check "$1 including $2 fails the check, named" \
			has "$T/out" "not ok"
		check "... the failure names $1" has "$T/out" "$1 includes"
	fi
}
bad runtime/component/types.c '"run/rt.h"'
bad runtime/cabi/abi.c '"component/types.h"'
bad runtime/value/val.c '"cabi/cabi.h"'
bad runtime/wasm/exec.c '"value/type.h"'
bad runtime/run/task.c '<sqlite3.h>'
tap_finish
