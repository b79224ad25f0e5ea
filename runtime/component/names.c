/*
 * names.c - the import/export name grammar of digest 1.10: kebab labels,
 * [constructor]/[method]/[static] forms, interface names
 * `ns:pkg/iface@version` with semver versions (or canonversions, 🔗),
 * name attributes, and the strongly-unique canonical form.
 *
 * Contract: cm_name_parse fills the parsed parts of a cm_name or fails
 * with "`NAME` is not a valid extern name: <detail>", where the detail is
 * the precise reason in wasmparser's (and the semver crate's) words
 * ("`aBc` is not in kebab case", "failed to find `.` character",
 * "unexpected end of input while parsing minor version number", ...).
 *
 * Allocations sized by a guest or a client (issue 18 audit): none
 * (names are checked in place).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "component/internal.h"

static bool is_lower(char c)
{
	return c >= 'a' && c <= 'z';
}

static bool is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * label := fragment ('-' fragment)*; the first fragment starts with a
 * letter; a fragment's letters are all lowercase or all uppercase.
 */
bool cm_is_kebab(const char *s, size_t len)
{
	size_t i = 0;
	bool first = true;

	if (len == 0)
		return false;
	while (i < len) {
		bool lower = false, upper = false;
		size_t start = i;

		if (first && !is_lower(s[i]) && !is_upper(s[i]))
			return false;
		for (; i < len && s[i] != '-'; i++) {
			if (is_lower(s[i]))
				lower = true;
			else if (is_upper(s[i]))
				upper = true;
			else if (!is_digit(s[i]))
				return false;
			if (lower && upper)
				return false;
		}
		if (i == start)
			return false;
		first = false;
		if (i < len) {
			i++; /* '-' */
			if (i == len)
				return false;
		}
	}
	return true;
}

static bool is_lower_kebab(const char *s, size_t len)
{
	if (!cm_is_kebab(s, len))
		return false;
	for (size_t i = 0; i < len; i++)
		if (is_upper(s[i]))
			return false;
	return true;
}

typedef struct np {
	vstate *v;
	const cm_name *n;
	size_t offset;
	const char *what; /* "extern name", "name" */
} np;

static int bad(np *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int bad(np *p, const char *fmt, ...)
{
	char detail[CM_MSG_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof detail, fmt, ap);
	va_end(ap);
	return cm_fail(p->v, p->offset, "`%.*s` is not a valid %s: %s",
		       (int)(p->n->str.len > 100 ? 100 : p->n->str.len),
		       p->n->str.ptr, p->what, detail);
}

static int piece(np *p, const char *s, size_t len, cm_str *out)
{
	if (cm_arena_str(p->v->a, s, len, out))
		return cm_oom(p->v);
	return 0;
}

static int kebab(np *p, const char *s, size_t len, cm_str *out)
{
	if (!cm_is_kebab(s, len))
		return bad(p, "`%.*s` is not in kebab case",
			   (int)(len > 100 ? 100 : len), s);
	return out ? piece(p, s, len, out) : 0;
}

/* ---- semver ------------------------------------------------------------ */

typedef struct ver {
	const char *s;
	size_t len, i;
} ver;

static const char *const part_names[3] = {"major", "minor", "patch"};

/* One numeric part; returns 0 and its value (saturated). */
static int ver_num(np *p, ver *vr, int part, uint64_t *val)
{
	size_t start = vr->i;

	*val = 0;
	if (vr->i >= vr->len)
		return bad(p,
			   "unexpected end of input while parsing %s version "
			   "number",
			   part_names[part]);
	if (!is_digit(vr->s[vr->i]))
		return bad(p,
			   "unexpected character '%c' while parsing %s "
			   "version number",
			   vr->s[vr->i], part_names[part]);
	while (vr->i < vr->len && is_digit(vr->s[vr->i])) {
		if (*val < UINT32_MAX)
			*val = *val * 10 + (uint64_t)(vr->s[vr->i] - '0');
		vr->i++;
	}
	if (vr->i - start > 1 && vr->s[start] == '0')
		return bad(p, "invalid leading zero in %s version number",
			   part_names[part]);
	return 0;
}

static bool ident_char(char c)
{
	return is_lower(c) || is_upper(c) || is_digit(c) || c == '-';
}

static int ver_idents(np *p, ver *vr, const char *what, bool numeric_check)
{
	for (;;) {
		size_t start = vr->i;
		bool all_digits = true;

		while (vr->i < vr->len && ident_char(vr->s[vr->i])) {
			if (!is_digit(vr->s[vr->i]))
				all_digits = false;
			vr->i++;
		}
		if (vr->i == start)
			return bad(p, "empty identifier segment in %s", what);
		if (numeric_check && all_digits && vr->i - start > 1 &&
		    vr->s[start] == '0')
			return bad(p, "invalid leading zero in %s", what);
		if (vr->i < vr->len && vr->s[vr->i] == '.') {
			vr->i++;
			continue;
		}
		return 0;
	}
}

/*
 * A version: full semver, or (🔗) a canonversion N | 0.N | 0.0.N.
 * *canon is set when the version is a canonversion.
 */
static int version(np *p, const char *s, size_t len, bool *canon)
{
	ver vr = {s, len, 0};
	uint64_t nums[3];
	int parts;

	*canon = false;
	if (len == 0)
		return bad(p, "empty string, expected a semver version");
	for (parts = 0; parts < 3; parts++) {
		if (ver_num(p, &vr, parts, &nums[parts]))
			return -1;
		if (parts == 2)
			break;
		if (vr.i == vr.len) {
			/* canonversions stop early */
			if ((parts == 0 && nums[0] > 0) ||
			    (parts == 1 && nums[0] == 0 && nums[1] > 0)) {
				*canon = true;
				return 0;
			}
			return bad(p,
				   "unexpected end of input while parsing %s "
				   "version number",
				   part_names[parts + 1]);
		}
		if (vr.s[vr.i] != '.')
			return bad(p,
				   "unexpected character '%c' after %s "
				   "version number",
				   vr.s[vr.i], part_names[parts]);
		vr.i++;
	}
	if (vr.i == vr.len) {
		*canon = nums[0] == 0 && nums[1] == 0;
		return 0;
	}
	if (vr.s[vr.i] == '-') {
		vr.i++;
		if (ver_idents(p, &vr, "pre-release identifier", true))
			return -1;
	}
	if (vr.i < vr.len && vr.s[vr.i] == '+') {
		vr.i++;
		if (ver_idents(p, &vr, "build metadata", false))
			return -1;
	}
	if (vr.i < vr.len)
		return bad(p,
			   "unexpected character '%c' after patch version "
			   "number",
			   vr.s[vr.i]);
	return 0;
}

/* ---- names --------------------------------------------------------------- */

static int parse_interface(np *p, cm_name *n)
{
	const char *s = n->str.ptr, *e = s + n->str.len, *c, *q;
	bool canon;

	c = memchr(s, ':', n->str.len);
	if (kebab(p, s, (size_t)(c - s), NULL))
		return -1;
	if (!is_lower_kebab(s, (size_t)(c - s)))
		return bad(p, "`%.*s` is not lowercase in namespace",
			   (int)(c - s), s);
	if (piece(p, s, (size_t)(c - s), &n->ns))
		return -1;
	s = c + 1;
	for (q = s; q < e && *q != '/' && *q != ':' && *q != '@'; q++)
		;
	if (kebab(p, s, (size_t)(q - s), NULL))
		return -1;
	if (!is_lower_kebab(s, (size_t)(q - s)))
		return bad(p, "`%.*s` is not lowercase in package name",
			   (int)(q - s), s);
	if (piece(p, s, (size_t)(q - s), &n->pkg))
		return -1;
	if (q == e || *q != '/')
		return bad(p, "expected `/` after package name");
	s = q + 1;
	for (q = s; q < e && *q != '/' && *q != '@'; q++)
		;
	if (kebab(p, s, (size_t)(q - s), &n->iface))
		return -1;
	if (q < e && *q == '@') {
		const char *vs = q + 1;

		if (version(p, vs, (size_t)(e - vs), &canon))
			return -1;
		if (piece(p, vs, (size_t)(e - vs), &n->version))
			return -1;
		return 0;
	}
	if (q < e)
		return bad(p, "trailing characters found: `%.*s`",
			   (int)(e - q > 100 ? 100 : e - q), q);
	return 0;
}

static int split_dot(np *p, cm_name *n, const char *s, const char *e)
{
	const char *dot = memchr(s, '.', (size_t)(e - s));

	if (dot == NULL)
		return bad(p, "failed to find `.` character");
	if (kebab(p, s, (size_t)(dot - s), &n->resource))
		return -1;
	return kebab(p, dot + 1, (size_t)(e - dot - 1), &n->func);
}

static bool eat(const char **s, const char *e, const char *lit)
{
	size_t l = strlen(lit);

	if ((size_t)(e - *s) < l || memcmp(*s, lit, l) != 0)
		return false;
	*s += l;
	return true;
}

static int parse_into(np *p, cm_name *n)
{
	const char *s = n->str.ptr, *e = s + n->str.len;

	if (eat(&s, e, "[constructor]")) {
		n->kind = CM_NAME_CONSTRUCTOR;
		if (kebab(p, s, (size_t)(e - s), &n->resource))
			return -1;
		n->func = n->resource;
		return 0;
	}
	if (eat(&s, e, "[method]")) {
		n->kind = CM_NAME_METHOD;
		return split_dot(p, n, s, e);
	}
	if (eat(&s, e, "[static]")) {
		n->kind = CM_NAME_STATIC;
		return split_dot(p, n, s, e);
	}
	if (memchr(s, ':', (size_t)(e - s)) != NULL) {
		n->kind = CM_NAME_INTERFACE;
		return parse_interface(p, n);
	}
	n->kind = CM_NAME_LABEL;
	if (kebab(p, s, (size_t)(e - s), NULL))
		return -1;
	n->func = n->str;
	return 0;
}

int cm_name_parse(vstate *v, cm_name *n, size_t offset)
{
	np p = {v, n, offset, "extern name"};

	return parse_into(&p, n);
}

int cm_name_check_attributes(vstate *v, const cm_name *n, cm_sort sort,
			     size_t offset)
{
	if (n->has_implements) {
		cm_name impl;
		np p = {v, &impl, offset, "name"};

		if (sort != CM_SORT_INSTANCE)
			return cm_fail(v, offset,
				       "only instances can have an "
				       "`implements`");
		if (n->kind != CM_NAME_LABEL)
			return cm_fail(v, offset,
				       "name `%s` is not valid with "
				       "`implements`",
				       n->str.ptr);
		memset(&impl, 0, sizeof impl);
		impl.str = n->implements;
		if (parse_into(&p, &impl)) {
			cm_context(v, "`implements` value");
			return -1;
		}
		if (impl.kind != CM_NAME_INTERFACE)
			return cm_fail(v, offset,
				       "`implements` value `%s` must be an "
				       "interface name",
				       impl.str.ptr);
	}
	if (n->has_version_suffix) {
		np p = {v, n, offset, "extern name"};
		bool canon = false;
		char buf[256];

		if (n->kind != CM_NAME_INTERFACE || n->version.len == 0)
			return cm_fail(v, offset,
				       "`versionsuffix` requires a versioned "
				       "interface name");
		if (version(&p, n->version.ptr, n->version.len, &canon))
			return -1;
		if (!canon)
			return cm_fail(v, offset,
				       "`versionsuffix` requires a canonical "
				       "version");
		snprintf(buf, sizeof buf, "%s%s", n->version.ptr,
			 n->version_suffix.ptr);
		if (version(&p, buf, strlen(buf), &canon))
			return -1;
	}
	return 0;
}

int cm_lower(vstate *v, cm_str in, cm_str *out)
{
	char *s;

	if (cm_arena_str(v->a, in.ptr, in.len, out))
		return cm_oom(v);
	s = (char *)out->ptr;
	for (uint32_t i = 0; i < in.len; i++)
		if (is_upper(s[i]))
			s[i] = (char)(s[i] - 'A' + 'a');
	return 0;
}

/* Strong uniqueness compares the post-`.` label of [method]/[static]
 * names, so `[method]a.a` clashes with `a` while `[constructor]a` and
 * `[method]a.b` do not. */
int cm_name_canonical(vstate *v, const cm_name *n, cm_str *out)
{
	size_t keep = n->version.len;

	switch (n->kind) {
	case CM_NAME_METHOD:
	case CM_NAME_STATIC:
		return cm_lower(v, n->func, out);
	case CM_NAME_INTERFACE:
		/* acronyms are lowercased in labels; a version is no label
		 * (semver's pre-release identifiers are case-sensitive), so
		 * `@1.0.0-RC` and `@1.0.0-rc` are two names, as wasmparser
		 * has them (docs/validation.md) */
		if (keep == 0 || keep > n->str.len ||
		    memcmp(n->str.ptr + n->str.len - keep, n->version.ptr,
			   keep) != 0)
			return cm_lower(v, n->str, out);
		if (cm_lower(v, n->str, out))
			return -1;
		memcpy((char *)out->ptr + n->str.len - keep, n->version.ptr,
		       keep);
		return 0;
	default:
		return cm_lower(v, n->str, out);
	}
}
