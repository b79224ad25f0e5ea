/*
 * idl-check.c - messages checked against their interface description
 * (idl-check.h holds the contract).  The description is walked as text:
 * a type is parsed where it is written each time it is checked, so
 * nothing is built or allocated; a named type is found by scanning the
 * description for its `type NAME`.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none.
 * Recursion follows the nesting of the JSON checked (at most
 * VARLINK_JSON_DEPTH_MAX for a message) and of named types, bounded by
 * IDL_CHECK_DEPTH_MAX.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ipc/idl-check.h"

#define IDL_CHECK_DEPTH_MAX 64

struct cx {
	const char *text, *end;
	char *why;
	size_t whylen;
	char path[256];
	int depth;
};

/* ---- tokens -------------------------------------------------------------- */

static const char *skip(const struct cx *c, const char *p)
{
	while (p < c->end) {
		if (*p == '#') {
			while (p < c->end && *p != '\n')
				p++;
		} else if (*p == ' ' || *p == '\t' || *p == '\n' ||
			   *p == '\r') {
			p++;
		} else {
			break;
		}
	}
	return p;
}

static bool name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '_' || ch == '.';
}

/* A word at p (after blanks): its length, 0 if none. */
static size_t word(const struct cx *c, const char **p)
{
	const char *s = *p = skip(c, *p);
	size_t n = 0;

	while (s + n < c->end && name_char(s[n]))
		n++;
	return n;
}

static bool is(const char *s, size_t n, const char *w)
{
	return strlen(w) == n && memcmp(s, w, n) == 0;
}

static int fail(struct cx *c, const char *fmt, const char *a, const char *b)
{
	char msg[192];

	snprintf(msg, sizeof(msg), fmt, a, b);
	snprintf(c->why, c->whylen, "%s%s%s", c->path, c->path[0] ? ": " : "",
		 msg);
	return -EINVAL;
}

static int bad_idl(struct cx *c, const char *p)
{
	unsigned line = 1;

	for (const char *q = c->text; q < p && q < c->end; q++)
		line += *q == '\n';
	snprintf(c->why, c->whylen, "the description does not parse at line %u",
		 line);
	return -EINVAL;
}

static const char *json_kind(const json_t *j)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		return "int";
	case JSON_REAL:
		return "float";
	case JSON_TRUE:
	case JSON_FALSE:
		return "bool";
	case JSON_NULL:
		return "null";
	}
	return "?";
}

/* ---- paths --------------------------------------------------------------- */

static size_t push(struct cx *c, const char *fmt, const char *s, size_t n)
{
	size_t len = strlen(c->path);
	char part[96];

	snprintf(part, sizeof(part), fmt, (int)n, s);
	snprintf(c->path + len, sizeof(c->path) - len, "%s%s",
		 len && part[0] != '[' ? "." : "", part);
	return len;
}

static void pop(struct cx *c, size_t len)
{
	c->path[len] = '\0';
}

/* ---- types ---------------------------------------------------------------- */

/*
 * Parse the type at *p and, when j is not NULL, check j against it.
 * *p moves past the type either way.
 */
static int type(struct cx *c, const char **p, const json_t *j);

/* After `KIND NAME` (NAME the n bytes at s) in the description, or NULL:
 * where a type's definition or a member's signature starts. */
static const char *find_member(const struct cx *c, const char *kind,
			       const char *s, size_t n)
{
	const char *p = c->text;

	for (;;) {
		size_t k = word(c, &p);

		if (p >= c->end)
			return NULL;
		if (k == 0) {
			p++; /* punctuation */
			continue;
		}
		if (is(p, k, kind)) {
			const char *q = p + k;
			size_t m = word(c, &q);

			if (m == n && memcmp(q, s, n) == 0)
				return q + m;
			p = q + m;
			continue;
		}
		p += k;
	}
}

/* One field "name: type" of a struct at *p; checks obj's member. */
static int field(struct cx *c, const char **p, const json_t *obj)
{
	const char *name;
	size_t n = word(c, p), len;
	json_t *v = NULL;
	char key[96];
	int rc;

	name = *p;
	if (n == 0 || n >= sizeof(key))
		return bad_idl(c, *p);
	*p = skip(c, *p + n);
	if (*p >= c->end || **p != ':')
		return bad_idl(c, *p);
	(*p)++;
	memcpy(key, name, n);
	key[n] = '\0';
	if (obj)
		v = json_object_get(obj, key);
	if (obj && !v) {
		/* absent: only ?T may be */
		const char *q = skip(c, *p);

		if (q >= c->end || *q != '?')
			return fail(c, "missing field \"%s\"%s", key, "");
	}
	len = push(c, "%.*s", name, n);
	rc = type(c, p, v);
	pop(c, len);
	return rc;
}

/* Does the struct at p (after its '(') declare field key? */
static bool declares(struct cx *c, const char *p, const char *key)
{
	int nest = 0;
	size_t klen = strlen(key);

	for (p = skip(c, p); p < c->end; p = skip(c, p)) {
		if (*p == '(' || *p == '[') {
			nest++;
			p++;
		} else if (*p == ')' || *p == ']') {
			if (nest-- == 0)
				return false;
			p++;
		} else if (nest == 0 && name_char(*p)) {
			const char *w = p;
			size_t n = word(c, &w);
			const char *after = skip(c, w + n);

			if (after < c->end && *after == ':' && n == klen &&
			    memcmp(w, key, n) == 0)
				return true;
			p = w + n;
		} else {
			p++;
		}
	}
	return false;
}

/* A struct or enum at *p (its '('). */
static int composite(struct cx *c, const char **p, const json_t *j)
{
	const char *open = *p + 1, *q = open, *after;
	size_t n = word(c, &q);
	bool is_enum;
	int rc = 0;

	after = skip(c, q + n);
	is_enum = n > 0 && (after >= c->end || *after != ':');
	if (j && is_enum && !json_is_string(j))
		return fail(c, "expected an enum string, found %s",
			    json_kind(j), "");
	if (j && !is_enum && !json_is_object(j))
		return fail(c, "expected an object, found %s", json_kind(j),
			    "");
	if (j && !is_enum) {
		const char *key;
		json_t *v;

		json_object_foreach((json_t *)j, key, v)
		{
			(void)v;
			if (!declares(c, open, key))
				return fail(c, "unknown field \"%s\"%s", key,
					    "");
		}
	}
	*p = skip(c, open);
	if (*p < c->end && **p == ')') {
		(*p)++;
		return 0;
	}
	for (;;) {
		if (is_enum) {
			n = word(c, p);
			if (n == 0)
				return bad_idl(c, *p);
			if (j && is(*p, n, json_string_value(j)))
				j = NULL; /* matched */
			*p += n;
		} else if ((rc = field(c, p, j))) {
			return rc;
		}
		*p = skip(c, *p);
		if (*p >= c->end)
			return bad_idl(c, *p);
		if (**p == ')')
			break;
		if (**p != ',')
			return bad_idl(c, *p);
		(*p)++;
	}
	(*p)++;
	if (is_enum && j)
		return fail(c, "\"%s\" is not one of the enum's names%s",
			    json_string_value(j), "");
	return 0;
}

static int array_or_map(struct cx *c, const char **p, const json_t *j)
{
	const char *q = *p + 1;
	bool map = false;
	const char *elem;
	size_t n = word(c, &q);
	int rc = 0;

	if (n && is(q, n, "string")) {
		map = true;
		q += n;
	}
	q = skip(c, q);
	if (q >= c->end || *q != ']')
		return bad_idl(c, q);
	elem = q + 1;
	if (j && map && !json_is_object(j))
		return fail(c, "expected a map (object), found %s",
			    json_kind(j), "");
	if (j && !map && !json_is_array(j))
		return fail(c, "expected an array, found %s", json_kind(j), "");
	if (j && map) {
		const char *key;
		json_t *v;

		json_object_foreach((json_t *)j, key, v)
		{
			const char *e = elem;
			size_t len = push(c, "%.*s", key, strlen(key));

			rc = type(c, &e, v);
			pop(c, len);
			if (rc)
				return rc;
		}
	} else if (j) {
		for (size_t i = 0; i < json_array_size(j); i++) {
			const char *e = elem;
			char idx[24];
			size_t len;

			snprintf(idx, sizeof(idx), "[%zu]", i);
			len = push(c, "%.*s", idx, strlen(idx));
			rc = type(c, &e, json_array_get(j, i));
			pop(c, len);
			if (rc)
				return rc;
		}
	}
	*p = elem;
	return type(c, p, NULL);
}

static int named(struct cx *c, const char *s, size_t n, const json_t *j)
{
	const char *def;
	char name[96];
	int rc;

	if (!j)
		return 0;
	snprintf(name, sizeof(name), "%.*s", (int)n, s);
	if (is(s, n, "bool"))
		return json_is_boolean(j) ? 0
					  : fail(c, "expected bool, found %s",
						 json_kind(j), "");
	if (is(s, n, "int"))
		return json_is_integer(j) ? 0
					  : fail(c, "expected int, found %s",
						 json_kind(j), "");
	if (is(s, n, "float"))
		return json_is_number(j) ? 0
					 : fail(c, "expected float, found %s",
						json_kind(j), "");
	if (is(s, n, "string"))
		return json_is_string(j) ? 0
					 : fail(c, "expected string, found %s",
						json_kind(j), "");
	if (is(s, n, "object"))
		return json_is_object(j) ? 0
					 : fail(c, "expected object, found %s",
						json_kind(j), "");
	if (!(def = find_member(c, "type", s, n)))
		return fail(c, "type %s is not defined%s", name, "");
	def = skip(c, def);
	if (def >= c->end || *def != '(' || c->depth >= IDL_CHECK_DEPTH_MAX)
		return bad_idl(c, def);
	c->depth++;
	rc = composite(c, &def, j);
	c->depth--;
	return rc;
}

static int type(struct cx *c, const char **p, const json_t *j)
{
	size_t n;

	*p = skip(c, *p);
	if (*p >= c->end)
		return bad_idl(c, *p);
	if (**p == '?') {
		(*p)++;
		return type(c, p, j && !json_is_null(j) ? j : NULL);
	}
	if (j && json_is_null(j))
		return fail(c, "null where a value is required%s%s", "", "");
	if (**p == '[')
		return array_or_map(c, p, j);
	if (**p == '(')
		return composite(c, p, j);
	n = word(c, p);
	if (n == 0)
		return bad_idl(c, *p);
	*p += n;
	return named(c, *p - n, n, j);
}

/* ---- members ---------------------------------------------------------------- */

int idl_check(const char *text, enum idl_check_what what, const char *name,
	      const json_t *params, char *why, size_t whylen)
{
	struct cx c = {.text = text,
		       .end = text + strlen(text),
		       .why = why,
		       .whylen = whylen};
	json_t *empty = NULL;
	const char *p;
	int rc = 0;

	why[0] = '\0';
	p = find_member(&c, what == IDL_CHECK_ERROR ? "error" : "method", name,
			strlen(name));
	if (!p) {
		snprintf(why, whylen, "%s %s is not declared",
			 what == IDL_CHECK_ERROR ? "error" : "method", name);
		return -ENOENT;
	}
	p = skip(&c, p);
	if (what == IDL_CHECK_OUT) {
		/* past the input struct to "->" */
		if (p >= c.end || *p != '(')
			return bad_idl(&c, p);
		if ((rc = composite(&c, &p, NULL)))
			return rc;
		p = skip(&c, p);
		if (p + 1 >= c.end || p[0] != '-' || p[1] != '>')
			return bad_idl(&c, p);
		p = skip(&c, p + 2);
	}
	if (p >= c.end || *p != '(')
		return bad_idl(&c, p);
	if (!params)
		params = empty = json_object();
	rc = params ? composite(&c, &p, params) : -ENOMEM;
	json_decref(empty);
	return rc;
}
