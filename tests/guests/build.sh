#!/bin/sh
# tests/guests/build.sh - regenerate the committed guest binaries in
# tests/guests/ from their sources (see tests/guests/README.md).
#
# Needs Debian's clang-14, lld-14, wasi-libc and libclang-rt-14-dev-wasm32,
# and npm.  jco is installed into a scratch directory OUTSIDE the
# repository ($GUESTS_SCRATCH, default /tmp/hostel-guests); nothing under
# node_modules is ever committed.
#
#   apt-get install -y clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32
#   sh tests/guests/build.sh        # everything
#   sh tests/guests/build.sh wat    # only the component WAT guests
#   sh tests/guests/build.sh qjs    # only the componentize-qjs guest qjs/
#   sh tests/guests/build.sh direct # only wasi/p2poll and wasi/p3sleep
#   sh tests/guests/build.sh files  # only wasi/files
#   sh tests/guests/build.sh cxx    # only cxx/ (emscripten, node)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/wasi"
scratch=${GUESTS_SCRATCH:-/tmp/hostel-guests}
CC=${CC_WASM:-clang-14}
CFLAGS="--target=wasm32-wasi --sysroot=/usr -O2"

mkdir -p "$scratch"
cd "$scratch"
if [ ! -d node_modules/@bytecodealliance/jco ] ||
	! grep -q '"version": "0.23.0"' \
		node_modules/@bytecodealliance/componentize-js/package.json \
		2>/dev/null; then
	[ -f package.json ] || { npm init -y >/dev/null; npm pkg set type=module; }
	npm install @bytecodealliance/jco@1.35.0 \
		@bytecodealliance/componentize-js@0.23.0
fi
JCO="node $scratch/node_modules/@bytecodealliance/jco/dist/jco.js"

# The componentize-qjs 0.4.5 guest tests/guests/qjs (async exports, a
# WASI 0.3 clock wait, streams; tests/qjs-guest.sh).  Its WIT imports
# wasi:clocks@0.3.0, taken from jco's bundled WASI WIT at build time.
# `sh build.sh qjs` builds only this one (no clang needed).
build_qjs_guest() {
	rm -rf "$scratch/qjs-guest-wit"
	mkdir -p "$scratch/qjs-guest-wit/deps/clocks"
	cp "$here/qjs/guest.wit" "$scratch/qjs-guest-wit/"
	cp node_modules/@bytecodealliance/jco/lib/wit/builtin/0.3.0/wasi-clocks/package.wit \
		"$scratch/qjs-guest-wit/deps/clocks/"
	node_modules/.bin/componentize-qjs --wit "$scratch/qjs-guest-wit" \
		--js "$here/qjs/guest.js" -o "$here/qjs/guest.component.wasm"
	$JCO wit "$here/qjs/guest.component.wasm" >/dev/null
	# the shapes componentize-qjs's flags give (tests/qjs-guest.sh):
	# --opt-size (tail calls), --sync, --sync --stub-wasi --opt-size
	node_modules/.bin/componentize-qjs --wit "$scratch/qjs-guest-wit" \
		--js "$here/qjs/guest.js" --opt-size \
		-o "$here/qjs/guest-opt.component.wasm"
	node_modules/.bin/componentize-qjs --wit "$here/qjs/sync.wit" \
		--js "$here/qjs/sync.js" --sync \
		-o "$here/qjs/sync.component.wasm"
	node_modules/.bin/componentize-qjs --wit "$here/qjs/sync.wit" \
		--js "$here/qjs/sync.js" --sync --stub-wasi --opt-size \
		-o "$here/qjs/sync-stub-opt.component.wasm"
	for g in guest-opt sync sync-stub-opt; do
		$JCO wit "$here/qjs/$g.component.wasm" >/dev/null
	done
}
if [ "${1:-}" = qjs ]; then
	build_qjs_guest
	exit 0
fi

# C guests calling WASI directly, with hand-written canonical-ABI glue
# and no preview1 adapter (wasi/p2poll: WASI 0.2 pollables; wasi/p3sleep:
# Component-Model-async exports waiting on WASI 0.3 wait-for).  Their
# WIT uses jco's bundled WASI packages as deps/, so `jco embed --wit DIR`
# is used, with ../shared/tools/preopen-root.mjs (jco 1.35's --wit path
# bug, GUEST-TOOLCHAINS.md 1.3).  jco embed + jco new handle async
# funcs: no component WAT is needed.  `sh build.sh direct` builds only
# these two.
build_direct_guests() {
	preopen=${HOSTEL_SHARED:-$here/../../../shared}/tools/preopen-root.mjs
	jcop="node --import $preopen node_modules/@bytecodealliance/jco/dist/jco.js"
	wit=node_modules/@bytecodealliance/jco/lib/wit/builtin
	rm -rf "$scratch/p2poll-wit" "$scratch/p3sleep-wit"
	mkdir -p "$scratch/p2poll-wit/deps/clocks" "$scratch/p2poll-wit/deps/io" \
		"$scratch/p3sleep-wit/deps/clocks"
	cp "$out/p2poll.wit" "$scratch/p2poll-wit/"
	cp $wit/0.2.12/wasi-clocks/package.wit "$scratch/p2poll-wit/deps/clocks/"
	cp $wit/0.2.12/wasi-io/package.wit "$scratch/p2poll-wit/deps/io/"
	cp "$out/p3sleep.wit" "$scratch/p3sleep-wit/"
	cp $wit/0.3.0/wasi-clocks/package.wit "$scratch/p3sleep-wit/deps/clocks/"
	for g in p2poll p3sleep; do
		$CC $CFLAGS -mexec-model=reactor -Wl,--strip-all "$out/$g.c" \
			-o "$scratch/$g-core.wasm"
		$jcop embed --wit "$scratch/$g-wit" "$scratch/$g-core.wasm" \
			-o "$scratch/$g-embedded.wasm"
		$jcop new "$scratch/$g-embedded.wasm" \
			-o "$out/$g.component.wasm"
		$JCO wit "$out/$g.component.wasm" >/dev/null
	done
}
if [ "${1:-}" = direct ]; then
	build_direct_guests
	exit 0
fi

# wasi/files: wasi-libc files and directories through the preview1
# reactor adapter, plus wasi:clocks and wasi:io imported directly (a
# pollable it keeps), so its WIT takes jco's bundled WASI packages as
# deps/ as the direct guests' do, and `jco new --wasi-reactor` adds the
# adapter (tests/unit/wasi/test_wasi_snapshot.c).
build_files_guest() {
	preopen=${HOSTEL_SHARED:-$here/../../../shared}/tools/preopen-root.mjs
	jcop="node --import $preopen node_modules/@bytecodealliance/jco/dist/jco.js"
	wit=node_modules/@bytecodealliance/jco/lib/wit/builtin
	rm -rf "$scratch/files-wit"
	mkdir -p "$scratch/files-wit/deps/clocks" "$scratch/files-wit/deps/io"
	cp "$out/files.wit" "$scratch/files-wit/"
	cp $wit/0.2.12/wasi-clocks/package.wit "$scratch/files-wit/deps/clocks/"
	cp $wit/0.2.12/wasi-io/package.wit "$scratch/files-wit/deps/io/"
	$CC $CFLAGS -mexec-model=reactor -Wl,--strip-all "$out/files.c" \
		-o "$scratch/files-core.wasm"
	$jcop embed --wit "$scratch/files-wit" "$scratch/files-core.wasm" \
		-o "$scratch/files-embedded.wasm"
	$jcop new "$scratch/files-embedded.wasm" --wasi-reactor \
		-o "$out/files.component.wasm"
	$JCO wit "$out/files.component.wasm" >/dev/null
}
if [ "${1:-}" = files ]; then
	build_files_guest
	exit 0
fi

# C++ with exceptions (tests/guests/cxx, tests/cxx-guest.sh): Debian's
# libc++abi for wasm32 is built without them, so Debian's emscripten
# (3.1.6, its own libc++abi) compiles them with -fwasm-exceptions, which
# gives the legacy try/catch/rethrow/delegate instructions.  The command
# is a wasi_snapshot_preview1 module (jco's preview1 adapter cannot wrap
# an Emscripten command: its cabi_realloc traps, under jco too); the
# reactor exports its own cabi_realloc, so the adapter takes it.  V8 is
# the peer (jco refuses exceptions): node's WASI runs the command, and
# node-check.mjs the reactor's core module on calls.tsv.
#   apt-get install -y emscripten clang-19 lld-19 libc++-19-dev-wasm32 \
#     libc++abi-19-dev-wasm32 libclang-rt-19-dev-wasm32
build_cxx_guests() {
	cx=$here/cxx
	em++ -O2 -sSTANDALONE_WASM -fwasm-exceptions "$cx/exceptions.cpp" \
		-o "$cx/exceptions.wasm"
	em++ -O2 -sSTANDALONE_WASM --no-entry -fwasm-exceptions \
		"$cx/calc.cpp" -o "$scratch/cxx-calc-core.wasm"
	cp "$here/componentize.mjs" "$scratch/componentize.mjs"
	node "$scratch/componentize.mjs" "$scratch/cxx-calc-core.wasm" \
		"$cx/calc.wit" calc "$cx/calc.component.wasm" --wasi-reactor
	$JCO wit "$cx/calc.component.wasm" >/dev/null
	# C++ with Debian's clang-19 and libc++ (no exceptions: its
	# libc++abi for wasm32 has none); jco runs it (compare-jco.sh)
	clang++-19 --target=wasm32-wasi --sysroot=/usr -O2 -fno-exceptions \
		-mexec-model=reactor -Wl,--strip-all "$cx/words.cpp" \
		-o "$scratch/cxx-words-core.wasm"
	node "$scratch/componentize.mjs" "$scratch/cxx-words-core.wasm" \
		"$cx/words.wit" words "$cx/words.component.wasm" --wasi-reactor
	$JCO wit "$cx/words.component.wasm" >/dev/null
	node "$cx/node-wasi.mjs" "$cx/exceptions.wasm" >"$scratch/cxx-v8.out"
	cmp "$scratch/cxx-v8.out" "$cx/exceptions.expected"
	node "$cx/node-check.mjs" "$scratch/cxx-calc-core.wasm" "$cx/calls.tsv"
}
if [ "${1:-}" = cxx ]; then
	build_cxx_guests
	exit 0
fi

# Component WAT guests (tests/guests/ticker, tests/guests/async, hostile, values): `jco
# parse` converts, and does not validate, so `jco wit` checks each one
# (GUEST-TOOLCHAINS.md section 2).  `sh build.sh wat` stops after these
# (no clang needed).
for w in ticker/ticker async/sleep async/park async/gate async/churn \
	hostile/hostile hostile/startloop hostile/bomb values/values \
	hostile/wasi hostile/nest written/written exn/exn mem64/mem64 loop/loop \
	async/waitrefs async/order traps/traps traps/boundary hostile/randomwork \
	wasi/p3stdio wasi/p3files; do
	$JCO parse "$here/$w.wat" -o "$here/$w.wasm"
	$JCO wit "$here/$w.wasm" >/dev/null
done
# mem64/async64 has a thread.new-indirect of an i64 start function
# (the spec's memory64 gate allows [i64] -> []; jco 1.35's wasmparser
# takes only i32 "currently"), so `jco wit` cannot read it.
$JCO parse "$here/mem64/async64.wat" -o "$here/mem64/async64.wasm"
# Core module WAT (hostile/p1files, preview1): no WIT to check.
# tests/guests/names: validation as wasmparser does it; jco wit checks
# the valid ones, and refuses the invalid ones (ll-clash,
# outer-alias-past, async-ctor), as hostel must
for w in http-names reexport outer-alias; do
	$JCO parse "$here/names/$w.wat" -o "$here/names/$w.wasm"
	$JCO wit "$here/names/$w.wasm" >/dev/null
done
# version-case validates under wasmparser, whose wit-parser then panics
# making its WIT (two interfaces a case apart): parsed only
$JCO parse "$here/names/version-case.wat" -o "$here/names/version-case.wasm"
for w in ll-clash outer-alias-past async-ctor version-case-clash; do
	$JCO parse "$here/names/$w.wat" -o "$here/names/$w.wasm"
	! $JCO wit "$here/names/$w.wasm" >/dev/null 2>&1
done
$JCO parse "$here/hostile/p1files.wat" -o "$here/hostile/p1files.wasm"
$JCO parse "$here/hostile/p1random.wat" -o "$here/hostile/p1random.wasm"
# tests/wasm/legacy-mixed (legacy try beside try_table; wabt 1.0.32 has
# no try_table for the rest of tests/wasm)
$JCO parse "$here/../wasm/legacy-mixed.wat" -o "$here/../wasm/legacy-mixed.wasm"
if [ "${1:-}" = wat ]; then
	exit 0
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
build_direct_guests
build_files_guest

# componentize-js 0.23.0 (StarlingMonkey) guest: a sync WASI 0.2
# component of about 12 MB (20-40 s, ~0.8 GB RSS).  `-d http
# fetch-event`: no wasi:http imports (hostel has no wasi:http); stdio,
# clocks and random stay.
node_modules/.bin/componentize-js "$here/js/strings.js" \
	--wit "$here/js/strings.wit" --world-name jsguest \
	-d http fetch-event -o "$here/js/strings.component.wasm"

# componentize-qjs 0.4.5 (QuickJS, a jco dependency) guest:
# Component-Model-async by default, 1.6 MB.  Its WIT imports
# wasi:clocks@0.3.0, taken from jco's bundled WASI WIT at build time.
rm -rf "$scratch/qjs-wit"
mkdir -p "$scratch/qjs-wit/deps/clocks"
cp "$here/js/qjs/async.wit" "$scratch/qjs-wit/"
cp node_modules/@bytecodealliance/jco/lib/wit/builtin/0.3.0/wasi-clocks/package.wit \
	"$scratch/qjs-wit/deps/clocks/"
node_modules/.bin/componentize-qjs --wit "$scratch/qjs-wit" \
	--js "$here/js/qjs/async.js" -o "$here/js/qjs/async.component.wasm"
build_qjs_guest
ls -l "$out"/*.wasm "$here"/js/*.wasm "$here"/js/qjs/*.wasm "$here"/qjs/*.wasm
