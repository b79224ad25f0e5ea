// async.js - a componentize-qjs guest (world qjsguest in async.wit):
// async exports that wait on the WASI 0.3 monotonic clock and move
// strings and bytes through streams.  Built by tests/guests/build.sh.
import { waitFor } from 'wasi:clocks/monotonic-clock@0.3.0';

export const api = {
	greet(name) {
		return `hello, ${name}!`;
	},
	async sleepThen(ms, msg) {
		await waitFor(ms * 1000000); // u64 is a JS number here
		return `${msg} after ${ms} ms`;
	},
	async uppercase(words) {
		return (async function* () {
			for await (const w of words)
				yield w.toUpperCase();
		})();
	},
	async countBytes(data) {
		let n = 0;
		for await (const chunk of data)
			n += chunk.length;
		return n;
	},
	async echoBytes(data) {
		const { readable, writable } = wit.Stream(wit.Stream.U8);
		const writing = (async () => {
			await writable.writeAll(new Uint8Array(data));
			writable.drop();
		})();
		const out = [];
		for await (const chunk of readable)
			out.push(...chunk);
		await writing;
		return out;
	},
};
