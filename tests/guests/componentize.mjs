// componentize.mjs - core module + WIT source -> component with jco's
// JS API (the `jco embed --wit PATH` CLI cannot read files in jco 1.35).
// usage: node componentize.mjs CORE.wasm WORLD.wit WORLD OUT.wasm
//        [--wasi-reactor|--wasi-command]
import { readFile, writeFile } from 'node:fs/promises';
import * as jco from '@bytecodealliance/jco';

const [core, wit, world, out, mode] = process.argv.slice(2);
const embedded = await jco.componentEmbed({
	binary: await readFile(core),
	witSource: await readFile(wit, 'utf8'),
	world,
	stringEncoding: 'utf8',
});
const adapter = mode === '--wasi-reactor' ? jco.preview1AdapterReactorPath()
	: mode === '--wasi-command' ? jco.preview1AdapterCommandPath() : null;
const adapters = adapter
	? [['wasi_snapshot_preview1', await readFile(adapter)]] : [];
await writeFile(out, await jco.componentNew(embedded, adapters));
