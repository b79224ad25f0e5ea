// strings.js - a componentize-js guest (world jsguest in strings.wit):
// string and list functions, one that writes to stdout and one that
// reads the clocks, so the component is a plain sync WASI 0.2 guest.
// Built by tests/guests/build.sh; called by tests/js-guests.sh and
// tests/guests/compare-jco.sh.

function words(text) {
	return text.split(/\s+/).filter((w) => w.length > 0);
}

export const api = {
	greet(name) {
		return `hello, ${name}!`;
	},
	splitWords(text) {
		return words(text);
	},
	joinUpper(ws, sep) {
		return ws.map((w) => w.toUpperCase()).join(sep);
	},
	sortUnique(ws) {
		return [...new Set(ws)].sort();
	},
	wordLengths(ws) {
		return ws.map((w) => [...w].length);
	},
	sum(xs) {
		let s = 0n;
		for (const x of xs)
			s += BigInt(x);
		return s;
	},
	textStats(text) {
		const ws = words(text);
		let longest = '';
		for (const w of ws)
			if ([...w].length > [...longest].length)
				longest = w;
		return { words: ws.length, chars: [...text].length, longest };
	},
	log(msg) {
		console.log(`log: ${msg}`);
		return new TextEncoder().encode(msg).length;
	},
	clocksOk() {
		const t0 = performance.now();
		let x = 0;
		for (let i = 0; i < 1000; i++)
			x += i;
		return Date.now() > 1.5e12 && performance.now() >= t0 && x > 0;
	},
};
