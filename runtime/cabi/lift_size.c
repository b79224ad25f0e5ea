/*
 * lift_size.c - what a list will cost the host once lifted, measured
 * before the lift allocates any of it (the store's budget, cabi_budget
 * in cabi.h).
 *
 * Why it exists: charging each allocation as the lift makes it (abi.c
 * lift_seq, string.c) bounds the memory, not the time.  A value of
 * nested lists that alias one range (tests/guests/hostile/bomb.wat: 2 KB
 * of guest, 2^39 bytes lifted) reached the 256 MiB limit only after
 * making 6.7 million host values, 0.7 s of the daemon's one loop thread
 * per try, during which every other service waited (p99 of another
 * service's calls 655 ms in tests/daemon-hostile.sh).  Measured first,
 * the same value is refused after reading some hundred (ptr, len)
 * pairs, in microseconds.
 *
 * Contract: cabi_lift_list_fits() walks the list's elements in linear
 * memory as load() would, adding up the bytes lift_seq, lift_payload and
 * the string loads will charge for them (a list<u8>/list<s8>, held in
 * byte form, its n bytes), and stops as soon as the sum
 * passes what the budget has left.  A list of elements that allocate
 * nothing (numbers, chars, handles, enums, flags) costs one step.  Every
 * other element visited was paid for by its list's array of cm_vals, so
 * the walk takes at most (budget left) / sizeof(cm_val) steps.  It reads
 * memory only inside its bounds; where a value is malformed (a range out
 * of bounds, a misaligned pointer, a bad discriminant) the walk stops
 * and says "fits", so the lift itself reports the trap in its own words.
 * It checks no contents (UTF-8, chars, handles): a value that is both
 * malformed there and larger than the budget traps on the budget.  It
 * allocates nothing and never runs guest code.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none: the
 * walk allocates nothing, and takes at most (budget left) /
 * sizeof(cm_val) steps (see above).
 */
#include "cabi/internal.h"

typedef struct sizing {
	cabi_cx *cx;
	uint64_t left; /* what the budget has left */
	uint64_t sum;  /* what the walk has counted */
	bool over;     /* sum > left */
	bool stop;     /* met a malformed value: the lift will trap */
} sizing;

static uint64_t align_of(const cabi_cx *cx, const cm_type *t)
{
	return cm_alignment(t, cx->opts.ptr64);
}

static uint64_t size_of(const cabi_cx *cx, const cm_type *t)
{
	return t->abi.size[cx->opts.ptr64];
}

/* Types whose lifted value allocates nothing on the host. */
static bool allocates(const cm_type *t)
{
	switch (t->kind) {
	case CM_STRING:
	case CM_LIST:
	case CM_MAP:
	case CM_RECORD:
	case CM_TUPLE:
		return true;
	case CM_VARIANT:
	case CM_OPTION:
	case CM_RESULT:
		for (uint32_t i = 0; i < cm_type_ncases(t); i++)
			if (cm_type_case(t, i) != NULL)
				return true;
		return false;
	default:
		return false;
	}
}

static void add(sizing *z, uint64_t bytes)
{
	if (bytes > z->left - z->sum)
		z->over = true;
	else
		z->sum += bytes;
}

static bool done(const sizing *z)
{
	return z->over || z->stop;
}

static void value(sizing *z, uint64_t ptr, const cm_type *t);

static void elements(sizing *z, uint64_t ptr, uint64_t n, const cm_type *elem)
{
	uint64_t sz = size_of(z->cx, elem);

	add(z, CABI_VALS_BYTES(n));
	if (!allocates(elem))
		return;
	for (uint64_t i = 0; i < n && !done(z); i++)
		value(z, ptr + i * sz, elem);
}

static void list(sizing *z, uint64_t ptr, uint64_t n, const cm_type *elem)
{
	uint64_t sz = size_of(z->cx, elem);

	if (sz == 0 || n > CABI_MAX_LIST_BYTE_LENGTH / sz ||
	    ptr % align_of(z->cx, elem) != 0 ||
	    !cabi_in_bounds(z->cx, ptr, n * sz)) {
		z->stop = true;
		return;
	}
	if (elem->kind == CM_U8 || elem->kind == CM_S8) {
		add(z, n); /* byte form (val.h cm_vals): 1 byte an element */
		return;
	}
	elements(z, ptr, n, elem);
}

/* The bytes string.c will allocate for this string, as it computes
 * them; a string out of bounds stops the walk. */
static void string(sizing *z, uint64_t ptr, uint64_t tagged)
{
	uint64_t tag = cabi_utf16_tag(z->cx), bytes, charge;
	uint32_t alignment = 2;

	switch (z->cx->opts.string_encoding) {
	case CM_UTF8:
		alignment = 1;
		bytes = tagged;
		charge = bytes + 1;
		break;
	case CM_UTF16:
		bytes = tagged > UINT64_MAX / 2 ? UINT64_MAX : 2 * tagged;
		charge = bytes / 2 * 3 + 1;
		break;
	default:
		if (tagged & tag) {
			bytes = 2 * (tagged ^ tag);
			charge = bytes / 2 * 3 + 1;
		} else {
			bytes = tagged;
			charge = bytes * 2 + 1;
		}
		break;
	}
	if (bytes > CABI_MAX_STRING_BYTE_LENGTH || ptr % alignment != 0 ||
	    !cabi_in_bounds(z->cx, ptr, bytes)) {
		z->stop = true;
		return;
	}
	add(z, charge);
}

static void value(sizing *z, uint64_t ptr, const cm_type *t)
{
	cabi_cx *cx = z->cx;
	uint32_t p = cabi_ptr_size(cx);

	switch (t->kind) {
	case CM_STRING:
		string(z, cabi_load_int(cx, ptr, p),
		       cabi_load_int(cx, ptr + p, p));
		return;
	case CM_MAP:
		list(z, cabi_load_int(cx, ptr, p),
		     cabi_load_int(cx, ptr + p, p), t->u.map.entry);
		return;
	case CM_LIST:
		if (t->u.list.len != 0)
			elements(z, ptr, t->u.list.len, t->u.list.elem);
		else
			list(z, cabi_load_int(cx, ptr, p),
			     cabi_load_int(cx, ptr + p, p), t->u.list.elem);
		return;
	case CM_RECORD:
	case CM_TUPLE: {
		uint32_t n = cm_type_nfields(t);

		add(z, CABI_VALS_BYTES(n));
		for (uint32_t i = 0; i < n && !done(z); i++) {
			const cm_type *f = cm_type_field(t, i);

			ptr = cabi_align_to(ptr, align_of(cx, f));
			if (allocates(f))
				value(z, ptr, f);
			ptr += size_of(cx, f);
		}
		return;
	}
	case CM_VARIANT:
	case CM_OPTION:
	case CM_RESULT: {
		uint32_t n = cm_type_ncases(t);
		uint64_t c = cabi_load_int(cx, ptr, cm_discriminant_size(n));
		const cm_type *pt;

		if (c >= n) {
			z->stop = true;
			return;
		}
		pt = cm_type_case(t, (uint32_t)c);
		if (pt == NULL)
			return;
		add(z, CABI_VALS_BYTES(1));
		if (!done(z) && allocates(pt))
			value(z, ptr + align_of(cx, t), pt);
		return;
	}
	default:
		return;
	}
}

bool cabi_lift_list_fits(cabi_cx *cx, uint64_t ptr, uint64_t length,
			 const cm_type *elem)
{
	sizing z = {cx, 0, 0, false, false};
	const cabi_budget *b = cx->budget;

	if (b == NULL || b->limit == 0)
		return true;
	z.left = b->used < b->limit ? b->limit - b->used : 0;
	list(&z, ptr, length, elem);
	return !z.over;
}
