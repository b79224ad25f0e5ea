#!/bin/sh
# cxx-guest.sh - C++ exceptions from a real toolchain (Emscripten's
# -fwasm-exceptions: the legacy exception-handling instructions try,
# catch, catch_all, rethrow and delegate) and the engine's own cases of
# them:
#  - tests/wasm/legacy-exceptions.json (hostel's script, every rule) and
#    legacy-mixed.json (the legacy instructions beside try_table);
#  - tests/guests/cxx/exceptions.wasm, a wasi_snapshot_preview1 command
#    (sort, unwinding through 10 frames with destructors, std::stoi,
#    vector::at, rethrow with `throw;`, a throw inside a handler, catch
#    by base class and by value, 1000 throws in a loop) under `hostel
#    run`: its output is exceptions.expected, which is what V8 prints
#    for it (node's WASI; jco refuses components with exceptions);
#  - tests/guests/cxx/calc.component.wasm, a reactor component whose
#    errors are C++ exceptions caught at its exports, every call of
#    cxx/calls.tsv under `hostel run --invoke` and as a service.

set -u
NAME=cxx-guest
B=${HOSTEL_BUILDDIR:-.}
S=${HOSTEL_SRCDIR:-$(dirname "$0")/..}
. "$S/tests/tap.sh"
HOSTELD=$B/daemon/hosteld
HOSTEL=$B/client/hostel
need_programs "$HOSTELD" "$HOSTEL"
G=$S/tests/guests/cxx
tap_tmpdir
SOCK=$T/h.sock
TAB=$(printf '\t')

"$HOSTEL" wast "$S/tests/wasm/legacy-exceptions.json" >"$T/wast.out" 2>&1
check "legacy-exceptions.json: hostel wast exits 0" test $? -eq 0
check "legacy-exceptions.json: 53 passed, 0 failed" \
	eq "$(tail -n 1 "$T/wast.out")" "53 passed, 0 failed, 0 skipped"
"$HOSTEL" wast "$S/tests/wasm/legacy-mixed.json" >"$T/mixed.out" 2>&1
check "legacy-mixed.json (legacy try beside try_table): 4 passed, 0 failed" \
	eq "$(tail -n 1 "$T/mixed.out")" "4 passed, 0 failed, 0 skipped"

"$HOSTEL" run "$G/exceptions.wasm" >"$T/exc.out" 2>"$T/exc.err"
check "exceptions.wasm exits 0" test $? -eq 0
check "exceptions.wasm prints what V8 prints" cmp -s "$T/exc.out" \
	"$G/exceptions.expected"
diff "$G/exceptions.expected" "$T/exc.out" | sed 's/^/# /'

while IFS="$TAB" read -r call want; do
	case $call in '#'* | '') continue ;; esac
	got=$("$HOSTEL" run --invoke "$call" "$G/calc.component.wasm" 2>&1)
	check "hostel run: $call = $want" eq "$got" "$want"
done <"$G/calls.tsv"

"$HOSTELD" --foreground --socket "$SOCK" --state-dir "$T/state" 2>>"$T/log" &
PIDS="$PIDS $!"
check "hosteld starts" wait_for 10 alive
H deploy "$G/calc.component.wasm" --name cxx >"$T/d.out" 2>&1
check "calc.component.wasm deploys" has "$T/d.out" "deployed cxx"
while IFS="$TAB" read -r call want; do
	case $call in '#'* | '') continue ;; esac
	got=$(H call cxx "$call" 2>&1)
	check "as a service: $call = $want" eq "$got" "$want"
done <"$G/calls.tsv"
kill -TERM $PIDS 2>/dev/null
wait
tap_finish "$T/log"
