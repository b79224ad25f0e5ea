/*
 * component.c - the public entry points of component.h: load = decode
 * (decode.c) + validate (validate.c) into one arena; free; accessors.
 *
 * Contract: on failure nothing leaks (the arena and every core module
 * decoded so far are released); on success the root component owns the
 * arena and its core modules.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - cm_component_load: the load's arena, LOAD_BASE_LIMIT (256 MiB) +
 *    LOAD_PER_BYTE (32) x the component's length; decode.c and
 *    validate.c allocate in it.
 */
#include <string.h>

#include "component/component.h"
#include "component/decode.h"
#include "component/internal.h"

/* Memory budget of one load: generous, but bounded by the input size. */
#define LOAD_BASE_LIMIT (256u << 20)
#define LOAD_PER_BYTE	32u

bool cm_is_component_binary(const uint8_t *bytes, size_t len)
{
	return cm_is_component_header(bytes, len);
}

static void free_modules(cm_component *c)
{
	for (uint32_t i = 0; i < c->nmodules; i++)
		wasm_module_free(c->modules[i]);
	c->nmodules = 0;
	for (uint32_t i = 0; i < c->ncomponents; i++)
		if (c->components[i] != NULL)
			free_modules(c->components[i]);
}

int cm_component_load(const uint8_t *bytes, size_t len, cm_component **out,
		      wasm_error *err)
{
	size_t limit = LOAD_BASE_LIMIT;
	cm_arena *a;
	raw_component *raw;
	cm_component *c = NULL;
	int rc;

	if (len < (SIZE_MAX - LOAD_BASE_LIMIT) / LOAD_PER_BYTE)
		limit += len * LOAD_PER_BYTE;
	a = cm_arena_new(limit);
	if (a == NULL)
		return wasm_error_set(err, WASM_ERR_RESOURCE, 0,
				      "out of memory");
	if (cm_decode(a, bytes, len, &raw, err)) {
		cm_arena_free(a);
		return -1;
	}
	rc = cm_validate(a, raw, &c, err);
	if (rc) {
		/* The raw tree owns the core modules until success; after
		 * it, the component tree does. */
		cm_raw_free_modules(raw);
		cm_arena_free(a);
		return -1;
	}
	*out = c;
	return 0;
}

void cm_component_free(cm_component *c)
{
	cm_arena *a;

	if (c == NULL)
		return;
	a = c->arena;
	free_modules(c);
	cm_arena_free(a);
}

const cm_type *cm_component_type(const cm_component *c)
{
	return c->type;
}

uint32_t cm_component_nimports(const cm_component *c)
{
	return c->nimports;
}

const cm_import *cm_component_import(const cm_component *c, uint32_t i)
{
	return i < c->nimports ? &c->imports[i] : NULL;
}

uint32_t cm_component_nexports(const cm_component *c)
{
	return c->nexports;
}

const cm_export *cm_component_export(const cm_component *c, uint32_t i)
{
	return i < c->nexports ? &c->exports[i] : NULL;
}

const cm_export *cm_component_find_export(const cm_component *c,
					  const char *name)
{
	size_t n = strlen(name);

	for (uint32_t i = 0; i < c->nexports; i++)
		if (c->exports[i].name.str.len == n &&
		    !memcmp(c->exports[i].name.str.ptr, name, n))
			return &c->exports[i];
	return NULL;
}
