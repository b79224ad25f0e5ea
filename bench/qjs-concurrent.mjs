// qjs-concurrent.mjs - the peer of bench/qjs-concurrent.c: the same
// calls under jco (1.35 transpile, WASI 0.3 clocks from preview3-shim,
// whose wait-for is a real setTimeout) on Node >= 24 (JSPI): R rounds of
// N concurrent `sleep(MS)` calls of tests/guests/qjs/guest.component.wasm
// on one instance (Promise.all), timed from the first call to the last
// result.  Prints round 1 apart, then the best and the median of the
// others, and last a line "jco: summary ..." that bench/qjs-concurrent.sh
// hands to the C side (--jco).  Runs
// beside a node_modules holding @bytecodealliance/jco:
//   node qjs-concurrent.mjs COMPONENT.wasm OUTDIR [ROUNDS] [CALLS] [MS]
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { transpile } from '@bytecodealliance/jco';

const [file, dir, r = '5', c = '20', m = '100'] = process.argv.slice(2);
const [rounds, calls, ms] = [Number(r), Number(c), Number(m)];
let t0 = performance.now();
const { files } = await transpile(await readFile(file),
	{ name: 'guest', quiet: true });
for (const [p, data] of Object.entries(files)) {
	await mkdir(dirname(join(dir, p)), { recursive: true });
	await writeFile(join(dir, p), data);
}
const tTranspile = performance.now() - t0;
t0 = performance.now();
const mod = await import(pathToFileURL(join(dir, 'guest.js')).href);
const api = mod.api ?? mod['hostel:qjs/api@0.1.0'];
console.log(`jco: transpile ${tTranspile.toFixed(0)} ms, instantiate ` +
	`${(performance.now() - t0).toFixed(1)} ms`);

const times = [];
for (let i = 0; i < rounds; i++) {
	t0 = performance.now();
	const got = await Promise.all(
		Array.from({ length: calls }, () => api.sleep(ms)));
	times.push(performance.now() - t0);
	if (got.some((x) => x !== ms))
		throw new Error(`a call returned something else than ${ms}`);
}
t0 = performance.now();
await api.sleep(ms);
const one = performance.now() - t0;
const rest = times.slice(1).sort((a, b) => a - b);
const median = rest[Math.floor((rest.length - 1) / 2)];
console.log(`jco: round 1 (the instance's first calls), ${calls} ` +
	`concurrent sleep(${ms}): ${times[0].toFixed(1)} ms`);
console.log(`jco: 1 call of sleep(${ms}) alone: ${one.toFixed(1)} ms`);
console.log(`jco: rounds 2-${rounds}: best ${rest[0].toFixed(1)} ms, ` +
	`median ${median.toFixed(1)} ms`);
console.log(`jco: summary round 1 ${times[0].toFixed(1)} ms, rounds ` +
	`2-${rounds} best ${rest[0].toFixed(1)} ms, median ` +
	`${median.toFixed(1)} ms`);
