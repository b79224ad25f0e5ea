// node-runner.mjs - runs one benchmark kernel under Node's WebAssembly.
//
//   node [V8 flags] bench/node-runner.mjs KERNEL.wasm [n]
//
// Instantiates the module with bench.now_ns backed by
// process.hrtime.bigint() (monotonic), calls bench_run(n) once (n <= 0 or
// absent: the kernel's default size) and prints one JSON line:
//
//   {"kernel":"NAME","ns":ELAPSED,"checksum":"U64"}
//
// ELAPSED is what the guest measured around its own work, so process
// start-up, compilation and instantiation are excluded.  Node 20 compiles
// wasm functions lazily on first call; the kernels are a few KB, so that
// first-call compile is noise next to the work.  The tier under test is
// chosen by the V8 flags (--liftoff-only, or none for Node's default).
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

const [file, nArg] = process.argv.slice(2);
if (!file) {
	console.error('usage: node-runner.mjs KERNEL.wasm [n]');
	process.exit(2);
}
const n = nArg === undefined ? 0 : Number.parseInt(nArg, 10) | 0;
const bytes = readFileSync(file);
const imports = {
	bench: { now_ns: () => BigInt.asIntN(64, process.hrtime.bigint()) },
};
const { instance } = await WebAssembly.instantiate(bytes, imports);
const ex = instance.exports;
const ns = ex.bench_run(n);
const checksum = BigInt.asUintN(64, ex.bench_checksum());
console.log(JSON.stringify({
	kernel: basename(file, '.wasm'),
	ns: Number(ns),
	checksum: checksum.toString(),
}));
