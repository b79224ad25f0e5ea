// startup.mjs - the jco peer of bench/startup.c: startup of a real guest
// component under jco 1.35 on Node.
//
//   node bench/startup.mjs [--rounds N] COMPONENT.wasm IFACE FUNC [JSON-ARG...]
//
// Run it where jco resolves (NODE_PATH does not apply to ES modules: the
// driver bench/startup.sh copies it into the npm scratch directory).
// Measures per round, printing min and median: transpile (jco's
// component -> JS + core modules: its decode + validate + translate),
// import (V8 compiles the core modules and instantiates them: a first
// "store"), re-import of the same output under a new URL (a second,
// fresh instance, V8's compile cache warm: jco's closest thing to a new
// store of a loaded component), the first call on the fresh instance and
// a second call.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { transpile } from '@bytecodealliance/jco';

let argv = process.argv.slice(2);
let rounds = 5;
if (argv[0] === '--rounds') {
	rounds = Number(argv[1]);
	argv = argv.slice(2);
}
const [file, iface, fn, ...rawArgs] = argv;
const bytes = await readFile(file);
const name = basename(file).replace(/\.wasm$/, '').replace(/[^A-Za-z0-9_-]/g, '_');
const conv = (v) => typeof v === 'string' && /^-?\d+n$/.test(v) ? BigInt(v.slice(0, -1))
	: Array.isArray(v) ? v.map(conv) : v;
const args = rawArgs.map((a) => conv(JSON.parse(a)));
const camel = (s) => s.replace(/-./g, (m) => m[1].toUpperCase());
const t = { transpile: [], import: [], reimport: [], first: [], second: [] };
// CPU time of the process (all its threads: V8 compiles in the background)
const c = { transpile: [], import: [], reimport: [], first: [], second: [] };
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e3; };
let result;

const pick = (mod) => {
	const target = mod[iface] ?? mod[camel(iface.replace(/^.*\/|@.*$/g, ''))];
	return [target, target[camel(fn)]];
};
const call = (mod, key) => {
	const [target, f] = pick(mod);
	const t0 = performance.now(), c0 = cpu();
	const r = f.apply(target, args);
	t[key].push(performance.now() - t0);
	c[key].push(cpu() - c0);
	return r;
};

for (let r = 0; r < rounds; r++) {
	// under the cwd, so the output's imports (preview2-shim) resolve
	const dir = join(process.cwd(), `.startup-${process.pid}-${r}`);
	let t0 = performance.now(), c0 = cpu();
	const { files } = await transpile(bytes, { name, quiet: true });
	t.transpile.push(performance.now() - t0);
	c.transpile.push(cpu() - c0);
	for (const [p, data] of Object.entries(files)) {
		await mkdir(dirname(join(dir, p)), { recursive: true });
		await writeFile(join(dir, p), data);
	}
	const url = pathToFileURL(join(dir, name + '.js')).href;
	t0 = performance.now();
	c0 = cpu();
	const mod = await import(url);
	t.import.push(performance.now() - t0);
	c.import.push(cpu() - c0);
	t0 = performance.now();
	c0 = cpu();
	const mod2 = await import(url + '?again');
	t.reimport.push(performance.now() - t0);
	c.reimport.push(cpu() - c0);
	result = call(mod2, 'first');
	call(mod2, 'second');
	void mod;
	await rm(dir, { recursive: true, force: true });
}
const med = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
const stat = (k) => {
	const s = [...t[k]].sort((a, b) => a - b);
	return `min ${s[0].toFixed(2).padStart(8)} median ${med(s).toFixed(2).padStart(8)} ms, ` +
		`cpu median ${med(c[k]).toFixed(2).padStart(8)} ms`;
};
console.log(`${file}: ${(bytes.length / 1e6).toFixed(1)} MB, ${rounds} rounds, Node ${process.version}; ` +
	`${iface}.${fn} = ${JSON.stringify(result, (k, v) => typeof v === 'bigint' ? `${v}n` : v)}`);
console.log(`${'jco transpile'.padEnd(40)} wall ${stat('transpile')}`);
console.log(`${'jco import (compile + instantiate)'.padEnd(40)} wall ${stat('import')}`);
console.log(`${'jco re-import (fresh instance)'.padEnd(40)} wall ${stat('reimport')}`);
console.log(`${'jco first call'.padEnd(40)} wall ${stat('first')}`);
console.log(`${'jco second call'.padEnd(40)} wall ${stat('second')}`);
