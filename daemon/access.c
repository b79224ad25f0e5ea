/*
 * access.c - the access policy (see access.h): parsing the allow-* lists,
 * resolving their names once, and answering role and ownership questions
 * from memory.
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - push_uid, push_gid: one entry per name in the allow-* lists of
 *    hostel.conf (the operator's file, at most CONFIG_FILE_MAX, 64 KiB)
 *    and per group member resolved; tokens at most TOKEN_MAX bytes.
 *  Nothing here grows with a client's requests.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/access.h"
#include "daemon/conn.h"

#define TOKEN_MAX 256

const char *access_role_name(enum access_role role)
{
	switch (role) {
	case ACCESS_CONNECT:
		return "connect";
	case ACCESS_CALL:
		return "call";
	case ACCESS_DEPLOY:
		return "deploy";
	case ACCESS_ADMIN:
		return "admin";
	}
	return "?";
}

static bool is_sep(char c)
{
	return c == ' ' || c == '\t' || c == ',';
}

/* Digits only, fitting a 32-bit id (not (uid_t)-1). */
static bool parse_id(const char *s, unsigned long *out)
{
	unsigned long n = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		n = n * 10 + (unsigned long)(*s - '0');
		if (n >= 0xffffffffUL)
			return false;
	}
	*out = n;
	return true;
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' ||
	       c == '$';
}

/*
 * The next principal of *s into tok; false at the end.  -EINVAL through
 * *rc for a token that cannot be a principal.
 */
static bool next_token(const char **s, char *tok, int *rc, char *why,
		       size_t whylen)
{
	const char *p = *s, *e;
	size_t n;

	while (*p && is_sep(*p))
		p++;
	if (!*p)
		return false;
	e = p;
	while (*e && !is_sep(*e))
		e++;
	n = (size_t)(e - p);
	*s = e;
	if (n >= TOKEN_MAX) {
		snprintf(why, whylen, "principal '%.40s...' is too long", p);
		*rc = -EINVAL;
		return false;
	}
	memcpy(tok, p, n);
	tok[n] = 0;
	if (!strcmp(tok, "*") || !strcmp(tok, "none"))
		return true;
	const char *c = tok[0] == '@' ? tok + 1 : tok;

	while (*c && name_char(*c))
		c++;
	if (!*c && c != tok + (tok[0] == '@'))
		return true;
	snprintf(
		why, whylen,
		"'%.64s' is not a principal (a user, a uid, @group, * or none)",
		tok);
	*rc = -EINVAL;
	return false;
}

int access_list_check(const char *text, char *why, size_t whylen)
{
	char tok[TOKEN_MAX];
	int rc = 0;

	while (next_token(&text, tok, &rc, why, whylen))
		;
	return rc;
}

static int push_uid(struct access_list *l, uid_t uid)
{
	uid_t *v;

	for (size_t i = 0; i < l->nuids; i++)
		if (l->uids[i] == uid)
			return 0;
	v = realloc(l->uids, (l->nuids + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	v[l->nuids++] = uid;
	l->uids = v;
	return 0;
}

static int push_gid(struct access_list *l, gid_t gid)
{
	gid_t *v = realloc(l->gids, (l->ngids + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	v[l->ngids++] = gid;
	l->gids = v;
	return 0;
}

static int add_group(struct access_list *l, const char *name, char *why,
		     size_t whylen)
{
	unsigned long id;
	struct group *gr;
	int rc;

	errno = 0;
	gr = parse_id(name, &id) ? getgrgid((gid_t)id) : getgrnam(name);
	if (!gr && !parse_id(name, &id)) {
		snprintf(why, whylen, "unknown group '%.64s'", name);
		return -EINVAL;
	}
	rc = push_gid(l, gr ? gr->gr_gid : (gid_t)id);
	if (rc || !gr)
		return rc;
	/* Members by name: resolved now, so a check never calls NSS. */
	for (char **m = gr->gr_mem; m && *m; m++) {
		struct passwd *pw = getpwnam(*m);

		if (pw && (rc = push_uid(l, pw->pw_uid)))
			return rc;
	}
	return 0;
}

static int add_user(struct access_list *l, const char *name, char *why,
		    size_t whylen)
{
	unsigned long id;
	struct passwd *pw;

	if (parse_id(name, &id))
		return push_uid(l, (uid_t)id);
	pw = getpwnam(name);
	if (!pw) {
		snprintf(why, whylen, "unknown user '%.64s'", name);
		return -EINVAL;
	}
	return push_uid(l, pw->pw_uid);
}

static void list_free(struct access_list *l)
{
	free(l->uids);
	free(l->gids);
	memset(l, 0, sizeof(*l));
}

static int list_build(struct access_list *l, const char *text, const char *key,
		      char *why, size_t whylen)
{
	char tok[TOKEN_MAX], sub[200];
	int rc = 0;

	while (rc == 0 && next_token(&text, tok, &rc, sub, sizeof(sub))) {
		if (!strcmp(tok, "*"))
			l->anyone = true;
		else if (!strcmp(tok, "none"))
			continue;
		else if (tok[0] == '@')
			rc = add_group(l, tok + 1, sub, sizeof(sub));
		else
			rc = add_user(l, tok, sub, sizeof(sub));
	}
	if (rc == -EINVAL)
		snprintf(why, whylen, "%s: %s", key, sub);
	return rc;
}

void access_policy_free(struct access_policy *p)
{
	list_free(&p->call);
	list_free(&p->deploy);
	list_free(&p->admin);
}

int access_policy_build(struct access_policy *p, const char *call,
			const char *deploy, const char *admin, char *why,
			size_t whylen)
{
	int rc;

	memset(p, 0, sizeof(*p));
	p->self = geteuid();
	rc = list_build(&p->call, call ? call : "*", "allow-call", why, whylen);
	if (!rc)
		rc = list_build(&p->deploy, deploy ? deploy : "*",
				"allow-deploy", why, whylen);
	if (!rc)
		rc = list_build(&p->admin, admin ? admin : "none",
				"allow-admin", why, whylen);
	if (rc) {
		access_policy_free(p);
		p->self = geteuid();
	}
	return rc;
}

static bool list_has(const struct access_list *l, const struct conn_cred *c)
{
	if (l->anyone)
		return true;
	for (size_t i = 0; i < l->nuids; i++)
		if (l->uids[i] == c->uid)
			return true;
	for (size_t i = 0; i < l->ngids; i++)
		if (l->gids[i] == c->gid)
			return true;
	return false;
}

enum access_role access_role_of(const struct access_policy *p,
				const struct conn_cred *cred)
{
	if (!cred->valid)
		return ACCESS_CONNECT;
	if (cred->uid == 0 || cred->uid == p->self || list_has(&p->admin, cred))
		return ACCESS_ADMIN;
	if (list_has(&p->deploy, cred))
		return ACCESS_DEPLOY;
	if (list_has(&p->call, cred))
		return ACCESS_CALL;
	return ACCESS_CONNECT;
}

bool access_may_see(enum access_role role, const struct conn_cred *cred,
		    int64_t owner)
{
	if (role == ACCESS_ADMIN)
		return true;
	if (role < ACCESS_CALL)
		return false;
	return owner < 0 || (cred->valid && (int64_t)cred->uid == owner);
}

bool access_may_manage(enum access_role role, const struct conn_cred *cred,
		       int64_t owner)
{
	if (role == ACCESS_ADMIN)
		return true;
	if (role < ACCESS_DEPLOY)
		return false;
	return owner >= 0 && cred->valid && (int64_t)cred->uid == owner;
}
