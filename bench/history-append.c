/*
 * history-append.c - event append throughput of the history with group
 * commit (store/history.h), as hosteld uses it: events join a batch, the
 * batch commits in one transaction (one fsync of the WAL with
 * synchronous=FULL), and each terminal event's `done` runs after it.
 *
 *   history-append [--seconds S] [--dir DIR] [--batches 1,10,100,...]
 *
 * For each synchronous level (full, normal) and batch size, in a fresh
 * database under DIR (default $TMPDIR), it appends call.started +
 * call.returned pairs with realistic payloads (export, arguments, caller;
 * a result) for about S seconds (default 1) and prints events/s, commits/s
 * and the mean commit latency.  The last lines give the best FULL figure
 * against the target (50,000 events/s) as a ratio.  A benchmark:
 * it asserts nothing about speed; it fails only when the store fails.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "store/db.h"
#include "store/history.h"

#define TARGET_EVENTS_PER_SEC 50000.0

struct result {
	double events_per_sec, events_per_cpu_sec, commits_per_sec, commit_ms;
	uint64_t events;
};

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

static void count_done(void *arg, int status, uint64_t seq)
{
	if (status == 0 && seq)
		++*(uint64_t *)arg;
}

/* Remove a database directory this program made, with its files. */
static void remove_db_dir(const char *dir)
{
	static const char *const files[] = {"hostel.db", "hostel.db-wal",
					    "hostel.db-shm", "hostel.lock",
					    NULL};
	char path[4200];

	for (const char *const *f = files; *f; f++) {
		if (snprintf(path, sizeof(path), "%s/%s", dir, *f) <
		    (int)sizeof(path))
			unlink(path);
	}
	rmdir(dir);
}

static int run(const char *base, enum db_sync sync, size_t batch,
	       double seconds, struct result *out)
{
	struct db_options opt = {.sync = sync, .lock_wait_ms = -1};
	struct history_caller caller = {true, 4242, 1000, 1000};
	char dir[4096], err[512], call[64];
	struct history *h = NULL;
	struct history_batch *b = NULL;
	struct db *db = NULL;
	uint64_t durable = 0, calls = 0, commits = 0;
	double t0, t, cpu0;
	int rc;

	snprintf(dir, sizeof(dir), "%s/hostel-bench-history.XXXXXX", base);
	if (!mkdtemp(dir)) {
		fprintf(stderr, "history-append: %s: %s\n", dir,
			strerror(errno));
		return -1;
	}
	rc = db_open(dir, &opt, &db, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "history-append: %s\n", err);
		remove_db_dir(dir);
		return -1;
	}
	rc = history_open(db, &h);
	if (rc == 0 && !(b = history_batch_new(h)))
		rc = -ENOMEM;
	t0 = now_s();
	cpu0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	for (t = t0; rc == 0 && (t - t0 < seconds || commits < 3);
	     t = now_s()) {
		for (size_t i = 0; rc == 0 && i < batch; i += 2) {
			snprintf(call, sizeof(call), "5eed5eed5eed5eed-%010llu",
				 (unsigned long long)++calls);
			rc = history_add_call_started(b, "bench", call, "add",
						      "[40,2]", &caller, NULL,
						      NULL);
			if (rc == 0)
				rc = history_add_call_ended(
					b, "bench", call, HISTORY_CALL_RETURNED,
					"{\"results\":42}", count_done,
					&durable);
		}
		if (rc == 0)
			rc = history_commit(h, b);
		commits++;
	}
	if (rc) {
		fprintf(stderr, "history-append: %s\n", db_errmsg(db));
	} else {
		struct history_stats st;

		history_get_stats(h, &st);
		t -= t0;
		out->events = st.events;
		out->events_per_sec = (double)st.events / t;
		/* On a loaded machine wall time says little: CPU time too
		 * (user + system, the fsyncs' waiting excluded). */
		out->events_per_cpu_sec =
			(double)st.events /
			(clock_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0);
		out->commits_per_sec = (double)st.commits / t;
		out->commit_ms = st.commits ? (double)st.commit_ns_total /
						      (double)st.commits / 1e6
					    : 0;
		if (durable != calls)
			fprintf(stderr,
				"history-append: %llu of %llu terminal "
				"events reported durable\n",
				(unsigned long long)durable,
				(unsigned long long)calls);
	}
	history_batch_free(b);
	history_free(h);
	db_close(db);
	remove_db_dir(dir);
	return rc ? -1 : 0;
}

int main(int argc, char **argv)
{
	const char *dir = getenv("TMPDIR");
	const char *batches = "1,10,100,1000,10000";
	double seconds = 1.0, best_full = 0, best_cpu = 0;
	size_t best_batch = 0;
	char *list, *tok, *save;

	if (!dir || !*dir)
		dir = "/tmp";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--batches") && i + 1 < argc)
			batches = argv[++i];
		else {
			fprintf(stderr,
				"usage: history-append [--seconds S] [--dir "
				"DIR] [--batches N,N,...]\n");
			return 2;
		}
	}
	{
		FILE *f = fopen("/proc/loadavg", "r");
		char load[64] = "?";

		if (f) {
			if (!fgets(load, sizeof(load), f))
				snprintf(load, sizeof(load), "?");
			fclose(f);
		}
		load[strcspn(load, "\n")] = 0;
		printf("# load average: %s (wall-clock figures suffer when "
		       "it exceeds the CPUs)\n",
		       load);
	}
	printf("%-8s %8s %14s %14s %12s %12s\n", "sync", "batch", "events/s",
	       "events/cpu-s", "commits/s", "commit ms");
	for (int s = 0; s < 2; s++) {
		enum db_sync sync = s == 0 ? DB_SYNC_FULL : DB_SYNC_NORMAL;

		list = strdup(batches);
		if (!list)
			return 1;
		for (tok = strtok_r(list, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			size_t batch = strtoul(tok, NULL, 10);
			struct result r;

			if (batch < 2)
				batch = 2; /* a call is two events */
			if (run(dir, sync, batch, seconds, &r)) {
				free(list);
				return 1;
			}
			printf("%-8s %8zu %14.0f %14.0f %12.1f %12.3f\n",
			       db_sync_name(sync), batch, r.events_per_sec,
			       r.events_per_cpu_sec, r.commits_per_sec,
			       r.commit_ms);
			fflush(stdout);
			if (sync == DB_SYNC_FULL &&
			    r.events_per_sec > best_full) {
				best_full = r.events_per_sec;
				best_cpu = r.events_per_cpu_sec;
				best_batch = batch;
			}
		}
		free(list);
	}
	printf("append-full-best: %.0f events/s (batch %zu; %.0f per CPU "
	       "second)\n",
	       best_full, best_batch, best_cpu);
	printf("append-full-vs-target-50000: %.2f\n",
	       best_full / TARGET_EVENTS_PER_SEC);
	return 0;
}
