/*
 * component.h - the public API of hostel's Component Model front end:
 * load (decode + validate) a component binary and walk what it imports
 * and exports.
 *
 * Contract: cm_component_load never aborts on input; it returns 0 and a
 * component, or -1 with *err filled: kind WASM_ERR_MALFORMED (the binary
 * does not decode), WASM_ERR_INVALID (it decodes but validation rejects
 * it) or WASM_ERR_RESOURCE (out of memory / over the memory budget); the
 * byte offset; wasmparser's message text.  Embedded core modules are
 * decoded and validated by the core engine (runtime/wasm).  A core
 * module given where the component is expected (its preamble at offset
 * 0 says version 1, layer 0) is MALFORMED at offset 4 with
 * CM_CORE_MODULE_MSG, which says what it is and what to do; a nested
 * one keeps the suite's "expected a version header for a component".
 *
 * A loaded component is immutable and owns everything reachable from it
 * (see component/types.h for the representation, the contract the linker
 * and the canonical ABI build on).  cm_component_free releases it all.
 */
#ifndef HOSTEL_COMPONENT_COMPONENT_H
#define HOSTEL_COMPONENT_COMPONENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "component/types.h"
#include "wasm/error.h"

#define CM_CORE_MODULE_MSG                                                     \
	"this is a core WebAssembly module, not a component (hostel run "      \
	"runs core modules directly; wasm-tools component new makes a "        \
	"component from one)"

int cm_component_load(const uint8_t *bytes, size_t len, cm_component **out,
		      wasm_error *err);
/* Frees a component returned by cm_component_load (the root only). */
void cm_component_free(cm_component *c);

/* True when the first 8 bytes are a component preamble. */
bool cm_is_component_binary(const uint8_t *bytes, size_t len);

/* The component's type: its imports and exports with their types. */
const cm_type *cm_component_type(const cm_component *c);

uint32_t cm_component_nimports(const cm_component *c);
const cm_import *cm_component_import(const cm_component *c, uint32_t i);
uint32_t cm_component_nexports(const cm_component *c);
const cm_export *cm_component_export(const cm_component *c, uint32_t i);
/* An export by name (exact match), or NULL. */
const cm_export *cm_component_find_export(const cm_component *c,
					  const char *name);

#endif
