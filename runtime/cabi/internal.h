/*
 * internal.h - helpers shared by the files of runtime/cabi; not for other
 * layers.  Memory access re-reads the memory's data pointer every time,
 * because any guest call (realloc) may grow and move it.
 */
#ifndef HOSTEL_CABI_INTERNAL_H
#define HOSTEL_CABI_INTERNAL_H

#include <string.h>

#include "cabi/cabi.h"
#include "wasm/store.h"

/* Record a lend for cabi_lift_borrow (table.c). */
int cabi_lenders_add(cabi_lenders *l, uint32_t index, cabi_error *err);

/* A trap in cx->err; always -1. */
int cabi_trap(cabi_cx *cx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A host-value error (CABI_ERR_VALUE) in cx->err; always -1. */
int cabi_bad_value(cabi_cx *cx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int cabi_nomem(cabi_cx *cx);
/* The trap past the store's budget (CABI_MSG_HOST_BYTES and the limit). */
int cabi_budget_trap(cabi_cx *cx);
/*
 * lift_size.c: whether lifting the list of `length` elem values at ptr
 * stays within what cx's budget has left (true also when the walk met a
 * malformed value, which the lift itself reports).
 */
bool cabi_lift_list_fits(cabi_cx *cx, uint64_t ptr, uint64_t length,
			 const cm_type *elem);

/* The memory (trap "... requires a memory" if there is none). */
int cabi_need_memory(cabi_cx *cx);

static inline uint64_t cabi_mem_size(const cabi_cx *cx)
{
	return cx->opts.memory ? wasm_memory_size_bytes(cx->opts.memory) : 0;
}

/*
 * The memory's bytes.  What the host writes through them is marked in
 * the memory's written map (wasm/store.h; a snapshot's delta reads only
 * marked pages): cabi_store_int marks what it stores, and
 * cabi_realloc_checked the whole range it hands out, where strings and
 * lists are then written.  A write anywhere else must mark its range.
 */
static inline uint8_t *cabi_mem(cabi_cx *cx)
{
	return cx->opts.memory->data;
}

/* ptr + len <= memory size, without overflow. */
static inline bool cabi_in_bounds(const cabi_cx *cx, uint64_t ptr, uint64_t len)
{
	uint64_t size = cabi_mem_size(cx);

	return len <= size && ptr <= size - len;
}

static inline uint64_t cabi_align_to(uint64_t x, uint64_t a)
{
	return (x + a - 1) / a * a;
}

static inline uint64_t cabi_load_int(cabi_cx *cx, uint64_t ptr, uint32_t n)
{
	const uint8_t *p = cabi_mem(cx) + ptr;
	uint64_t v = 0;

	for (uint32_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static inline void cabi_store_int(cabi_cx *cx, uint64_t v, uint64_t ptr,
				  uint32_t n)
{
	uint8_t *p = cabi_mem(cx) + ptr;

	wasm_memory_mark(cx->opts.memory, ptr, n);
	for (uint32_t i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Pointer size in bytes. */
static inline uint32_t cabi_ptr_size(const cabi_cx *cx)
{
	return cx->opts.ptr64 ? 8 : 4;
}

static inline uint64_t cabi_utf16_tag(const cabi_cx *cx)
{
	return cx->opts.ptr64 ? CABI_UTF16_TAG64 : CABI_UTF16_TAG32;
}

/* Messages that depend on the peer (cabi_cx.host_peer). */
static inline const char *cabi_msg_realloc_align(const cabi_cx *cx)
{
	return cx->host_peer ? CABI_MSG_REALLOC_ALIGN : CABI_MSG_UNALIGNED;
}

static inline const char *cabi_msg_realloc_oob(const cabi_cx *cx,
					       const char *guest_msg)
{
	return cx->host_peer ? CABI_MSG_REALLOC_OOB : guest_msg;
}

static inline const char *cabi_msg_string_oob(const cabi_cx *cx)
{
	return cx->host_peer ? CABI_MSG_HOST_STRING_OOB : CABI_MSG_STRING_OOB;
}

/*
 * realloc(old, oldsz, align, newsz), then the reference's result checks:
 * aligned (when align > 1) and ptr + newsz within memory; `oob_msg` is the
 * guest-peer wording for the bounds trap.  The range is marked written
 * and its newsz bytes counted as host work (cabi_budget.work).
 */
int cabi_realloc_checked(cabi_cx *cx, uint64_t old_ptr, uint64_t old_size,
			 uint32_t align, uint64_t new_size, const char *oob_msg,
			 uint64_t *out);

/* Resolve the runtime resource type of a handle type (may be NULL). */
const cabi_resource_type *cabi_handle_rt(cabi_cx *cx, const cm_type *t);

#endif
