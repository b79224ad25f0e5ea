// cost.mjs - the engine's fixed costs against the targets of issue 3, with
// a peer where one applies.
//
//   node bench/cost.mjs --hostel-cost PATH [--rounds N]
//
// Runs bench/hostel-cost (bench/cost.c), which measures hostel and prints
// one JSON object per figure, and measures the same decode + instantiate +
// call cycle of the same trivial module in this Node process
// (new WebAssembly.Module + new WebAssembly.Instance + one call; Node frees
// by garbage collection, which is left to run as it will).  Prints one
// line per figure:
//
//   cost: idle-instance  N bytes beyond linear memory ...  target < 65536 bytes: ok
//   cost: suspended      10000 contexts in X MiB ...        target < 200 MiB: ok
//   cost: cycle          hostel X us, node Y us, hostel/node R  target < 5 us: ok
//
// The cycle is timed in batches of 200 on both engines; the figure checked
// against the target is the best batch's mean (the one least disturbed on
// a shared machine), the median batch is printed next to it.
//
// and a last line `cost: all targets met` or `cost: TARGET MISSED: ...`
// (exit 1).  Memory figures have no peer ratio: they are stated against
// their target.  If hostel-cost is missing or fails, the last line is
// `cost: n/a (REASON)` and the exit status 1.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

function usage(code) {
	(code ? process.stderr : process.stdout).write(
		'usage: node bench/cost.mjs --hostel-cost PATH [--rounds N]\n');
	process.exit(code);
}

let costBin = null;
let rounds = 5;
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
	if (argv[i] === '--hostel-cost' && i + 1 < argv.length)
		costBin = argv[++i];
	else if (argv[i] === '--rounds' && i + 1 < argv.length)
		rounds = Math.max(1, Number.parseInt(argv[++i], 10) || 1);
	else if (argv[i] === '--help')
		usage(0);
	else
		usage(2);
}
if (!costBin)
	usage(2);

function na(reason) {
	console.log(`cost: n/a (${reason})`);
	process.exit(1);
}

if (!existsSync(costBin))
	na(`${costBin} is not built`);
const run = spawnSync(costBin, ['--rounds', String(rounds)],
	{ encoding: 'utf8', timeout: 300000 });
if (run.status !== 0)
	na(`hostel-cost failed: ${(run.stderr || run.error || '').toString().trim()}`);
const fig = {};
let moduleHex = null;
for (const line of run.stdout.split('\n')) {
	if (!line.trim())
		continue;
	const o = JSON.parse(line);
	if (o.module)
		moduleHex = o.module;
	else
		fig[o.figure] = o;
}
for (const f of ['module', 'idle-instance', 'suspended', 'cycle'])
	if (!fig[f])
		na(`hostel-cost printed no "${f}" figure`);

// The peer: the same cycle in Node, measured as hostel-cost does (batches
// of 200, the best batch and the median batch).
const bytes = Buffer.from(moduleHex, 'hex');
const CYCLES = 20000;
const BATCH = 200;
function nodeCycle(n) {
	let sum = 0;
	for (let i = 0; i < n; i++) {
		const m = new WebAssembly.Module(bytes);
		const inst = new WebAssembly.Instance(m, {});
		sum += inst.exports.f();
	}
	if (sum !== 42 * n)
		throw new Error('node: wrong result');
}
nodeCycle(CYCLES / 10);
const batches = [];
for (let k = 0; k < rounds * (CYCLES / BATCH); k++) {
	const t0 = process.hrtime.bigint();
	nodeCycle(BATCH);
	batches.push(Number(process.hrtime.bigint() - t0) / 1e3 / BATCH);
}
batches.sort((a, b) => a - b);
const nodeBest = batches[0];
const nodeMedian = batches[batches.length >> 1];

const missed = [];
function verdict(ok, what) {
	if (!ok)
		missed.push(what);
	return ok ? 'ok' : 'MISSED';
}
const MiB = 1024 * 1024;
const idle = fig['idle-instance'];
const susp = fig.suspended;
const cyc = fig.cycle;
console.log(`cost: module           small module decoded and compiled: ` +
	`${fig.module.value} bytes (shared by its instances)`);
console.log(`cost: idle-instance    ${idle.value} bytes beyond linear ` +
	`memory, store included (${idle.per_extra_instance} per further ` +
	`instance)   target < ${idle.target} bytes: ` +
	verdict(idle.value < idle.target, 'idle-instance'));
console.log(`cost: suspended        ${susp.count} contexts in ` +
	`${(susp.value / MiB).toFixed(2)} MiB (${Math.round(susp.value / susp.count)} ` +
	`bytes each)   target < ${susp.target / MiB} MiB: ` +
	verdict(susp.value < susp.target, 'suspended'));
console.log(`cost: cycle            decode+instantiate+call+free: hostel ` +
	`${cyc.value.toFixed(2)} us, node ${nodeBest.toFixed(2)} us, ` +
	`hostel/node ${(cyc.value / nodeBest).toFixed(2)} (best batch; ` +
	`median batch: hostel ${cyc.median.toFixed(2)} us, node ` +
	`${nodeMedian.toFixed(2)} us)   target < ${cyc.target} us: ` +
	verdict(cyc.value < cyc.target, 'cycle'));
if (missed.length) {
	console.log(`cost: TARGET MISSED: ${missed.join(', ')}`);
	process.exit(1);
}
console.log('cost: all targets met');
