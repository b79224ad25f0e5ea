// jco.mjs - the calls of calls.tsv under jco (the reference host): the
// component is transpiled once (jco 1.35 transpile, WASI from
// preview2-shim / preview3-shim) and each call's result is printed as
// WAVE, one line per call: "FN(ARGS)<TAB>RESULT".  A stream argument is
// fed from an async generator; a returned stream is drained into a list.
// Needs Node >= 24 (JSPI).  Run by jco.sh, beside a node_modules with
// @bytecodealliance/jco:
//   node jco.mjs COMPONENT.wasm CALLS.tsv OUTDIR [INTERFACE]
// (INTERFACE: the export's name, default hostel:qjs/api@0.1.0)
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { transpile } from '@bytecodealliance/jco';

const [file, table, dir, iface = 'hostel:qjs/api@0.1.0'] =
	process.argv.slice(2);
const { files } = await transpile(await readFile(file),
	{ name: 'guest', quiet: true });
for (const [p, data] of Object.entries(files)) {
	await mkdir(dirname(join(dir, p)), { recursive: true });
	await writeFile(join(dir, p), data);
}
const mod = await import(pathToFileURL(join(dir, 'guest.js')).href);
const api = mod.api ?? mod[iface];

const esc = (s) => '"' + [...s].map((ch) => {
	switch (ch) {
	case '\\': return '\\\\';
	case '"': return '\\"';
	case "'": return "\\'";
	case '\t': return '\\t';
	case '\n': return '\\n';
	case '\r': return '\\r';
	}
	const c = ch.codePointAt(0);
	return c < 0x20 || (c >= 0x7f && c < 0xa0) ?
		`\\u{${c.toString(16)}}` : ch;
}).join('') + '"';
const kebab = (k) => k.replace(/[A-Z]/g, (m) => '-' + m.toLowerCase());
const wave = (v) => {
	if (typeof v === 'string')
		return esc(v);
	if (typeof v === 'bigint')
		return v.toString();
	if (Array.isArray(v) || ArrayBuffer.isView(v))
		return '[' + [...v].map(wave).join(', ') + ']';
	if (v && typeof v === 'object')
		return '{' + Object.entries(v).map(([k, x]) =>
			`${kebab(k)}: ${wave(x)}`).join(', ') + '}';
	return String(v);
};
const drain = async (r) => {
	const out = [];
	for await (const x of r)
		out.push(...(x instanceof Uint8Array ? x : [x]));
	return out;
};

for (const line of (await readFile(table, 'utf8')).split('\n')) {
	if (line === '' || line.startsWith('#'))
		continue;
	const [fn, args, streams] = line.split('\t');
	const pos = streams === '-' ? [] : streams.split(',').map(Number);
	const vals = JSON.parse('[' + args + ']').map((v, i) =>
		pos.includes(i) ? (async function* () { yield* v; })() : v);
	const camel = fn.replace(/-./g, (m) => m[1].toUpperCase());
	let r;
	try {
		r = await api[camel](...vals);
		if (r && typeof r[Symbol.asyncIterator] === 'function')
			r = await drain(r);
		console.log(`${fn}(${args})\t${wave(r)}`);
	} catch (e) {
		console.log(`${fn}(${args})\terror: ${e}`);
	}
}
