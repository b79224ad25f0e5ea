// node-check.mjs - calls.tsv's calls of calc.cpp's core module under V8
// (Node), the peer for tests/cxx-guest.sh's expected results (jco
// refuses components that use exceptions).  The canonical ABI of the
// three exports is done by hand here, as calc.cpp does it.
//   node node-check.mjs CALC-CORE.wasm calls.tsv
// Prints "ok"/"not ok" per call and "N passed, N failed".
import { readFileSync } from 'node:fs';

const [core, table] = process.argv.slice(2);
const { instance } = await WebAssembly.instantiate(readFileSync(core), {
	wasi_snapshot_preview1: { proc_exit: (c) => { throw new Error(`exit ${c}`); } },
});
const x = instance.exports;
x._initialize();
const mem = () => new DataView(x.memory.buffer);
const enc = new TextEncoder(), dec = new TextDecoder();

function putString(s) {
	const b = enc.encode(s), p = x.cabi_realloc(0, 0, 1, b.length);
	new Uint8Array(x.memory.buffer, p, b.length).set(b);
	return [p, b.length];
}
const getString = (p, n) => dec.decode(new Uint8Array(x.memory.buffer, p, n));
// WAVE's string: hostel escapes ' as \'
const wave = (s) => '"' + s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')
	.replace(/'/g, "\\'") + '"';

const calls = {
	'parse-sum': (text) => {
		const r = x['hostel:cxx/api@0.1.0#parse-sum'](...putString(text));
		const d = mem();
		const out = d.getUint8(r) === 0
			? `ok(${d.getBigInt64(r + 8, true)})`
			: `err(${wave(getString(d.getUint32(r + 8, true), d.getUint32(r + 12, true)))})`;
		x['cabi_post_hostel:cxx/api@0.1.0#parse-sum'](r);
		return out;
	},
	'checked-div': (a, b) => {
		const r = x['hostel:cxx/api@0.1.0#checked-div'](a, b);
		const d = mem();
		const out = d.getUint8(r) === 0
			? `ok(${d.getInt32(r + 4, true)})`
			: `err(${wave(getString(d.getUint32(r + 4, true), d.getUint32(r + 8, true)))})`;
		x['cabi_post_hostel:cxx/api@0.1.0#checked-div'](r);
		return out;
	},
	'unwind': (n) => String(x['hostel:cxx/api@0.1.0#unwind'](n) >>> 0),
};

let pass = 0, fail = 0;
for (const line of readFileSync(table, 'utf8').split('\n')) {
	if (line === '' || line.startsWith('#')) continue;
	const [call, want] = line.split('\t');
	const m = /^([a-z-]+)\((.*)\)$/.exec(call);
	const args = JSON.parse(`[${m[2]}]`);
	const got = calls[m[1]](...args);
	if (got === want) { pass++; console.log(`ok - ${call} = ${got}`); }
	else { fail++; console.log(`not ok - ${call}: got ${got}, expected ${want}`); }
}
console.log(`${pass} passed, ${fail} failed`);
process.exit(fail ? 1 : 0);
