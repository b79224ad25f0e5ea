/*
 * services-dir.h - services declared as files: services.d/NAME.conf,
 * deployed when hosteld starts and reconciled on reload (SIGHUP,
 * `systemctl reload hostel`), the way systemd treats its unit files.
 *
 * The directory is hostel.conf's services-dir, else services.d beside
 * the configuration file (/etc/hostel/services.d for
 * /etc/hostel/hostel.conf); without either there is none.  A file is
 * `key = value` lines as hostel.conf's (conffile.h: '#' comments,
 * blanks around key and value, an unknown key or a key given twice is
 * an error, the repeatable keys excepted):
 *
 *     # /etc/hostel/services.d/counter.conf
 *     component = /usr/share/hostel/counter.wasm
 *     env = GREETING=hello          (repeatable: NAME=VALUE)
 *     arg = --verbose               (repeatable, in order)
 *     preopen = /srv/data::/data    (repeatable: HOST or HOST::GUEST)
 *     owner = hostel-demo           (a user name or uid; default nobody)
 *     autostart = yes               (yes or no; default yes)
 *     durability = stop             (none, stop or commit; default hostel.conf's)
 *     memory = 64M  fuel-per-call = 1000000000  deadline = 30s
 *     max-handles  max-threads  max-pending-host-calls
 *     max-concurrent-calls  host-bytes  table-elements  max-queued-calls
 *     snapshot-interval = 30s       (durability stop: limits.snapshotIntervalMs)
 *
 * Contract:
 *  - NAME (the file name without ".conf") is the service name
 *    (store/services.h rules); other files, and names starting with
 *    '.', are ignored.  component is a path, absolute or relative to
 *    the directory; the file's limits are the Limits of
 *    hostel-protocol(7) (sizes N, NK, NM, NG; deadline a duration, or
 *    Nms), checked as a client's Create is.
 *  - A file's service records the file as its source (the services
 *    table); a client cannot remove it (io.hostel.Service.ServiceManaged)
 *    and a client's service of the same name is never taken over (the
 *    file is refused, naming it).
 *  - Reconciling: a new file creates its service (and starts it when
 *    autostart); a changed one (component bytes, settings, owner,
 *    autostart) stops its service, updates it and starts it again; a
 *    file that is gone (also while hosteld was down) stops and removes
 *    its service; an unchanged one is left alone, running calls and
 *    all.  A file with an error is logged with its path and line and
 *    skipped: its service, if any, stays as it was, and the other files
 *    go on.
 *
 * Allocations sized by a guest or a client (issue 18 audit): none of
 * a client's or a guest's: the files are the operator's.  A file is
 * read whole up to CONFIG_FILE_MAX (64 KiB), a component up to
 * COMPONENT_SIZE_MAX (256 MiB), one at a time; SERVICES_DIR_FILES_MAX
 * files are read, the rest refused with a log line.
 */
#ifndef HOSTEL_DAEMON_SERVICES_DIR_H
#define HOSTEL_DAEMON_SERVICES_DIR_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#include "store/services.h"

struct daemon;

#define SERVICES_DIR_FILES_MAX 4096

/* One parsed NAME.conf. */
struct service_file {
	char name[SERVICE_NAME_MAX + 1];
	char *component; /* its path, made absolute */
	char *config;	 /* the Config JSON text {env, args, preopens, limits} */
	bool autostart;
	int64_t owner; /* uid, -1: nobody */
};

/*
 * Parse the text of file `path` (its directory resolves a relative
 * component path).  0, -EINVAL with "PATH:LINE: problem" (or "PATH:
 * problem") in err, or -ENOMEM.  *out is cleared on error.
 */
int service_file_parse(const char *path, const char *text, size_t len,
		       struct service_file *out, char *err, size_t errlen);
void service_file_clear(struct service_file *f);

struct config;

/*
 * The directory (buf) of the settings `file` read from config_path (may
 * be NULL): 1, or 0 when there is none.
 */
int services_dir_path(const struct config *file, const char *config_path,
		      char *buf, size_t size);

/*
 * hosteld --check-config: parse every file of the directory and check
 * that its component exists and loads; each problem is printed to
 * `out` as "services.d: PATH:LINE: problem".  The number of files with
 * a problem.
 */
int services_dir_check(const struct config *file, const char *config_path,
		       FILE *out);

/*
 * Reconcile the services with the files of d's directory (see above).
 * Returns the number of files refused (each logged), or -errno when the
 * directory cannot be read (a directory that does not exist is empty:
 * its services are removed).
 */
int services_dir_reconcile(struct daemon *d);

#endif
