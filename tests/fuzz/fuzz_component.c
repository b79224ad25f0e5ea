/*
 * fuzz_component.c - libFuzzer target over the Component Model front end:
 * decode and validate (cm_component_load), then walk the result the way
 * its users do (imports, exports, the WIT rendering).
 *
 * Contract: any input may be rejected; nothing may crash, leak, hang or
 * trip a sanitizer, and a rejection always carries a malformed/invalid/
 * resource error kind.  Built only with --enable-fuzzing (clang).
 */
#include <stdint.h>
#include <stdlib.h>

#include "component/component.h"
#include "component/wit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cm_component *c;
	wasm_error err;
	char *wit;

	if (cm_component_load(data, size, &c, &err) != 0) {
		if (err.kind != WASM_ERR_MALFORMED &&
		    err.kind != WASM_ERR_INVALID &&
		    err.kind != WASM_ERR_RESOURCE)
			abort();
		return 0;
	}
	for (uint32_t i = 0; i < cm_component_nimports(c); i++)
		if (cm_component_import(c, i)->name.str.ptr == NULL)
			abort();
	for (uint32_t i = 0; i < cm_component_nexports(c); i++)
		if (cm_component_export(c, i)->name.str.ptr == NULL)
			abort();
	wit = cm_wit_world(c, "fuzz");
	free(wit);
	cm_component_free(c);
	return 0;
}
