/*
 * spectest.h - the `spectest` host module of the core test suite.
 *
 * Contract: spectest_new() creates, in the given store, exactly the
 * objects the core suite's README specifies: print* functions that do
 * nothing, the four immutable globals (666, 666.6), `table` (funcref,
 * 10..20, 32-bit index), `table64` (the same with a 64-bit index; absent
 * if the engine cannot create it) and `memory` (1..2 pages).  They belong
 * to the store; the spectest value only indexes them, so it is freed
 * before or after the store alike.  Shared by `hostel wast` and
 * `hostel run`.
 */
#ifndef HOSTEL_CLIENT_SPECTEST_H
#define HOSTEL_CLIENT_SPECTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wasm/wasm.h"

typedef struct spectest spectest;

/* NULL when the store cannot allocate the objects. */
spectest *spectest_new(wasm_store *s);
void spectest_free(spectest *st);

/* The export `name` (bytes) of the spectest module; false if none. */
bool spectest_lookup(const spectest *st, const uint8_t *name, size_t len,
		     wasm_extern *out);

/* True when `name` (bytes) is the module name "spectest". */
bool spectest_is_module_name(const uint8_t *name, size_t len);

#endif
