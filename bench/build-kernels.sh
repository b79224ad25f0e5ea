#!/bin/sh
# build-kernels.sh - builds the benchmark kernels in bench/kernels/.
#
#   bench/build-kernels.sh              regenerate the committed wasm32
#                                       modules in bench/wasm/NAME.wasm
#   bench/build-kernels.sh --native DIR build native programs DIR/NAME
#                                       (same sources + native-main.c)
#
# wasm32 needs Debian's clang and lld (bookworm: apt-get install clang lld,
# i.e. clang-14 and lld-14, which provides wasm-ld).  No libc, no sysroot:
# the kernels are freestanding and import only bench.now_ns.  Override the
# compiler with CLANG=clang-19 (any clang >= 14 with a wasm32 backend).
# Native builds use $CC (default cc) at -O2 for the baseline x86-64 ISA.
#
# Every kernel is bench/kernels/NAME.c except bench.h, common.c and
# native-main.c, which form the harness side of the contract in bench.h.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
src=$here/kernels
warn="-std=gnu11 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
-Wmissing-prototypes -Wno-unused-parameter"

kernels() {
	for f in "$src"/*.c; do
		n=$(basename "$f" .c)
		case $n in common | native-main) continue ;; esac
		echo "$n"
	done
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

if [ "${1-}" = --native ]; then
	out=${2:?usage: build-kernels.sh --native DIR}
	cc=${CC:-cc}
	mkdir -p "$out"
	# -fno-math-errno: wasm has no errno, so sqrt stays one instruction.
	nflags="$warn -O2 -fno-math-errno -I$src"
	$cc $nflags -c "$src/common.c" -o "$tmp/common.o"
	$cc $nflags -c "$src/native-main.c" -o "$tmp/native-main.o"
	for k in $(kernels); do
		$cc $nflags -c "$src/$k.c" -o "$tmp/$k.o"
		$cc "$tmp/$k.o" "$tmp/common.o" "$tmp/native-main.o" -lm \
			-o "$out/$k"
	done
	exit 0
fi

if [ $# -gt 0 ]; then
	echo "usage: build-kernels.sh [--native DIR]" >&2
	exit 2
fi

clang=${CLANG:-}
if [ -z "$clang" ]; then
	for c in clang-14 clang; do
		if command -v "$c" >/dev/null 2>&1; then
			clang=$c
			break
		fi
	done
fi
if [ -z "$clang" ]; then
	echo "build-kernels.sh: no clang found (apt-get install clang lld)" >&2
	exit 1
fi

# -ffreestanding: no hosted headers or libc.  common.c also gets
# -fno-builtin so its memcpy/memset loops are not turned into calls to
# themselves.
wflags="--target=wasm32 -O2 -ffreestanding $warn -I$src"
$clang $wflags -fno-builtin -c "$src/common.c" -o "$tmp/common.o"
mkdir -p "$here/wasm"
for k in $(kernels); do
	$clang $wflags -c "$src/$k.c" -o "$tmp/$k.o"
	$clang --target=wasm32 -nostdlib -Wl,--no-entry -Wl,--strip-debug \
		"$tmp/$k.o" "$tmp/common.o" -o "$tmp/$k.wasm"
	mv "$tmp/$k.wasm" "$here/wasm/$k.wasm"
	echo "wrote bench/wasm/$k.wasm ($(wc -c <"$here/wasm/$k.wasm") bytes)"
done
