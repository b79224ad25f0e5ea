/*
 * services.c - the service subcommands of `hostel`:
 *
 *   hostel deploy FILE [--name NAME] [--fuel N] [--memory BYTES]
 *                      [--deadline MS] [--no-autostart] [--env NAME=VALUE]...
 *                      [--arg ARG]... [--dir HOST[::GUEST]]...
 *                      [--durability none|stop|commit]
 *   hostel ps [--json]
 *   hostel start|stop|rm|snapshot SERVICE
 *   hostel inspect SERVICE        (when SERVICE is not a file)
 *
 * deploy adds the component (io.hostel.Component.Add) and creates and
 * starts a service of it (io.hostel.Service.Create); NAME defaults to the
 * file's basename without ".wasm".  Exit codes: hostel(1).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - none in the daemon: this is the `hostel` client.  The command
 *    line, the files it names and standard input are the user's own
 *    (this process, not the daemon's); what the daemon sends back is
 *    read one message at a time, at most VARLINK_MESSAGE_MAX (16 MiB,
 *    ipc/client.c).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/commands.h"
#include "client/daemon-client.h"
#include "ipc/value-json.h"

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
			errno = EIO;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/* The default service name: the basename without ".wasm". */
static char *default_name(const char *path)
{
	char *copy = strdup(path), *base, *name;
	size_t n;

	if (!copy)
		return NULL;
	base = basename(copy);
	name = strdup(base);
	free(copy);
	if (name && (n = strlen(name)) > 5 && !strcmp(name + n - 5, ".wasm"))
		name[n - 5] = '\0';
	return name;
}

/*
 * A snapshot's size and age, "-" without one: "12K/3m"; with deltas
 * since (durability commit), the newest one's age and how many:
 * "12K/2s+40".
 */
static void snapshot_text(json_t *snap, char *buf, size_t len)
{
	long long bytes = (long long)json_integer_value(
		json_object_get(snap, "bytes"));
	long long deltas = (long long)json_integer_value(
		json_object_get(snap, "deltas"));
	long long created = (long long)json_integer_value(json_object_get(
		snap, deltas > 0 ? "deltaCreated" : "created"));
	long long age = (long long)time(NULL) - created / 1000;
	const char *unit = "B";
	char more[24] = "";

	if (!snap) {
		snprintf(buf, len, "-");
		return;
	}
	if (deltas > 0)
		snprintf(more, sizeof(more), "+%lld", deltas);
	if (bytes >= 10 * 1024 * 1024) {
		bytes /= 1024 * 1024;
		unit = "M";
	} else if (bytes >= 10 * 1024) {
		bytes /= 1024;
		unit = "K";
	}
	if (age < 0)
		age = 0;
	if (age < 120)
		snprintf(buf, len, "%lld%s/%llds%s", bytes, unit, age, more);
	else if (age < 7200)
		snprintf(buf, len, "%lld%s/%lldm%s", bytes, unit, age / 60,
			 more);
	else
		snprintf(buf, len, "%lld%s/%lldh%s", bytes, unit, age / 3600,
			 more);
}

static void print_service_line(json_t *s)
{
	const char *comp = json_string_value(json_object_get(s, "component"));
	const char *reason = json_string_value(json_object_get(s, "reason"));
	const char *dur = json_string_value(json_object_get(s, "durability"));
	char snap[48];

	snapshot_text(json_object_get(s, "snapshot"), snap, sizeof(snap));
	printf("%-20s %-9s %7" JSON_INTEGER_FORMAT " %-12.12s %-7s %-12s %s\n",
	       json_string_value(json_object_get(s, "name")),
	       json_string_value(json_object_get(s, "state")),
	       json_integer_value(json_object_get(s, "calls")),
	       comp ? comp : "?", dur ? dur : "none", snap,
	       reason ? reason : "");
}

int cmd_deploy(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"name", required_argument, NULL, 'n'},
		{"fuel", required_argument, NULL, 'f'},
		{"memory", required_argument, NULL, 'm'},
		{"durability", required_argument, NULL, 'u'},
		{"deadline", required_argument, NULL, 'd'},
		{"no-autostart", no_argument, NULL, 'A'},
		{"env", required_argument, NULL, 'e'},
		{"arg", required_argument, NULL, 'a'},
		{"dir", required_argument, NULL, 'D'},
		{"socket", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *socket_opt = NULL, *path;
	char *name = NULL, *b64 = NULL, *durability = NULL;
	json_t *limits = json_object(), *env = json_object(),
	       *args = json_array(), *dirs = json_array(), *config;
	struct varlink_client *client = NULL;
	struct varlink_reply reply = {0};
	bool autostart = true;
	uint8_t *bytes;
	size_t len = 0;
	char sha[80];
	int c, rc;

	if (!limits || !env || !args || !dirs) {
		fprintf(stderr, "hostel deploy: out of memory\n");
		rc = HOSTEL_EXIT_FAILURE;
		goto out;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "n:", longopts, NULL)) != -1) {
		switch (c) {
		case 'n':
			free(name);
			name = strdup(optarg);
			break;
		case 'e': {
			/* The guest's environment: K=V, repeatable. */
			const char *eq = strchr(optarg, '=');
			char *key;

			if (!eq || eq == optarg) {
				fprintf(stderr,
					"hostel deploy: --env %s: expected "
					"NAME=VALUE\n",
					optarg);
				rc = HOSTEL_EXIT_USAGE;
				goto out;
			}
			key = strndup(optarg, (size_t)(eq - optarg));
			if (!key || json_object_set_new(env, key,
							json_string(eq + 1))) {
				free(key);
				fprintf(stderr,
					"hostel deploy: --env %s: not "
					"UTF-8, or out of memory\n",
					optarg);
				rc = HOSTEL_EXIT_USAGE;
				goto out;
			}
			free(key);
			break;
		}
		case 'a':
		case 'D':
			/* The daemon checks the strings (hostel.conf(5)). */
			if (json_array_append_new(c == 'a' ? args : dirs,
						  json_string(optarg))) {
				fprintf(stderr,
					"hostel deploy: %s: not UTF-8, or out "
					"of memory\n",
					optarg);
				rc = HOSTEL_EXIT_USAGE;
				goto out;
			}
			break;
		case 'f':
		case 'm':
		case 'd': {
			char *end;
			unsigned long long v = strtoull(optarg, &end, 10);

			if (*end || end == optarg) {
				fprintf(stderr,
					"hostel deploy: not a number: %s\n",
					optarg);
				rc = HOSTEL_EXIT_USAGE;
				goto out;
			}
			json_object_set_new(limits,
					    c == 'f'   ? "fuelPerCall"
					    : c == 'm' ? "memory"
						       : "deadlineMs",
					    json_integer((json_int_t)v));
			break;
		}
		case 'u':
			/* "none", "stop" or "commit": the daemon checks it */
			free(durability);
			durability = strdup(optarg);
			break;
		case 'A':
			autostart = false;
			break;
		case 's':
			socket_opt = optarg;
			break;
		case 'h':
			printf("usage: hostel deploy FILE [--name NAME] "
			       "[--fuel N] "
			       "[--memory BYTES] [--deadline MS] "
			       "[--no-autostart] [--durability none|stop|commit]\n"
			       "                     [--env NAME=VALUE]... "
			       "[--arg ARG]... [--dir HOST[::GUEST]]...\n");
			rc = HOSTEL_EXIT_OK;
			goto out;
		default:
			rc = HOSTEL_EXIT_USAGE;
			goto out;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: hostel deploy FILE [--name NAME] "
				"[OPTIONS] (hostel deploy --help)\n");
		rc = HOSTEL_EXIT_USAGE;
		goto out;
	}
	path = argv[optind];
	bytes = read_file(path, &len);
	if (!bytes) {
		fprintf(stderr, "hostel deploy: %s: %s\n", path,
			strerror(errno));
		rc = HOSTEL_EXIT_INPUT;
		goto out;
	}
	if (len > VARLINK_MESSAGE_MAX / 4 * 3 - 1024) {
		fprintf(stderr,
			"hostel deploy: %s: %zu bytes; a component sent over "
			"the socket is limited to about 12 MiB\n",
			path, len);
		free(bytes);
		rc = HOSTEL_EXIT_INPUT;
		goto out;
	}
	if (!name)
		name = default_name(path);
	b64 = value_base64_encode(bytes, len);
	free(bytes);
	if (!name || !b64) {
		fprintf(stderr, "hostel deploy: out of memory\n");
		rc = HOSTEL_EXIT_FAILURE;
		goto out;
	}
	rc = daemon_client_open("deploy", socket_opt, DAEMON_CLIENT_TIMEOUT_MS,
				&client);
	if (rc)
		goto out;
	rc = daemon_client_call("deploy", client, "io.hostel.Component.Add",
				json_pack("{ss}", "bytes", b64), 0, &reply);
	if (rc)
		goto out;
	if (reply.error) {
		rc = daemon_client_report("deploy", &reply);
		goto out;
	}
	snprintf(
		sha, sizeof(sha), "%s",
		json_string_value(json_object_get(reply.parameters, "sha256")));
	varlink_reply_clear(&reply);
	config = json_object();
	if (json_object_size(limits))
		json_object_set(config, "limits", limits);
	if (json_object_size(env))
		json_object_set(config, "env", env);
	if (json_array_size(args))
		json_object_set(config, "args", args);
	if (json_array_size(dirs))
		json_object_set(config, "preopens", dirs);
	if (durability)
		json_object_set_new(config, "durability",
				    json_string(durability));
	rc = daemon_client_call("deploy", client, "io.hostel.Service.Create",
				json_pack("{ss,ss,so,sb}", "name", name,
					  "component", sha, "config", config,
					  "autostart", autostart),
				0, &reply);
	if (rc)
		goto out;
	if (reply.error) {
		rc = daemon_client_report("deploy", &reply);
		goto out;
	}
	printf("deployed %s (component %.12s, %s)\n", name, sha,
	       json_string_value(json_object_get(
		       json_object_get(reply.parameters, "service"), "state")));
out:
	varlink_reply_clear(&reply);
	varlink_client_free(client);
	json_decref(limits);
	json_decref(env);
	json_decref(args);
	json_decref(dirs);
	free(b64);
	free(name);
	free(durability);
	return rc;
}

/* Options shared by ps/start/stop/rm: --socket, --json. */
static int simple_args(const char *prog, int argc, char **argv, int nargs,
		       const char **socket_opt, bool *json)
{
	static const struct option longopts[] = {
		{"socket", required_argument, NULL, 's'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			*socket_opt = optarg;
			break;
		case 'j':
			*json = true;
			break;
		default:
			fprintf(stderr, "usage: hostel %s%s\n", prog,
				nargs ? " SERVICE" : " [--json]");
			return c == 'h' ? -1 : HOSTEL_EXIT_USAGE;
		}
	}
	if (argc - optind != nargs) {
		fprintf(stderr, "usage: hostel %s%s\n", prog,
			nargs ? " SERVICE" : " [--json]");
		return HOSTEL_EXIT_USAGE;
	}
	return 0;
}

int cmd_ps(int argc, char **argv)
{
	struct varlink_client *client = NULL;
	struct varlink_reply reply = {0};
	const char *socket_opt = NULL;
	bool json = false;
	size_t i;
	json_t *s;
	int rc = simple_args("ps", argc, argv, 0, &socket_opt, &json);

	if (rc)
		return rc < 0 ? HOSTEL_EXIT_OK : rc;
	rc = daemon_client_open("ps", socket_opt, DAEMON_CLIENT_TIMEOUT_MS,
				&client);
	if (!rc)
		rc = daemon_client_call("ps", client, "io.hostel.Service.List",
					NULL, 0, &reply);
	if (!rc && reply.error)
		rc = daemon_client_report("ps", &reply);
	if (!rc && json) {
		char *text = json_dumps(reply.parameters, JSON_COMPACT);

		printf("%s\n", text ? text : "{}");
		free(text);
	} else if (!rc) {
		printf("%-20s %-9s %7s %-12s %-7s %-12s %s\n", "NAME", "STATE",
		       "CALLS", "COMPONENT", "DURABLE", "SNAPSHOT", "REASON");
		json_array_foreach(
			json_object_get(reply.parameters, "services"), i, s)
			print_service_line(s);
	}
	varlink_reply_clear(&reply);
	varlink_client_free(client);
	return rc;
}

static int one_service(const char *prog, const char *method, int argc,
		       char **argv)
{
	struct varlink_client *client = NULL;
	struct varlink_reply reply = {0};
	const char *socket_opt = NULL;
	bool json = false;
	int rc = simple_args(prog, argc, argv, 1, &socket_opt, &json);

	if (rc)
		return rc < 0 ? HOSTEL_EXIT_OK : rc;
	rc = daemon_client_open(prog, socket_opt, DAEMON_CLIENT_TIMEOUT_MS,
				&client);
	if (!rc)
		rc = daemon_client_call(prog, client, method,
					json_pack("{ss}", "name", argv[optind]),
					0, &reply);
	if (!rc && reply.error)
		rc = daemon_client_report(prog, &reply);
	if (!rc) {
		json_t *s = json_object_get(reply.parameters, "service");

		if (s)
			print_service_line(s);
	}
	varlink_reply_clear(&reply);
	varlink_client_free(client);
	return rc;
}

int cmd_start(int argc, char **argv)
{
	return one_service("start", "io.hostel.Service.Start", argc, argv);
}

int cmd_stop(int argc, char **argv)
{
	return one_service("stop", "io.hostel.Service.Stop", argc, argv);
}

int cmd_snapshot(int argc, char **argv)
{
	struct varlink_client *client = NULL;
	struct varlink_reply reply = {0};
	const char *socket_opt = NULL;
	bool json = false;
	int rc = simple_args("snapshot", argc, argv, 1, &socket_opt, &json);

	if (rc)
		return rc < 0 ? HOSTEL_EXIT_OK : rc;
	rc = daemon_client_open("snapshot", socket_opt,
				DAEMON_CLIENT_TIMEOUT_MS, &client);
	if (!rc)
		rc = daemon_client_call("snapshot", client,
					"io.hostel.Service.Snapshot",
					json_pack("{ss}", "name", argv[optind]),
					0, &reply);
	if (!rc && reply.error)
		rc = daemon_client_report("snapshot", &reply);
	if (!rc)
		printf("snapshot of %s: %" JSON_INTEGER_FORMAT
		       " bytes in %" JSON_INTEGER_FORMAT " ms\n",
		       argv[optind],
		       json_integer_value(
			       json_object_get(reply.parameters, "bytes")),
		       json_integer_value(
			       json_object_get(reply.parameters, "ms")));
	varlink_reply_clear(&reply);
	varlink_client_free(client);
	return rc;
}

int cmd_rm(int argc, char **argv)
{
	return one_service("rm", "io.hostel.Service.Remove", argc, argv);
}

int cmd_inspect_service(const char *name)
{
	struct varlink_client *client = NULL;
	struct varlink_reply reply = {0};
	int rc = daemon_client_open("inspect", NULL, DAEMON_CLIENT_TIMEOUT_MS,
				    &client);

	if (!rc)
		rc = daemon_client_call(
			"inspect", client, "io.hostel.Service.Inspect",
			json_pack("{ss}", "name", name), 0, &reply);
	if (!rc && reply.error)
		rc = daemon_client_report("inspect", &reply);
	if (!rc) {
		json_t *s = json_object_get(reply.parameters, "service");
		const char *reason =
			json_string_value(json_object_get(s, "reason"));

		printf("service:   %s\n",
		       json_string_value(json_object_get(s, "name")));
		printf("state:     %s\n",
		       json_string_value(json_object_get(s, "state")));
		printf("component: %s\n",
		       json_string_value(json_object_get(s, "component")));
		printf("calls:     %" JSON_INTEGER_FORMAT
		       " (store recreated %" JSON_INTEGER_FORMAT " times)\n",
		       json_integer_value(json_object_get(s, "calls")),
		       json_integer_value(json_object_get(s, "recreated")));
		if (reason)
			printf("reason:    %s\n", reason);
		printf("\n%s", json_string_value(json_object_get(
				       reply.parameters, "wit")));
	}
	varlink_reply_clear(&reply);
	varlink_client_free(client);
	return rc;
}
