// guest.js - a componentize-qjs 0.4.5 guest (world `guest` in guest.wit):
// async exports that wait on the WASI 0.3 monotonic clock and move bytes
// and strings through streams, both ways.  Built by tests/guests/build.sh
// (qjs); checked by tests/qjs-guest.sh against what jco gives.
import { waitFor } from 'wasi:clocks/monotonic-clock@0.3.0';

// u64 is a JS number in componentize-qjs (a BigInt panics)
const sleepMs = (ms) => waitFor(ms * 1000000);

export const api = {
	joinWords(words, sep) {
		return words.join(sep);
	},
	wordLengths(words) {
		return words.map((w) => [...w].length);
	},
	async sleep(ms) {
		await sleepMs(ms);
		return ms;
	},
	async countUp(n) {
		return (async function* () {
			for (let i = 0; i < n; i += 16) {
				const chunk = new Uint8Array(Math.min(16, n - i));
				for (let j = 0; j < chunk.length; j++)
					chunk[j] = (i + j) & 0xff;
				yield chunk;
			}
		})();
	},
	async words(text, ms) {
		const list = text.split(/\s+/).filter((w) => w.length > 0);
		return (async function* () {
			for (let i = 0; i < list.length; i++) {
				if (i > 0 && ms > 0)
					await sleepMs(ms);
				yield list[i];
			}
		})();
	},
	async hashBytes(data) {
		let len = 0;
		let h = 0x811c9dc5;
		for await (const chunk of data) {
			for (const b of chunk) {
				h ^= b;
				h = Math.imul(h, 0x01000193) >>> 0;
			}
			len += chunk.length;
		}
		return { len, fnv1a: h >>> 0 };
	},
	async joinStream(words, sep) {
		const all = [];
		for await (const w of words)
			all.push(w);
		return all.join(sep);
	},
};
