/*
 * sha256.c - SHA-256 (FIPS 180-4) over n MiB of generated data: 32-bit
 * rotates, adds and table loads in a tight compression loop.  The input
 * is a 4 MiB buffer filled by a xorshift generator and streamed again
 * as often as needed to reach n MiB.  The checksum is the first eight
 * bytes of the digest, big-endian.
 */
#include "bench.h"

#define BUF_SIZE (4u << 20)

const int32_t kernel_default_n = 8;

static uint8_t buf[BUF_SIZE];

/* FIPS 180-4, 4.2.2: first 32 bits of the cube roots of the first primes. */
static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
	0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

struct sha256 {
	uint32_t h[8];
	uint64_t total; /* bytes fed so far */
	uint8_t block[64];
	uint32_t fill; /* bytes waiting in block */
};

static inline uint32_t ror(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static void compress(uint32_t h[8], const uint8_t *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, hh, t1, t2;
	unsigned i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^
			      (w[i - 15] >> 3);
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^
			      (w[i - 2] >> 10);
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = h[0];
	b = h[1];
	c = h[2];
	d = h[3];
	e = h[4];
	f = h[5];
	g = h[6];
	hh = h[7];
	for (i = 0; i < 64; i++) {
		t1 = hh + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) +
		     ((e & f) ^ (~e & g)) + K[i] + w[i];
		t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) +
		     ((a & b) ^ (a & c) ^ (b & c));
		hh = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
	h[5] += f;
	h[6] += g;
	h[7] += hh;
}

static void sha256_init(struct sha256 *s)
{
	/* FIPS 180-4, 5.3.3: square roots of the first eight primes. */
	static const uint32_t iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};
	unsigned i;

	for (i = 0; i < 8; i++)
		s->h[i] = iv[i];
	s->total = 0;
	s->fill = 0;
}

static void sha256_update(struct sha256 *s, const uint8_t *p, size_t len)
{
	s->total += len;
	while (s->fill && len) {
		s->block[s->fill++] = *p++;
		len--;
		if (s->fill == 64) {
			compress(s->h, s->block);
			s->fill = 0;
		}
	}
	for (; len >= 64; len -= 64, p += 64)
		compress(s->h, p);
	while (len--)
		s->block[s->fill++] = *p++;
}

static void sha256_final(struct sha256 *s, uint8_t out[32])
{
	uint64_t bits = s->total * 8;
	unsigned i;

	s->block[s->fill++] = 0x80;
	if (s->fill > 56) {
		while (s->fill < 64)
			s->block[s->fill++] = 0;
		compress(s->h, s->block);
		s->fill = 0;
	}
	while (s->fill < 56)
		s->block[s->fill++] = 0;
	for (i = 0; i < 8; i++)
		s->block[56 + i] = (uint8_t)(bits >> (56 - 8 * i));
	compress(s->h, s->block);
	for (i = 0; i < 32; i++)
		out[i] = (uint8_t)(s->h[i / 4] >> (24 - 8 * (i % 4)));
}

void kernel_setup(int32_t n)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	uint32_t i;

	for (i = 0; i < BUF_SIZE; i += 8) {
		unsigned k;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		for (k = 0; k < 8; k++)
			buf[i + k] = (uint8_t)(x >> (8 * k));
	}
}

uint64_t kernel_work(int32_t n)
{
	uint64_t left = (uint64_t)n << 20, r = 0;
	struct sha256 s;
	uint8_t d[32];
	unsigned i;

	sha256_init(&s);
	while (left) {
		/* An odd chunk size keeps the partial-block path exercised. */
		size_t chunk =
			left < BUF_SIZE - 1 ? (size_t)left : BUF_SIZE - 1;

		sha256_update(&s, buf, chunk);
		left -= chunk;
	}
	sha256_final(&s, d);
	for (i = 0; i < 8; i++)
		r = r << 8 | d[i];
	return r;
}
