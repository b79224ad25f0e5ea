/*
 * exportname.h - the one resolver of a function export's name, as a
 * client writes it, to the function a component instance exports: the
 * daemon's io.hostel.Call.Invoke (WAVE and JSON) and `hostel run
 * --invoke` use it, so a name means the same everywhere.
 *
 * A function export's full name is "f" for a root function and
 * "IFACE#f" for function f of the exported instance IFACE
 * ("hostel:calc/api@0.1.0#greet").  A query Q resolves as follows:
 *  1. Q equals a full name: that function (an exact name always wins
 *     over the partial matches below, whatever else they would find).
 *  2. Else the partial matches: "f" matches IFACE#f of any exported
 *     instance; "IFACE#f" where IFACE has no "@version" matches f of
 *     IFACE at any version ("hostel:calc/api#greet" matches
 *     "hostel:calc/api@0.1.0#greet").  Exactly one partial match: that
 *     function (CM_NAME_FOUND, partial set).  Several: CM_NAME_AMBIGUOUS,
 *     with the first CM_NAME_CANDIDATES_MAX of them (in export order)
 *     and their count.
 *  3. None: CM_NAME_NOT_FOUND with at most CM_NAME_CANDIDATES_MAX of the
 *     closest names ("did you mean"): those whose function part is
 *     within a small edit distance of Q's (1 for names up to 4
 *     characters, 2 up to 8, else 3), and those whose full name without
 *     its version ends with Q at a name boundary ("api#greet" for
 *     "hostel:calc/api@0.1.0#greet"), closest first, then in export
 *     order; and how many function exports there are (total).
 *
 * Bounds: the query and the names are a client's and a guest's; the
 * resolver allocates nothing (cm_instance_resolve_export allocates one
 * array of the instance's function exports), and its distance is a
 * band of width 7 around the diagonal, so its cost is linear in the
 * names' total length (a name or query longer than
 * CM_NAME_DISTANCE_MAX characters is only compared exactly and by
 * suffix).
 */
#ifndef HOSTEL_RUN_EXPORTNAME_H
#define HOSTEL_RUN_EXPORTNAME_H

#include <stddef.h>
#include <stdint.h>

#include "run/instance.h"

#define CM_NAME_CANDIDATES_MAX 5
#define CM_NAME_DISTANCE_MAX   256

/* One function export: iface NULL at the root.  Strings not owned. */
typedef struct cm_export_ref {
	const char *iface;
	const char *name;
} cm_export_ref;

typedef enum cm_name_match {
	CM_NAME_FOUND = 0,
	CM_NAME_AMBIGUOUS,
	CM_NAME_NOT_FOUND,
	CM_NAME_NOMEM,
} cm_name_match;

typedef struct cm_name_resolution {
	cm_name_match match;
	cm_export_ref found; /* FOUND */
	bool partial;	     /* FOUND by a partial match (rule 2) */
	/* AMBIGUOUS: the matches; NOT_FOUND: the closest names */
	uint32_t ncandidates;
	cm_export_ref candidates[CM_NAME_CANDIDATES_MAX];
	uint32_t nmatches; /* AMBIGUOUS: how many matched in all */
	uint32_t total;	   /* how many function exports there are */
} cm_name_resolution;

/* Resolve query among the n exports (rules above); fills *out. */
void cm_export_name_resolve(const cm_export_ref *exports, uint32_t n,
			    const char *query, size_t len,
			    cm_name_resolution *out);

/*
 * The same over inst's function exports: the root's functions and those
 * of its exported instances.  The function, or NULL with out->match
 * saying why (CM_NAME_NOMEM: no memory for the list).  The strings in
 * *out belong to inst.
 */
cm_func *cm_instance_resolve_export(cm_component_instance *inst,
				    const char *query, size_t len,
				    cm_name_resolution *out);

/*
 * ref's full name ("f", "IFACE#f") into buf (NUL-terminated, cut to
 * size); the length it needs without the NUL, as snprintf.
 */
size_t cm_export_ref_format(const cm_export_ref *ref, char *buf, size_t size);

#endif
