#!/bin/sh
# build.sh - the `jco embed --dummy` shells of the standard WASI worlds
# (a core module that traps everywhere, typed as the whole world), as
# ../shared/GUEST-TOOLCHAINS.md (1.3) describes, from the WASI WIT that
# jco bundles.  Run from this folder with jco installed (npm install
# @bytecodealliance/jco@1.35.0 in JCO_DIR, default /tmp/jco):
#   sh build.sh
# writes cli-command-0.2.wasm, http-proxy-0.2.wasm, cli-command-0.3.wasm
# and http-service-0.3.wasm.
set -e
JCO_DIR=${JCO_DIR:-/tmp/jco}
SHARED=${HOSTEL_SHARED:-$(cd ../../../.. && pwd)/shared}
OUT=$(pwd)
shell() { # WORLD VERSION OUT
	W=$JCO_DIR/node_modules/@bytecodealliance/jco/lib/wit/builtin/$2
	D=$(mktemp -d)
	mkdir -p "$D/wit/deps"
	for p in "$W"/*; do
		mkdir -p "$D/wit/deps/$(basename "$p")"
		cp "$p"/*.wit "$D/wit/deps/$(basename "$p")/"
	done
	printf 'package hostel:shell;\nworld shell { include %s@%s; }\n' "$1" "$2" >"$D/wit/root.wit"
	(cd "$JCO_DIR" &&
		node --import "$SHARED/tools/preopen-root.mjs" node_modules/@bytecodealliance/jco/dist/jco.js \
			embed --dummy --wit "$D/wit" -o "$D/core.wasm" >/dev/null &&
		node --import "$SHARED/tools/preopen-root.mjs" node_modules/@bytecodealliance/jco/dist/jco.js \
			new "$D/core.wasm" -o "$OUT/$3" >/dev/null)
	rm -rf "$D"
}
shell wasi:cli/command 0.2.12 cli-command-0.2.wasm
shell wasi:http/proxy 0.2.12 http-proxy-0.2.wasm
shell wasi:cli/command 0.3.0 cli-command-0.3.wasm
shell wasi:http/service 0.3.0 http-service-0.3.wasm
