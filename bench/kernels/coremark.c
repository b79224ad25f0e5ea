/*
 * coremark.c - a CoreMark-like mixed integer workload (our own code,
 * modelled on CoreMark's structure, not its source).  Each of the n
 * iterations runs three parts and folds their results into a CRC-16:
 *   - list: find, reverse and merge-sort a 64-node linked list, with the
 *     comparison going through a function pointer;
 *   - matrix: 16x16 int16 matrices: add/multiply by a constant,
 *     matrix-vector and matrix-matrix products, bit-field extraction;
 *   - state machine: classify comma-separated numeric tokens (integer,
 *     decimal, scientific, invalid) in a 256-byte buffer, once clean and
 *     once with seeded corruption.
 * The per-iteration seed keeps the compiler from folding any part away.
 */
#include "bench.h"

const int32_t kernel_default_n = 8000;

/* ---- CRC-16 (CCITT polynomial, bitwise) --------------------------------- */

static uint16_t crc8(uint8_t v, uint16_t crc)
{
	unsigned i;

	for (i = 0; i < 8; i++) {
		unsigned bit = ((crc >> 15) ^ (v >> 7)) & 1;

		crc = (uint16_t)(crc << 1);
		if (bit)
			crc ^= 0x1021;
		v = (uint8_t)(v << 1);
	}
	return crc;
}

static uint16_t crc16(uint16_t v, uint16_t crc)
{
	return crc8((uint8_t)(v >> 8), crc8((uint8_t)v, crc));
}

static uint16_t crc32v(uint32_t v, uint16_t crc)
{
	return crc16((uint16_t)(v >> 16), crc16((uint16_t)v, crc));
}

/* ---- list --------------------------------------------------------------- */

#define LIST_N 64

struct node {
	struct node *next;
	int16_t data;
	int16_t idx;
};

typedef int (*node_cmp)(const struct node *, const struct node *);

static struct node pool[LIST_N];

static struct node *list_build(uint32_t seed)
{
	uint32_t x = seed | 1;
	unsigned i;

	for (i = 0; i < LIST_N; i++) {
		x = x * 1103515245u + 12345u;
		pool[i].data = (int16_t)((x >> 16) & 0x3ff);
		pool[i].idx = (int16_t)i;
		pool[i].next = i + 1 < LIST_N ? &pool[i + 1] : NULL;
	}
	return &pool[0];
}

static struct node *list_find(struct node *l, int16_t data)
{
	while (l && l->data != data)
		l = l->next;
	return l;
}

static struct node *list_reverse(struct node *l)
{
	struct node *prev = NULL, *next;

	while (l) {
		next = l->next;
		l->next = prev;
		prev = l;
		l = next;
	}
	return prev;
}

static int cmp_data(const struct node *a, const struct node *b)
{
	return a->data != b->data ? a->data - b->data : a->idx - b->idx;
}

static int cmp_idx(const struct node *a, const struct node *b)
{
	return a->idx - b->idx;
}

/* Bottom-up merge sort of a singly linked list: stable, O(n log n). */
static struct node *list_sort(struct node *l, node_cmp cmp)
{
	unsigned width = 1, merges;

	if (!l)
		return l;
	do {
		struct node *p = l, *tail = NULL;

		merges = 0;
		l = NULL;
		while (p) {
			struct node *q = p, *e;
			unsigned psize = 0, qsize = width;

			merges++;
			while (psize < width && q) {
				psize++;
				q = q->next;
			}
			while (psize || (qsize && q)) {
				if (!psize) {
					e = q;
					q = q->next;
					qsize--;
				} else if (!qsize || !q || cmp(p, q) <= 0) {
					e = p;
					p = p->next;
					psize--;
				} else {
					e = q;
					q = q->next;
					qsize--;
				}
				if (tail)
					tail->next = e;
				else
					l = e;
				tail = e;
			}
			p = q;
		}
		tail->next = NULL;
		width *= 2;
	} while (merges > 1);
	return l;
}

static uint16_t list_part(uint32_t seed, uint16_t crc)
{
	struct node *l = list_build(seed), *hit;
	int found = 0, missed = 0;
	unsigned k;

	for (k = 0; k < 8; k++) {
		hit = list_find(l, (int16_t)((seed >> k) & 0x3ff));
		if (hit) {
			found++;
			crc = crc16((uint16_t)hit->idx, crc);
		} else {
			missed++;
		}
		/* Move the head to the end now and then: lists get reshaped. */
		if (k & 1)
			l = list_reverse(l);
	}
	l = list_sort(l, cmp_data);
	for (hit = l; hit; hit = hit->next)
		crc = crc16((uint16_t)hit->data, crc);
	l = list_sort(l, cmp_idx);
	for (hit = l, k = 0; hit; hit = hit->next, k++)
		crc = crc16((uint16_t)(hit->idx ^ (int16_t)k), crc);
	return crc16((uint16_t)(found * 256 + missed), crc);
}

/* ---- matrix ------------------------------------------------------------- */

#define MAT_N 16

static int16_t ma[MAT_N * MAT_N], mb[MAT_N * MAT_N], mv[MAT_N];
static int32_t mc[MAT_N * MAT_N];

static void mat_init(uint32_t seed)
{
	uint32_t x = seed ^ 0x2545f491u;
	unsigned i;

	for (i = 0; i < MAT_N * MAT_N; i++) {
		x = x * 1664525u + 1013904223u;
		ma[i] = (int16_t)((x >> 20) & 0x7ff) - 1024;
		mb[i] = (int16_t)((x >> 8) & 0x7ff) - 1024;
	}
	for (i = 0; i < MAT_N; i++)
		mv[i] = (int16_t)(i * 37 - 300);
}

/* Sum with a running clip, so the result depends on the order. */
static int32_t mat_sum(const int32_t *c, int32_t clip)
{
	int32_t sum = 0, prev = 0, ret = 0;
	unsigned i;

	for (i = 0; i < MAT_N * MAT_N; i++) {
		sum += c[i] >> 4;
		if (sum > clip) {
			ret += 10;
			sum = 0;
		} else {
			ret += c[i] > prev ? 1 : 0;
		}
		prev = c[i];
	}
	return ret;
}

static void mat_add_const(int16_t *a, int16_t v)
{
	unsigned i;

	for (i = 0; i < MAT_N * MAT_N; i++)
		a[i] = (int16_t)(a[i] + v);
}

static void mat_mul_const(int32_t *c, const int16_t *a, int16_t v)
{
	unsigned i;

	for (i = 0; i < MAT_N * MAT_N; i++)
		c[i] = (int32_t)a[i] * v;
}

static void mat_mul_vec(int32_t *c, const int16_t *a, const int16_t *v)
{
	unsigned i, j;

	for (i = 0; i < MAT_N; i++) {
		int32_t s = 0;

		for (j = 0; j < MAT_N; j++)
			s += (int32_t)a[i * MAT_N + j] * v[j];
		c[i] = s;
	}
}

static void mat_mul(int32_t *c, const int16_t *a, const int16_t *b)
{
	unsigned i, j, k;

	for (i = 0; i < MAT_N; i++) {
		for (j = 0; j < MAT_N; j++) {
			int32_t s = 0;

			for (k = 0; k < MAT_N; k++)
				s += (int32_t)a[i * MAT_N + k] *
				     b[k * MAT_N + j];
			c[i * MAT_N + j] = s;
		}
	}
}

static void mat_mul_bits(int32_t *c, const int16_t *a, const int16_t *b)
{
	unsigned i, j, k;

	for (i = 0; i < MAT_N; i++) {
		for (j = 0; j < MAT_N; j++) {
			int32_t s = 0;

			for (k = 0; k < MAT_N; k++) {
				int32_t t = (int32_t)a[i * MAT_N + k] *
					    b[k * MAT_N + j];
				s += ((t >> 2) & 0xf) * ((t >> 5) & 0x7f);
			}
			c[i * MAT_N + j] = s;
		}
	}
}

static uint16_t matrix_part(uint32_t seed, uint16_t crc)
{
	int16_t v = (int16_t)((seed & 0xff) | 1);

	mat_init(seed);
	mat_add_const(ma, v);
	mat_mul_const(mc, ma, v);
	crc = crc16((uint16_t)mat_sum(mc, v * 64), crc);
	mat_mul_vec(mc, ma, mv);
	crc = crc16((uint16_t)mat_sum(mc, v * 64), crc);
	mat_mul(mc, ma, mb);
	crc = crc16((uint16_t)mat_sum(mc, v * 64), crc);
	mat_mul_bits(mc, ma, mb);
	crc = crc16((uint16_t)mat_sum(mc, v * 64), crc);
	mat_add_const(ma, (int16_t)-v);
	return crc32v((uint32_t)mc[MAT_N * MAT_N - 1], crc);
}

/* ---- state machine ------------------------------------------------------ */

#define SM_LEN 256

enum sm_state {
	SM_START,
	SM_SIGN,
	SM_INT,
	SM_DOT,
	SM_FRAC,
	SM_EXP,
	SM_EXP_SIGN,
	SM_SCI,
	SM_INVALID,
	SM_NSTATES,
};

static char smbuf[SM_LEN];

static void sm_init(void)
{
	static const char *const tokens[] = {
		"5012",	    "1234",	"-874",	    "+122",
		"35.54400", ".1234500", "-110.700", "+0.64400",
		"5.500e+3", "-.123e-2", "-87e+832", "+0.6e-12",
		"T0.3e-1F", "-T.T++Tq", "1T3.4e4z", "34.0e-T^",
	};
	unsigned pos = 0, t = 0;

	while (pos + 9 < SM_LEN) {
		const char *s = tokens[t % 16];

		while (*s)
			smbuf[pos++] = *s++;
		smbuf[pos++] = ',';
		t = t * 7 + 3;
	}
	while (pos < SM_LEN)
		smbuf[pos++] = ',';
	smbuf[SM_LEN - 1] = 0;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Advances over one token; counts every state entered in `transitions`. */
static enum sm_state sm_token(const char **pp, uint32_t *transitions)
{
	const char *p = *pp;
	enum sm_state st = SM_START;
	char c;

	for (; (c = *p) != 0 && c != ','; p++) {
		enum sm_state next = SM_INVALID;

		switch (st) {
		case SM_START:
			if (is_digit(c))
				next = SM_INT;
			else if (c == '+' || c == '-')
				next = SM_SIGN;
			else if (c == '.')
				next = SM_DOT;
			break;
		case SM_SIGN:
			if (is_digit(c))
				next = SM_INT;
			else if (c == '.')
				next = SM_DOT;
			break;
		case SM_INT:
			if (is_digit(c))
				next = SM_INT;
			else if (c == '.')
				next = SM_FRAC;
			else if (c == 'e' || c == 'E')
				next = SM_EXP;
			break;
		case SM_DOT:
			if (is_digit(c))
				next = SM_FRAC;
			break;
		case SM_FRAC:
			if (is_digit(c))
				next = SM_FRAC;
			else if (c == 'e' || c == 'E')
				next = SM_EXP;
			break;
		case SM_EXP:
			if (c == '+' || c == '-')
				next = SM_EXP_SIGN;
			else if (is_digit(c))
				next = SM_SCI;
			break;
		case SM_EXP_SIGN:
		case SM_SCI:
			if (is_digit(c))
				next = SM_SCI;
			break;
		default:
			break;
		}
		if (next != st)
			transitions[next]++;
		st = next;
	}
	*pp = c ? p + 1 : p;
	return st;
}

static void sm_scan(uint32_t *finals, uint32_t *transitions)
{
	const char *p = smbuf;

	while (*p) {
		enum sm_state st = sm_token(&p, transitions);

		finals[st]++;
	}
}

static uint16_t state_part(uint32_t seed, uint16_t crc)
{
	uint32_t finals[SM_NSTATES] = {0}, transitions[SM_NSTATES] = {0};
	unsigned i, step = (seed & 0xf) + 3;

	sm_scan(finals, transitions);
	/* Corrupt every step-th byte (never the terminator), scan, undo. */
	for (i = 0; i < SM_LEN - 1; i += step)
		smbuf[i] = (char)(smbuf[i] ^ (seed >> 8 & 0x7) ^ 1);
	sm_scan(finals, transitions);
	for (i = 0; i < SM_LEN - 1; i += step)
		smbuf[i] = (char)(smbuf[i] ^ (seed >> 8 & 0x7) ^ 1);
	for (i = 0; i < SM_NSTATES; i++) {
		crc = crc32v(finals[i], crc);
		crc = crc32v(transitions[i], crc);
	}
	return crc;
}

/* ---- driver ------------------------------------------------------------- */

void kernel_setup(int32_t n)
{
	sm_init();
}

uint64_t kernel_work(int32_t n)
{
	uint64_t h = BENCH_MIX_INIT;
	uint16_t crc = 0;
	int32_t it;

	for (it = 0; it < n; it++) {
		uint32_t seed = (uint32_t)it * 0x9e3779b9u + 0x66;

		crc = list_part(seed, crc);
		crc = matrix_part(seed, crc);
		crc = state_part(seed, crc);
		h = bench_mix(h, crc);
	}
	return h;
}
