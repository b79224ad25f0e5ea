/*
 * access.h - who may do what on hosteld: roles from the caller's
 * SO_PEERCRED credentials, and service ownership.
 *
 * Contract:
 *  - The socket's mode (0660) and group are the first gate: only users
 *    who can open it reach the policy at all.
 *  - Roles are ordered, each including those below it:
 *      ACCESS_CONNECT  GetInfo, GetInterfaceDescription, Daemon.Status;
 *      ACCESS_CALL     call and cancel, list and inspect services and
 *                      components, read history (of services it sees);
 *      ACCESS_DEPLOY   add/remove components, create services (owned by
 *                      the caller), start/stop/remove the services it owns;
 *      ACCESS_ADMIN    everything on every service; the whole history.
 *    root and the daemon's own uid are always admins.  A caller without
 *    credentials (they could not be read) gets ACCESS_CONNECT only.
 *  - hostel.conf sets the lists allow-call, allow-deploy and allow-admin:
 *    principals separated by blanks or commas, each a user name, a
 *    numeric uid, "@group" (a group name or number: matches the caller's
 *    primary gid, or a user the group lists as a member), "*" (anyone who
 *    can open the socket) or "none".  Defaults: allow-call = *,
 *    allow-deploy = *, allow-admin = none.  Names are resolved when the
 *    policy is built (start and SIGHUP), so checking a call never touches
 *    NSS and an unknown name is a configuration error.
 *  - Ownership: a service has an owner uid or none.  Non-admins see (list,
 *    inspect, call, cancel, read the history of) only services with no
 *    owner or owned by them, and manage (start, stop, remove) only those
 *    they own; a service a non-admin creates is owned by its creator.
 */
#ifndef HOSTEL_DAEMON_ACCESS_H
#define HOSTEL_DAEMON_ACCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct conn_cred;

enum access_role {
	ACCESS_CONNECT = 0,
	ACCESS_CALL,
	ACCESS_DEPLOY,
	ACCESS_ADMIN,
};

struct access_list {
	bool anyone;
	uid_t *uids;
	size_t nuids;
	gid_t *gids; /* callers whose primary gid is one of these */
	size_t ngids;
};

struct access_policy {
	struct access_list call, deploy, admin;
	uid_t self; /* the daemon's uid: always admin */
};

/* Lowercase name of a role ("call", ...). */
const char *access_role_name(enum access_role role);

/*
 * Check the syntax of one list (no name lookups): 0 or -EINVAL with why.
 * For the configuration parser.
 */
int access_list_check(const char *text, char *why, size_t whylen);

/*
 * Build a policy from the three lists (NULL: the default).  Names are
 * resolved now.  0, -EINVAL with why (unknown user or group, bad
 * syntax), or -ENOMEM.  On error *p is left empty (safe to free).
 */
int access_policy_build(struct access_policy *p, const char *call,
			const char *deploy, const char *admin, char *why,
			size_t whylen);
void access_policy_free(struct access_policy *p);

enum access_role access_role_of(const struct access_policy *p,
				const struct conn_cred *cred);

/* owner < 0: the service has no owner. */
bool access_may_see(enum access_role role, const struct conn_cred *cred,
		    int64_t owner);
bool access_may_manage(enum access_role role, const struct conn_cred *cred,
		       int64_t owner);

#endif
