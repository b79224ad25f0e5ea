// sync.js - the guest of sync.wit (componentize-qjs --sync, and --sync
// --stub-wasi --opt-size): plain functions, no async, no WASI use.
export const api = {
	joinWords(words, sep) {
		return words.join(sep);
	},
	wordLengths(words) {
		return words.map((w) => [...w].length);
	},
	textStats(text) {
		const words = text.split(/\s+/).filter((w) => w.length > 0);
		let longest = '';
		for (const w of words)
			if ([...w].length > [...longest].length)
				longest = w;
		return { words: words.length, longest };
	},
	repeat(s, n) {
		return Array.from({ length: n }, (_, i) => `${s}${i}`);
	},
	sum(xs) {
		return xs.reduce((s, x) => s + x, 0);
	},
};
