/*
 * exportname.c - the resolver of function export names (exportname.h):
 * exact names, unqualified and unversioned names, and the closest names
 * when nothing matches.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - cm_instance_resolve_export: one array of the instance's function
 *    exports (two pointers each), as many as its component defines
 *    (bounded by the component's size).  The resolver itself allocates
 *    nothing: its distance rows are on the stack, for names of at most
 *    CM_NAME_DISTANCE_MAX characters.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/exportname.h"
#include "run/rt.h"

/* The widest edit distance a candidate may have (exportname.h). */
#define BAND_MAX 3

static bool str_eq(const char *s, const char *p, size_t len)
{
	return strlen(s) == len && !memcmp(s, p, len);
}

/* The last `#` of q[0..len), or NULL. */
static const char *last_hash(const char *q, size_t len)
{
	while (len > 0)
		if (q[--len] == '#')
			return q + len;
	return NULL;
}

/* The length of iface without its "@version". */
static size_t unversioned_len(const char *iface)
{
	const char *at = strchr(iface, '@');

	return at ? (size_t)(at - iface) : strlen(iface);
}

static bool full_eq(const cm_export_ref *r, const char *q, size_t len)
{
	size_t il;

	if (r->iface == NULL)
		return str_eq(r->name, q, len);
	il = strlen(r->iface);
	return il < len && !memcmp(r->iface, q, il) && q[il] == '#' &&
	       str_eq(r->name, q + il + 1, len - il - 1);
}

/*
 * Rule 2: "f" names IFACE#f of any instance; "IFACE#f" with an
 * unversioned IFACE names f of that interface at any version.
 */
static bool partial_eq(const cm_export_ref *r, const char *q, size_t len)
{
	const char *hash = last_hash(q, len);
	size_t il;

	if (r->iface == NULL)
		return false;
	if (hash == NULL)
		return str_eq(r->name, q, len);
	il = (size_t)(hash - q);
	if (memchr(q, '@', il) != NULL || unversioned_len(r->iface) != il ||
	    memcmp(r->iface, q, il))
		return false;
	return str_eq(r->name, hash + 1, len - il - 1);
}

/*
 * "IFACE#f" whose IFACE is the tail of r's interface name, without its
 * version, after a `/` or `:` ("api#greet", "calc/api#greet" for
 * "hostel:calc/api@0.1.0#greet").
 */
static bool suffix_eq(const cm_export_ref *r, const char *q, size_t len)
{
	const char *hash = last_hash(q, len);
	size_t il, rl;

	if (r->iface == NULL || hash == NULL || hash == q)
		return false;
	il = (size_t)(hash - q);
	rl = unversioned_len(r->iface);
	if (il >= rl || memcmp(r->iface + rl - il, q, il) ||
	    (r->iface[rl - il - 1] != '/' && r->iface[rl - il - 1] != ':'))
		return false;
	return str_eq(r->name, hash + 1, len - il - 1);
}

/*
 * The Levenshtein distance of a and b when it is at most k (<=
 * BAND_MAX), else k + 1: only the band |i - j| <= k of the table is
 * computed, so the cost is linear in the length.  Strings longer than
 * CM_NAME_DISTANCE_MAX are too far.
 */
static unsigned distance(const char *a, size_t la, const char *b, size_t lb,
			 unsigned k)
{
	unsigned rows[2][CM_NAME_DISTANCE_MAX + 2];
	unsigned *prev = rows[0], *cur = rows[1], *t;
	size_t lo, hi;

	if (la > CM_NAME_DISTANCE_MAX || lb > CM_NAME_DISTANCE_MAX ||
	    (la > lb ? la - lb : lb - la) > k)
		return k + 1;
	for (size_t j = 0; j <= lb + 1 && j <= CM_NAME_DISTANCE_MAX + 1; j++)
		prev[j] = j <= k ? (unsigned)j : k + 1;
	for (size_t i = 1; i <= la; i++) {
		unsigned best = k + 1;

		lo = i > k ? i - k : 1;
		hi = i + k < lb ? i + k : lb;
		cur[lo - 1] = lo == 1 && i <= k ? (unsigned)i : k + 1;
		for (size_t j = lo; j <= hi; j++) {
			unsigned v = prev[j - 1] + (a[i - 1] != b[j - 1]);

			if (prev[j] + 1 < v)
				v = prev[j] + 1;
			if (cur[j - 1] + 1 < v)
				v = cur[j - 1] + 1;
			if (v > k + 1)
				v = k + 1;
			cur[j] = v;
			if (v < best)
				best = v;
		}
		if (hi + 1 <= lb)
			cur[hi + 1] = k + 1;
		if (best > k)
			return k + 1;
		t = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

/* Keep the closest CM_NAME_CANDIDATES_MAX, earlier ones first on ties. */
static void keep(cm_name_resolution *out, unsigned scores[],
		 const cm_export_ref *r, unsigned score)
{
	uint32_t i = out->ncandidates;

	if (i == CM_NAME_CANDIDATES_MAX) {
		if (scores[i - 1] <= score)
			return;
		i--;
	} else {
		out->ncandidates++;
	}
	for (; i > 0 && scores[i - 1] > score; i--) {
		out->candidates[i] = out->candidates[i - 1];
		scores[i] = scores[i - 1];
	}
	out->candidates[i] = *r;
	scores[i] = score;
}

void cm_export_name_resolve(const cm_export_ref *exports, uint32_t n,
			    const char *query, size_t len,
			    cm_name_resolution *out)
{
	unsigned scores[CM_NAME_CANDIDATES_MAX];
	const char *hash = last_hash(query, len);
	const char *qn = hash ? hash + 1 : query;
	size_t qnl = hash ? len - (size_t)(hash + 1 - query) : len;
	unsigned k = qnl <= 4 ? 1 : qnl <= 8 ? 2 : BAND_MAX;

	memset(out, 0, sizeof *out);
	out->total = n;
	for (uint32_t i = 0; i < n; i++)
		if (full_eq(&exports[i], query, len)) {
			out->match = CM_NAME_FOUND;
			out->found = exports[i];
			return;
		}
	for (uint32_t i = 0; i < n; i++) {
		if (!partial_eq(&exports[i], query, len))
			continue;
		if (out->nmatches < CM_NAME_CANDIDATES_MAX)
			out->candidates[out->ncandidates++] = exports[i];
		out->nmatches++;
	}
	if (out->nmatches == 1) {
		out->match = CM_NAME_FOUND;
		out->found = out->candidates[0];
		out->partial = true;
		out->ncandidates = 0;
		out->nmatches = 0;
		return;
	}
	if (out->nmatches > 1) {
		out->match = CM_NAME_AMBIGUOUS;
		return;
	}
	out->match = CM_NAME_NOT_FOUND;
	for (uint32_t i = 0; i < n; i++) {
		const cm_export_ref *r = &exports[i];
		unsigned d;

		if (suffix_eq(r, query, len)) {
			keep(out, scores, r, 0);
			continue;
		}
		d = distance(qn, qnl, r->name, strlen(r->name), k);
		if (d <= k)
			keep(out, scores, r, d);
	}
}

size_t cm_export_ref_format(const cm_export_ref *ref, char *buf, size_t size)
{
	int n = ref->iface ? snprintf(buf, size, "%s#%s", ref->iface, ref->name)
			   : snprintf(buf, size, "%s", ref->name);

	return n < 0 ? 0 : (size_t)n;
}

cm_func *cm_instance_resolve_export(cm_component_instance *inst,
				    const char *query, size_t len,
				    cm_name_resolution *out)
{
	const cm_rtinstance *root = &inst->exports;
	cm_export_ref *refs;
	uint32_t n = 0;

	for (uint32_t i = 0; i < root->n; i++) {
		const cm_rtexport *x = &root->exports[i];

		if (x->sort == CM_SORT_FUNC)
			n++;
		else if (x->sort == CM_SORT_INSTANCE && x->val.instance)
			for (uint32_t j = 0; j < x->val.instance->n; j++)
				n += x->val.instance->exports[j].sort ==
				     CM_SORT_FUNC;
	}
	refs = calloc(n ? n : 1, sizeof *refs);
	if (refs == NULL) {
		memset(out, 0, sizeof *out);
		out->match = CM_NAME_NOMEM;
		return NULL;
	}
	n = 0;
	for (uint32_t i = 0; i < root->n; i++) {
		const cm_rtexport *x = &root->exports[i];

		if (x->sort == CM_SORT_FUNC) {
			refs[n].iface = NULL;
			refs[n++].name = x->name.ptr;
		} else if (x->sort == CM_SORT_INSTANCE && x->val.instance) {
			const cm_rtinstance *ri = x->val.instance;

			for (uint32_t j = 0; j < ri->n; j++) {
				if (ri->exports[j].sort != CM_SORT_FUNC)
					continue;
				refs[n].iface = x->name.ptr;
				refs[n++].name = ri->exports[j].name.ptr;
			}
		}
	}
	cm_export_name_resolve(refs, n, query, len, out);
	free(refs);
	if (out->match != CM_NAME_FOUND)
		return NULL;
	return cm_instance_export(inst, out->found.iface, out->found.name);
}
