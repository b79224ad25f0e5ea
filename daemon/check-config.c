/*
 * check-config.c - hosteld --check-config: the settings checked without
 * starting anything, as `nginx -t` or `visudo -c` do: hostel.conf (its
 * syntax and values), its access lists (a principal this machine does
 * not know is a warning: the file may be meant for another), and every
 * services.d file with its component (services-dir.h).  Prints what it
 * found; returns the exit status: 0 when nothing is wrong, 1 otherwise.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none; the
 * files are the operator's (conffile.h, services-dir.h bounds).
 */
#include "config.h"

#include <stdio.h>

#include "daemon/access.h"
#include "daemon/conffile.h"
#include "daemon/daemon.h"
#include "daemon/services-dir.h"

int daemon_check_config(const char *config_path, FILE *out)
{
	struct config file;
	struct access_policy policy;
	char err[512];
	int bad;

	config_init(&file);
	if (config_path &&
	    config_load(config_path, &file, err, sizeof(err)) < 0) {
		fprintf(out, "%s\n", err);
		return 1;
	}
	if (config_path)
		fprintf(out, "%s: ok\n", config_path);
	if (access_policy_build(&policy, file.allow_call, file.allow_deploy,
				file.allow_admin, err, sizeof(err)) < 0)
		fprintf(out, "%s: warning: %s (not on this machine)\n",
			config_path ? config_path : "access", err);
	else
		access_policy_free(&policy);
	bad = services_dir_check(&file, config_path, out);
	config_free(&file);
	fprintf(out, "%s\n", bad ? "problems found" : "configuration ok");
	return bad ? 1 : 0;
}
