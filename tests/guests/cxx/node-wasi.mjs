// node-wasi.mjs - runs a wasi_snapshot_preview1 command under V8 (node's
// WASI), the peer for cxx/exceptions.expected.
//   node node-wasi.mjs COMMAND.wasm
import { WASI } from 'node:wasi';
import { readFileSync } from 'node:fs';

process.removeAllListeners('warning'); // node's "WASI is experimental"
const wasi = new WASI({ version: 'preview1', args: [], env: {} });
const module = await WebAssembly.compile(readFileSync(process.argv[2]));
wasi.start(await WebAssembly.instantiate(module, wasi.getImportObject()));
