// run.mjs - the benchmark orchestrator behind bench/run.
//
// For each round r = 1..ROUNDS and each kernel k, runs k once on every
// engine in turn (hostel, Node --liftoff-only, Node default, native), each
// in a fresh process, so slow drifts of the machine hit all engines alike.
// Every run prints {"kernel","ns","checksum"}; ns is measured inside the
// guest around the work only.  Per engine and kernel the minimum over the
// rounds is kept.  All checksums of a kernel must agree across engines and
// rounds, otherwise the run fails loudly (exit 1).
//
// Output: a table (kernel, hostel/liftoff/node/native ms, hostel/liftoff,
// hostel/node, hostel/native, liftoff/native) and, last,
//   geomean-vs-liftoff-only: X.XX
// which is the geometric mean over all kernels of hostel/liftoff-only.  If
// hostel cannot run (runner not built, load error, trap, timeout) on any
// kernel, the other engines still run and the last line is
//   geomean-vs-liftoff-only: n/a (hostel engine not available: REASON)
//
// Why --liftoff-only: in Node 20 (V8 11.3) `--liftoff --no-wasm-tier-up`
// still tiers up under dynamic tiering; `--liftoff-only` forbids TurboFan.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, readdirSync,
	readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

function usage(code) {
	const out = code ? process.stderr : process.stdout;
	out.write(`usage: bench/run [options]
  --hostel PATH        hostel runner (bench/hostel-runner from make bench)
  --hostel-log FILE    build log of the runner, quoted when it is missing
  --no-hostel REASON   do not run hostel; REASON goes into the last line
  --rounds N           interleaved rounds, minimum kept (default 3,
                       or $BENCH_ROUNDS)
  --kernels a,b,...    subset of kernels (default: every bench/wasm/*.wasm)
  --size KERNEL=N      work size for one kernel (default: its built-in one)
  --wasm-dir DIR       where the kernels' .wasm files are (bench/wasm)
  --native-dir DIR     where native kernels are built (default: a temp dir)
  --no-native          skip the native build and runs
  --timeout SECONDS    per process (default 300)
  --node PATH          node binary (the bench/run wrapper sets it)
`);
	process.exit(code);
}

const opt = {
	hostel: null,
	hostelLog: null,
	noHostel: null,
	rounds: Number.parseInt(process.env.BENCH_ROUNDS || '3', 10),
	kernels: null,
	sizes: {},
	wasmDir: join(here, 'wasm'),
	nativeDir: null,
	native: true,
	timeout: 300,
	node: process.execPath,
};

const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
	const a = argv[i];
	const val = () => {
		if (i + 1 >= argv.length) {
			console.error(`bench/run: ${a} needs a value`);
			usage(2);
		}
		return argv[++i];
	};
	switch (a) {
	case '--hostel': opt.hostel = resolve(val()); break;
	case '--hostel-log': opt.hostelLog = resolve(val()); break;
	case '--no-hostel': opt.noHostel = val(); break;
	case '--rounds': opt.rounds = Number.parseInt(val(), 10); break;
	case '--kernels': opt.kernels = val().split(',').filter(Boolean); break;
	case '--size': {
		const m = /^([\w-]+)=(\d+)$/.exec(val());
		if (!m)
			usage(2);
		opt.sizes[m[1]] = m[2];
		break;
	}
	case '--wasm-dir': opt.wasmDir = resolve(val()); break;
	case '--native-dir': opt.nativeDir = resolve(val()); break;
	case '--no-native': opt.native = false; break;
	case '--timeout': opt.timeout = Number(val()); break;
	case '--node': opt.node = val(); break;
	case '-h': case '--help': usage(0); break;
	default:
		console.error(`bench/run: unknown option ${a}`);
		usage(2);
	}
}
if (!(opt.rounds >= 1))
	usage(2);

function die(msg, lastLine) {
	console.error(`bench/run: ${msg}`);
	console.log(`geomean-vs-liftoff-only: n/a (${lastLine || msg})`);
	process.exit(1);
}

// ---- kernels --------------------------------------------------------------

const available = existsSync(opt.wasmDir)
	? readdirSync(opt.wasmDir).filter((f) => f.endsWith('.wasm'))
		.map((f) => basename(f, '.wasm')).sort()
	: [];
const kernels = opt.kernels || available;
if (kernels.length === 0)
	die(`no kernels in ${opt.wasmDir} (run bench/build-kernels.sh)`);
for (const k of kernels) {
	if (!available.includes(k))
		die(`no kernel ${k} in ${opt.wasmDir}`);
}
const wasmOf = (k) => join(opt.wasmDir, `${k}.wasm`);
const sizeArgs = (k) => (opt.sizes[k] ? [opt.sizes[k]] : []);

// ---- engines ----------------------------------------------------------------

// Node must accept --liftoff-only; an unknown flag makes node exit non-zero.
{
	const r = spawnSync(opt.node, ['--liftoff-only', '-e', '0']);
	if (r.status !== 0)
		die(`${opt.node} rejects --liftoff-only: ${String(r.stderr).trim()}`);
}
const nodeVersion = String(spawnSync(opt.node, ['--version']).stdout).trim();
const runner = join(here, 'node-runner.mjs');

// Why hostel is unavailable, or null.  Set up front (runner missing) or on
// the first failing run; once set, hostel is not run again.
let hostelDown = null;

function linkFailureSummary(log) {
	let text;
	try {
		text = readFileSync(log, 'utf8');
	} catch {
		return null;
	}
	const undef = [...new Set([...text.matchAll(
		/undefined reference to [`']([\w]+)'/g)].map((m) => m[1]))];
	if (undef.length) {
		const shown = undef.slice(0, 4).join(', ');
		const more = undef.length > 4 ? ` and ${undef.length - 4} more` : '';
		return `runner does not link: engine lacks ${shown}${more}`;
	}
	const err = text.split('\n').find((l) => /error/i.test(l));
	return err ? `runner does not build: ${err.trim()}` : null;
}

if (opt.noHostel !== null) {
	hostelDown = opt.noHostel;
} else if (!opt.hostel) {
	hostelDown = 'no runner given (use make bench, or --hostel PATH)';
} else {
	try {
		accessSync(opt.hostel, constants.X_OK);
	} catch {
		hostelDown = (opt.hostelLog && linkFailureSummary(opt.hostelLog)) ||
			`runner ${opt.hostel} not built`;
		if (opt.hostelLog)
			hostelDown += ` (see ${opt.hostelLog})`;
	}
}

let nativeDown = opt.native ? null : 'skipped (--no-native)';
let nativeTmp = null;
if (opt.native) {
	if (!opt.nativeDir)
		opt.nativeDir = nativeTmp = mkdtempSync(join(tmpdir(), 'bench-native-'));
	const r = spawnSync('sh', [join(here, 'build-kernels.sh'), '--native',
		opt.nativeDir], { stdio: ['ignore', 'inherit', 'pipe'] });
	if (r.status !== 0) {
		nativeDown = `native build failed: ${String(r.stderr).trim()
			.split('\n').pop()}`;
		console.error(`bench/run: ${nativeDown}`);
	}
}
process.on('exit', () => {
	if (nativeTmp)
		rmSync(nativeTmp, { recursive: true, force: true });
});

const engines = [
	{ id: 'hostel', cmd: (k) => [opt.hostel, wasmOf(k), ...sizeArgs(k)] },
	{ id: 'liftoff', cmd: (k) => [opt.node, '--liftoff-only', runner, wasmOf(k),
		...sizeArgs(k)] },
	{ id: 'node', cmd: (k) => [opt.node, runner, wasmOf(k), ...sizeArgs(k)] },
	{ id: 'native', cmd: (k) => [join(opt.nativeDir || '', k), ...sizeArgs(k)] },
];
const isDown = (e) => (e.id === 'hostel' ? hostelDown :
	e.id === 'native' ? nativeDown : null);

// ---- running ----------------------------------------------------------------

// Returns {ns, checksum} or {error}.
function runOnce(cmd, k) {
	const r = spawnSync(cmd[0], cmd.slice(1), {
		encoding: 'utf8',
		timeout: opt.timeout * 1000,
		killSignal: 'SIGKILL',
		maxBuffer: 1 << 20,
	});
	const lastErr = (r.stderr || '').trim().split('\n').pop();
	if (r.error && r.error.code === 'ETIMEDOUT')
		return { error: `${k}: timed out after ${opt.timeout} s` };
	if (r.error)
		return { error: `${k}: ${r.error.message}` };
	if (r.signal)
		return { error: `${k}: killed by ${r.signal}${lastErr ? `: ${lastErr}` : ''}` };
	if (r.status !== 0)
		return { error: `${k}: ${lastErr || `exit status ${r.status}`}` };
	try {
		const lines = r.stdout.trim().split('\n');
		const j = JSON.parse(lines[lines.length - 1]);
		if (j.kernel !== k || !Number.isFinite(j.ns) || j.ns < 0 ||
		    !/^\d+$/.test(j.checksum))
			throw new Error('bad fields');
		return { ns: j.ns, checksum: j.checksum };
	} catch {
		return { error: `${k}: unreadable output ${JSON.stringify(r.stdout.slice(0, 200))}` };
	}
}

const best = {};   // best[k][engine] = min ns
const sums = {};   // sums[k][engine] = checksum
const mismatches = [];
for (const k of kernels) {
	best[k] = {};
	sums[k] = {};
}

const ms = (ns) => (ns / 1e6).toFixed(1);
console.error(`bench: ${kernels.length} kernels x ${opt.rounds} rounds; ` +
	`node ${nodeVersion}; hostel: ${hostelDown ? `n/a (${hostelDown})` : opt.hostel}`);
for (let r = 1; r <= opt.rounds; r++) {
	for (const k of kernels) {
		const parts = [];
		for (const e of engines) {
			if (isDown(e))
				continue;
			const res = runOnce(e.cmd(k), k);
			if (res.error) {
				if (e.id === 'hostel') {
					hostelDown = `failed on ${res.error}`;
					parts.push('hostel FAILED');
					continue;
				}
				die(`${e.id} failed on ${res.error}`);
			}
			const prev = sums[k][e.id];
			if (prev !== undefined && prev !== res.checksum)
				mismatches.push(`${k}: ${e.id} gave ${prev} then ${res.checksum}`);
			sums[k][e.id] = res.checksum;
			if (best[k][e.id] === undefined || res.ns < best[k][e.id])
				best[k][e.id] = res.ns;
			parts.push(`${e.id} ${ms(res.ns)}`);
		}
		console.error(`  round ${r}/${opt.rounds} ${k}: ${parts.join(', ')} (ms)`);
	}
}

for (const k of kernels) {
	const ref = sums[k].liftoff;
	for (const [id, c] of Object.entries(sums[k])) {
		if (c !== ref)
			mismatches.push(`${k}: ${id} checksum ${c} != liftoff-only ${ref}`);
	}
}

// ---- report -------------------------------------------------------------------

const ratio = (a, b) => (a !== undefined && b !== undefined && b > 0
	? (a / b).toFixed(2) : 'n/a');
const msCell = (ns) => (ns === undefined ? 'n/a' : ms(ns));
const header = ['kernel', 'hostel ms', 'liftoff ms', 'node ms', 'native ms',
	'hostel/liftoff', 'hostel/node', 'hostel/native', 'liftoff/native'];
const rows = kernels.map((k) => {
	const b = best[k];
	return [k, msCell(b.hostel), msCell(b.liftoff), msCell(b.node),
		msCell(b.native), ratio(b.hostel, b.liftoff), ratio(b.hostel, b.node),
		ratio(b.hostel, b.native), ratio(b.liftoff, b.native)];
});
const widths = header.map((h, i) => Math.max(h.length,
	...rows.map((row) => row[i].length)));
const fmt = (row) => row.map((c, i) => (i === 0 ? c.padEnd(widths[i])
	: c.padStart(widths[i]))).join('  ');
console.log(`hostel core-engine benchmark: node ${nodeVersion}, ` +
	`${opt.rounds} interleaved round(s), minimum per engine`);
console.log(fmt(header));
for (const row of rows)
	console.log(fmt(row));
if (nativeDown)
	console.log(`native: n/a (${nativeDown})`);

if (mismatches.length) {
	console.error('bench/run: CHECKSUM MISMATCH - results are wrong:');
	for (const m of mismatches)
		console.error(`  ${m}`);
	console.log(`geomean-vs-liftoff-only: n/a (checksum mismatch: ${mismatches[0]})`);
	process.exit(1);
}

const missing = kernels.filter((k) => best[k].hostel === undefined);
if (hostelDown || missing.length) {
	const why = hostelDown || `no result for ${missing.join(', ')}`;
	console.log(`geomean-vs-liftoff-only: n/a (hostel engine not available: ${why})`);
	process.exit(0);
}
const ratios = kernels.map((k) => best[k].hostel / best[k].liftoff);
const geomean = Math.exp(ratios.reduce((s, x) => s + Math.log(x), 0) /
	ratios.length);
let worst = 0;
for (let i = 1; i < ratios.length; i++) {
	if (ratios[i] > ratios[worst])
		worst = i;
}
console.log(`max-vs-liftoff-only: ${ratios[worst].toFixed(2)} (${kernels[worst]})`);
console.log(`geomean-vs-liftoff-only: ${geomean.toFixed(2)}`);
