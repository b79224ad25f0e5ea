/*
 * idl.c - lookup of the embedded interface descriptions and a checker
 * for varlink IDL (https://varlink.org/Interface-Definition).
 *
 * The checker is a recursive-descent parser over the text; it keeps no
 * tree, only the spans of member names (for duplicates and for resolving
 * type references at the end) and of the fields of the structs being
 * parsed (for duplicate fields).  Recursion is bounded by IDL_DEPTH_MAX.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - span_push: spans of an interface description: the ones built in
 *    (the .varlink files of ipc/, embedded at build time) in the daemon; in the
 *    client, one the daemon sent (a message, VARLINK_MESSAGE_MAX).
 *    Nesting is bounded by IDL_DEPTH_MAX (32).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipc/idl.h"

#define IDL_DEPTH_MAX 32

const struct idl_interface *idl_find(const char *name)
{
	for (const struct idl_interface *i = idl_interfaces; i->name; i++)
		if (!strcmp(i->name, name))
			return i;
	return NULL;
}

const struct idl_interface *idl_find_for_member(const char *qualified)
{
	const char *dot = strrchr(qualified, '.');

	if (!dot)
		return NULL;
	for (const struct idl_interface *i = idl_interfaces; i->name; i++)
		if (strlen(i->name) == (size_t)(dot - qualified) &&
		    !strncmp(i->name, qualified, (size_t)(dot - qualified)))
			return i;
	return NULL;
}

static bool is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static bool is_alpha(char c)
{
	return is_upper(c) || (c >= 'a' && c <= 'z');
}

static bool is_alnum(char c)
{
	return is_alpha(c) || (c >= '0' && c <= '9');
}

bool idl_valid_interface_name(const char *s, size_t len)
{
	size_t segments = 0;
	size_t i = 0;

	if (len == 0 || len > 255 || !is_alpha(s[0]))
		return false;
	while (i < len) {
		/* segment: [A-Za-z0-9]([-]*[A-Za-z0-9])* */
		if (!is_alnum(s[i]))
			return false;
		while (i < len && s[i] != '.') {
			if (s[i] == '-') {
				while (i < len && s[i] == '-')
					i++;
				if (i == len || !is_alnum(s[i]))
					return false;
			} else if (!is_alnum(s[i])) {
				return false;
			}
			i++;
		}
		segments++;
		if (i < len && ++i == len)
			return false; /* trailing dot */
	}
	return segments >= 2;
}

bool idl_valid_member_name(const char *s, size_t len)
{
	if (len == 0 || !is_upper(s[0]))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!is_alnum(s[i]))
			return false;
	return true;
}

/* [A-Za-z](_?[A-Za-z0-9])* */
static bool valid_field_name(const char *s, size_t len)
{
	if (len == 0 || !is_alpha(s[0]) || s[len - 1] == '_')
		return false;
	for (size_t i = 1; i < len; i++) {
		if (s[i] == '_') {
			if (s[i - 1] == '_')
				return false;
		} else if (!is_alnum(s[i])) {
			return false;
		}
	}
	return true;
}

struct span {
	const char *s;
	size_t n;
	enum idl_member_kind kind; /* for members */
	const char *at;		   /* for references: where, for errors */
};

struct span_list {
	struct span *v;
	size_t n, cap;
};

struct parser {
	const char *text, *p, *end;
	struct idl_error *err;
	const struct idl_visitor *visitor;
	void *ctx;
	struct span_list members, refs, fields;
	unsigned depth;
};

static int span_push(struct span_list *l, const char *s, size_t n,
		     enum idl_member_kind kind, const char *at)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct span *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = (struct span){s, n, kind, at};
	return 0;
}

static const struct span *span_find(const struct span_list *l, size_t from,
				    const char *s, size_t n)
{
	for (size_t i = from; i < l->n; i++)
		if (l->v[i].n == n && !memcmp(l->v[i].s, s, n))
			return &l->v[i];
	return NULL;
}

static int fail_at(struct parser *ps, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_at(struct parser *ps, const char *at, const char *fmt, ...)
{
	unsigned line = 1, column = 1;
	va_list ap;

	for (const char *q = ps->text; q < at; q++) {
		if (*q == '\n') {
			line++;
			column = 1;
		} else {
			column++;
		}
	}
	ps->err->line = line;
	ps->err->column = column;
	va_start(ap, fmt);
	vsnprintf(ps->err->message, sizeof(ps->err->message), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Whitespace, line ends and '#' comments; true if anything was skipped. */
static bool skip_blank(struct parser *ps)
{
	const char *start = ps->p;

	while (ps->p < ps->end) {
		char c = *ps->p;

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			ps->p++;
		} else if (c == '#') {
			while (ps->p < ps->end && *ps->p != '\n')
				ps->p++;
		} else {
			break;
		}
	}
	return ps->p != start;
}

/* A run of name characters (letters, digits, '_', and '.' '-' if dotted). */
static size_t word(const struct parser *ps, bool dotted)
{
	const char *q = ps->p;

	while (q < ps->end && (is_alnum(*q) || *q == '_' ||
			       (dotted && (*q == '.' || *q == '-'))))
		q++;
	return (size_t)(q - ps->p);
}

static bool accept(struct parser *ps, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, lit, n))
		return false;
	ps->p += n;
	return true;
}

static bool is_word(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && !memcmp(s, lit, n);
}

static int parse_type(struct parser *ps);

/*
 * "(" ... ")": a struct (name: type, ...) or, where allowed, an enum
 * (name, ...).  The empty "()" is a struct.
 */
static int parse_paren(struct parser *ps, bool enum_ok)
{
	size_t base = ps->fields.n;
	bool is_enum = false;
	int rc = 0;

	if (!accept(ps, "("))
		return fail_at(ps, ps->p, "expected '('");
	if (++ps->depth > IDL_DEPTH_MAX)
		return fail_at(ps, ps->p, "types nested too deeply");
	skip_blank(ps);
	if (accept(ps, ")"))
		goto out;
	for (size_t i = 0;; i++) {
		const char *name = ps->p;
		size_t n = word(ps, false);

		if (!valid_field_name(name, n))
			return fail_at(ps, name, "expected a field name");
		if (span_find(&ps->fields, base, name, n))
			return fail_at(ps, name, "duplicate field '%.*s'",
				       (int)n, name);
		if ((rc = span_push(&ps->fields, name, n, IDL_TYPE, name)))
			return rc;
		ps->p += n;
		skip_blank(ps);
		if (i == 0)
			is_enum = ps->p == ps->end || *ps->p != ':';
		if (is_enum && !enum_ok)
			return fail_at(ps, ps->p,
				       "expected ':' (an enum is not "
				       "allowed here)");
		if (!is_enum) {
			if (!accept(ps, ":"))
				return fail_at(ps, ps->p, "expected ':'");
			skip_blank(ps);
			if ((rc = parse_type(ps)))
				return rc;
			skip_blank(ps);
		}
		if (accept(ps, ")"))
			break;
		if (!accept(ps, ","))
			return fail_at(ps, ps->p, "expected ',' or ')'");
		skip_blank(ps);
	}
out:
	ps->fields.n = base;
	ps->depth--;
	return 0;
}

static int parse_type(struct parser *ps)
{
	const char *at = ps->p;
	size_t n;
	int rc;

	if (ps->p == ps->end)
		return fail_at(ps, at, "expected a type");
	if (accept(ps, "?")) {
		if (ps->p < ps->end && *ps->p == '?')
			return fail_at(ps, ps->p,
				       "a type cannot be nullable twice");
		return parse_type(ps);
	}
	if (accept(ps, "[]") || accept(ps, "[string]")) {
		if (++ps->depth > IDL_DEPTH_MAX)
			return fail_at(ps, at, "types nested too deeply");
		rc = parse_type(ps);
		ps->depth--;
		return rc;
	}
	if (*ps->p == '(')
		return parse_paren(ps, true);
	n = word(ps, false);
	if (is_word(at, n, "bool") || is_word(at, n, "int") ||
	    is_word(at, n, "float") || is_word(at, n, "string") ||
	    is_word(at, n, "object")) {
		ps->p += n;
		return 0;
	}
	if (!idl_valid_member_name(at, n))
		return fail_at(ps, at, "expected a type");
	ps->p += n;
	/* Resolved once every type of the interface is known. */
	return span_push(&ps->refs, at, n, IDL_TYPE, at);
}

static int parse_member(struct parser *ps)
{
	enum idl_member_kind kind;
	const char *at = ps->p, *name;
	size_t n = word(ps, false);
	int rc;

	if (is_word(at, n, "type"))
		kind = IDL_TYPE;
	else if (is_word(at, n, "method"))
		kind = IDL_METHOD;
	else if (is_word(at, n, "error"))
		kind = IDL_ERROR;
	else
		return fail_at(ps, at, "expected 'type', 'method' or 'error'");
	ps->p += n;
	if (!skip_blank(ps))
		return fail_at(ps, ps->p, "expected a space");
	name = ps->p;
	n = word(ps, false);
	if (!idl_valid_member_name(name, n))
		return fail_at(ps, name,
			       "expected a member name (Capitalized)");
	if (span_find(&ps->members, 0, name, n))
		return fail_at(ps, name, "duplicate member '%.*s'", (int)n,
			       name);
	if ((rc = span_push(&ps->members, name, n, kind, name)))
		return rc;
	ps->p += n;
	skip_blank(ps);
	if (kind == IDL_TYPE) {
		rc = parse_paren(ps, true);
	} else {
		rc = parse_paren(ps, false);
		if (!rc && kind == IDL_METHOD) {
			skip_blank(ps);
			if (!accept(ps, "->"))
				return fail_at(ps, ps->p, "expected '->'");
			skip_blank(ps);
			rc = parse_paren(ps, false);
		}
	}
	if (!rc && ps->visitor && ps->visitor->member)
		rc = ps->visitor->member(ps->ctx, kind, name, n);
	return rc;
}

static int parse_interface(struct parser *ps)
{
	const char *name;
	size_t n;
	int rc;

	skip_blank(ps);
	n = word(ps, false);
	if (!is_word(ps->p, n, "interface"))
		return fail_at(ps, ps->p, "expected 'interface'");
	ps->p += n;
	if (!skip_blank(ps))
		return fail_at(ps, ps->p, "expected a space");
	name = ps->p;
	n = word(ps, true);
	if (!idl_valid_interface_name(name, n))
		return fail_at(
			ps, name,
			"expected an interface name (like org.example.Name)");
	ps->p += n;
	if (ps->visitor && ps->visitor->interface &&
	    (rc = ps->visitor->interface(ps->ctx, name, n)))
		return rc;
	if (!skip_blank(ps) && ps->p < ps->end)
		return fail_at(ps, ps->p, "expected a line end");
	if (ps->p == ps->end)
		return fail_at(ps, ps->p, "an interface needs a member");
	while (ps->p < ps->end) {
		if ((rc = parse_member(ps)))
			return rc;
		skip_blank(ps);
	}
	for (size_t i = 0; i < ps->refs.n; i++) {
		const struct span *r = &ps->refs.v[i];
		const struct span *m = span_find(&ps->members, 0, r->s, r->n);

		if (!m || m->kind != IDL_TYPE)
			return fail_at(ps, r->at, "undefined type '%.*s'",
				       (int)r->n, r->s);
	}
	return 0;
}

int idl_parse(const char *text, size_t len, const struct idl_visitor *v,
	      void *ctx, struct idl_error *err)
{
	struct parser ps = {
		.text = text,
		.p = text,
		.end = text + len,
		.err = err,
		.visitor = v,
		.ctx = ctx,
	};
	int rc;

	memset(err, 0, sizeof(*err));
	if (memchr(text, '\0', len))
		rc = fail_at(&ps, memchr(text, '\0', len),
			     "NUL byte in the description");
	else
		rc = parse_interface(&ps);
	free(ps.members.v);
	free(ps.refs.v);
	free(ps.fields.v);
	return rc;
}
