#!/bin/sh
# tests/guests/build.sh - regenerate the committed WASI guest binaries in
# tests/guests/wasi/ from their sources (see tests/guests/README.md).
#
# Needs Debian's clang-14, lld-14, wasi-libc and libclang-rt-14-dev-wasm32,
# and npm.  jco is installed into a scratch directory OUTSIDE the
# repository ($GUESTS_SCRATCH, default /tmp/hostel-guests); nothing under
# node_modules is ever committed.
#
#   apt-get install -y clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32
#   sh tests/guests/build.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/wasi"
scratch=${GUESTS_SCRATCH:-/tmp/hostel-guests}
CC=${CC_WASM:-clang-14}
CFLAGS="--target=wasm32-wasi --sysroot=/usr -O2"

mkdir -p "$scratch"
cd "$scratch"
if [ ! -d node_modules/@bytecodealliance/jco ]; then
	[ -f package.json ] || { npm init -y >/dev/null; npm pkg set type=module; }
	npm install @bytecodealliance/jco@1.35.0
fi
# The WASI 0.2.0 preview1 adapter ships in jco 1.0.3.
if [ ! -f adapter-0.2.0-command.wasm ]; then
	npm pack @bytecodealliance/jco@1.0.3
	tar xzf bytecodealliance-jco-1.0.3.tgz \
		package/lib/wasi_snapshot_preview1.command.wasm
	mv package/lib/wasi_snapshot_preview1.command.wasm \
		adapter-0.2.0-command.wasm
	rm -rf package
fi
JCO="node $scratch/node_modules/@bytecodealliance/jco/dist/jco.js"

# C command, WASI 0.2.12 (the adapter inside jco 1.35)
$CC $CFLAGS -s "$out/hello.c" -o "$scratch/hello.wasm"
$JCO new "$scratch/hello.wasm" --wasi-command \
	-o "$out/hello-0.2.12.component.wasm"
# the same with the WASI 0.2.0 adapter
$JCO new "$scratch/hello.wasm" \
	--adapt "wasi_snapshot_preview1=$scratch/adapter-0.2.0-command.wasm" \
	-o "$out/hello-0.2.0.component.wasm"
# the core module itself (wasi_snapshot_preview1)
cp "$scratch/hello.wasm" "$out/hello-preview1.wasm"

# C reactor with a custom world (WIT passed as source text: jco 1.35's
# --wit path bug, GUEST-TOOLCHAINS.md 1.3)
$CC $CFLAGS -mexec-model=reactor -Wl,--strip-all "$out/calc.c" \
	-o "$scratch/calc-core.wasm"
cp "$here/componentize.mjs" "$scratch/componentize.mjs"
node "$scratch/componentize.mjs" "$scratch/calc-core.wasm" \
	"$out/calc.wit" calc "$out/calc.component.wasm" --wasi-reactor
ls -l "$out"/*.wasm
