#!/bin/sh
# traps-doc.sh - every trap message of runtime/ is listed in
# docs/traps.md (issue 21 point 5); tests/traps-doc.py does the reading.
# Exit 0 when all are, 1 otherwise, 77 without python3.
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
PY=${HOSTEL_PYTHON:-/usr/bin/python3}
test -x "$PY" || {
	echo "traps-doc: $PY is missing" >&2
	exit 77
}
exec "$PY" "$S/tests/traps-doc.py" "$S"
