/*
 * test_snapshots.c - the snapshots and store_deltas tables
 * (store/snapshots.h) and store images in history batches
 * (store/history.h "Store images"): a full snapshot replaces the last
 * and deletes the deltas; deltas number from 1 in order and are read
 * back in order; the summary counts them; images ride in a batch and
 * are written in the same transaction as its events, with upto the
 * batch's last event; a full image replaces the service's images before
 * it in the batch; a failed or freed batch reports its images dropped;
 * history_batch_take moves them; an image of a service that is gone is
 * not written; bad arguments are -EINVAL; folds (store/folds.h):
 * snapshots_fold's rows and budget, and the history's fold steps, its
 * refusals and its hard bound.
 */
#include "store-testutil.h"

#include "config.h"

#include <errno.h>

#include "store/components.h"
#include "store/db.h"
#include "store/history.h"
#include "store/services.h"
#include "store/snapshots.h"
#include "testmain.h"

struct fixture {
	char *dir;
	struct db *db;
	struct history *h;
	char sha[SHA256_HEX_SIZE];
};

static void add_service(struct fixture *f, const char *name)
{
	struct service_record rec = {.name = (char *)name,
				     .keep_events = -1,
				     .keep_age = -1};

	snprintf(rec.component, sizeof(rec.component), "%s", f->sha);
	ck_assert_int_eq(services_create(f->db, &rec), 0);
}

static void setup(struct fixture *f)
{
	char err[256] = "";
	bool created;

	f->dir = tmpdir_new();
	ck_assert_msg(db_open(f->dir, &(struct db_options){0}, &f->db, err,
			      sizeof(err)) == 0,
		      "%s", err);
	ck_assert_int_eq(history_open(f->db, &f->h), 0);
	ck_assert_int_eq(components_add(f->db, "w", 1, NULL, f->sha, &created),
			 0);
	add_service(f, "svc");
	add_service(f, "other");
}

static void teardown(struct fixture *f)
{
	history_free(f->h);
	db_close(f->db);
	tmpdir_remove(f->dir);
}

/* The deltas of a service as "n:upto:first byte" words. */
struct seen {
	char text[256];
	int stop_after; /* 0: never */
	int calls;
};

static int collect(void *arg, const struct snapshot_delta *d)
{
	struct seen *s = arg;
	size_t n = strlen(s->text);

	snprintf(s->text + n, sizeof(s->text) - n, "%s%llu:%llu:%c",
		 n ? " " : "", (unsigned long long)d->n,
		 (unsigned long long)d->upto,
		 d->size ? ((const char *)d->data)[0] : '-');
	s->calls++;
	return s->stop_after && s->calls >= s->stop_after ? 7 : 0;
}

static void deltas_text(struct fixture *f, const char *svc, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	ck_assert_int_eq(snapshots_deltas(f->db, svc, collect, s), 0);
}

START_TEST(test_full_replaces_and_deletes_deltas)
{
	struct fixture f;
	struct snapshot_record rec;
	struct seen s;

	setup(&f);
	ck_assert_int_eq(snapshots_get(f.db, "svc", 0, &rec), -ENOENT);
	ck_assert_int_eq(snapshots_put(f.db, "svc", f.sha, 2, "F1", 2, 0), 0);
	ck_assert_int_eq(db_begin(f.db), 0);
	ck_assert_int_eq(snapshots_write_delta(f.db, "svc", "a", 1, 5), 0);
	ck_assert_int_eq(snapshots_write_delta(f.db, "svc", "b", 1, 9), 0);
	ck_assert_int_eq(snapshots_write_delta(f.db, "other", "x", 1, 9), 0);
	ck_assert_int_eq(db_commit(f.db), 0);
	deltas_text(&f, "svc", &s);
	ck_assert_str_eq(s.text, "1:5:a 2:9:b");
	ck_assert_int_eq(snapshots_get(f.db, "svc", 1, &rec), 0);
	ck_assert_uint_eq(rec.size, 2);
	ck_assert_uint_eq(rec.upto, 0);
	ck_assert_uint_eq(rec.ndeltas, 2);
	ck_assert_uint_eq(rec.delta_bytes, 2);
	ck_assert_uint_eq(rec.delta_upto, 9);
	ck_assert_uint_eq(rec.format, 2);
	ck_assert_int_eq(memcmp(rec.data, "F1", 2), 0);
	free(rec.data);
	/* a callback's non-zero value stops the walk and is returned */
	memset(&s, 0, sizeof(s));
	s.stop_after = 1;
	ck_assert_int_eq(snapshots_deltas(f.db, "svc", collect, &s), 7);
	ck_assert_str_eq(s.text, "1:5:a");
	/* a full one: the deltas go, the other service's stay */
	ck_assert_int_eq(snapshots_put(f.db, "svc", f.sha, 2, "F2x", 3, 12),
			 0);
	deltas_text(&f, "svc", &s);
	ck_assert_str_eq(s.text, "");
	deltas_text(&f, "other", &s);
	ck_assert_str_eq(s.text, "1:9:x");
	ck_assert_int_eq(snapshots_get(f.db, "svc", 0, &rec), 0);
	ck_assert_uint_eq(rec.size, 3);
	ck_assert_uint_eq(rec.upto, 12);
	ck_assert_uint_eq(rec.ndeltas, 0);
	ck_assert_ptr_null(rec.data);
	/* numbering goes on from 1 after a full one */
	ck_assert_int_eq(db_begin(f.db), 0);
	ck_assert_int_eq(snapshots_write_delta(f.db, "svc", "c", 1, 13), 0);
	ck_assert_int_eq(db_commit(f.db), 0);
	deltas_text(&f, "svc", &s);
	ck_assert_str_eq(s.text, "1:13:c");
	/* remove: both tables */
	ck_assert_int_eq(snapshots_remove(f.db, "svc"), 0);
	ck_assert_int_eq(snapshots_get(f.db, "svc", 0, &rec), -ENOENT);
	deltas_text(&f, "svc", &s);
	ck_assert_str_eq(s.text, "");
	teardown(&f);
}
END_TEST

START_TEST(test_bad_arguments_and_gone_services)
{
	struct fixture f;
	struct snapshot_record rec;
	struct seen s;

	setup(&f);
	ck_assert_int_eq(snapshots_put(f.db, NULL, f.sha, 2, "x", 1, 0),
			 -EINVAL);
	ck_assert_int_eq(snapshots_put(f.db, "svc", "not-a-sha", 2, "x", 1, 0),
			 -EINVAL);
	ck_assert_int_eq(snapshots_put(f.db, "svc", f.sha, 2, NULL, 1, 0),
			 -EINVAL);
	ck_assert_int_eq(db_begin(f.db), 0);
	ck_assert_int_eq(snapshots_write_delta(f.db, "svc", NULL, 1, 1),
			 -EINVAL);
	/* a service that is not there gets no rows */
	ck_assert_int_eq(snapshots_write_delta(f.db, "gone", "d", 1, 1), 0);
	ck_assert_int_eq(
		snapshots_write_full(f.db, "gone", f.sha, 2, "F", 1, 1), 0);
	ck_assert_int_eq(db_commit(f.db), 0);
	ck_assert_int_eq(snapshots_get(f.db, "gone", 0, &rec), -ENOENT);
	deltas_text(&f, "gone", &s);
	ck_assert_str_eq(s.text, "");
	teardown(&f);
}
END_TEST

static char dropped[256];

static void on_dropped(void *arg, const char *service, bool over)
{
	size_t n = strlen(dropped);

	(void)arg;
	snprintf(dropped + n, sizeof(dropped) - n, "%s%s%s", n ? " " : "",
		 service, over ? "(over)" : "");
}

static void *blob(const char *s)
{
	char *p = strdup(s);

	ck_assert_ptr_nonnull(p);
	return p;
}

static int add_event(struct history_batch *b, const char *service)
{
	struct history_record r = {.service = service, .kind = "service.tick"};

	return history_batch_add(b, &r, NULL, NULL);
}

START_TEST(test_images_ride_in_batches)
{
	struct fixture f;
	struct history_batch *b, *c;
	struct snapshot_record rec;
	struct seen s;
	uint64_t last;

	setup(&f);
	dropped[0] = '\0';
	history_set_image_hook(f.h, on_dropped, NULL);
	b = history_batch_new(f.h);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(add_event(b, "svc"), 0);
	ck_assert_int_eq(history_batch_add_image(b, "svc", f.sha, 2, true,
						 blob("F"), 1),
			 0);
	ck_assert_int_eq(history_batch_add_image(b, "svc", f.sha, 2, false,
						 blob("d1"), 2),
			 0);
	ck_assert_int_eq(add_event(b, "other"), 0);
	ck_assert_uint_eq(history_batch_images(b), 2);
	ck_assert_int_eq(history_commit(f.h, b), 0);
	last = history_last_seq(f.h);
	ck_assert_uint_eq(history_batch_images(b), 0);
	ck_assert_int_eq(snapshots_get(f.db, "svc", 0, &rec), 0);
	ck_assert_uint_eq(rec.upto, last);
	deltas_text(&f, "svc", &s);
	ck_assert_uint_eq(s.calls, 1);
	ck_assert_int_eq(strncmp(s.text, "1:", 2), 0);

	/* a full image replaces the service's earlier ones in the batch */
	ck_assert_int_eq(add_event(b, "svc"), 0);
	ck_assert_int_eq(history_batch_add_image(b, "svc", f.sha, 2, false,
						 blob("d2"), 2),
			 0);
	ck_assert_int_eq(history_batch_add_image(b, "other", f.sha, 2, true,
						 blob("O"), 1),
			 0);
	ck_assert_int_eq(history_batch_add_image(b, "svc", f.sha, 2, true,
						 blob("G"), 1),
			 0);
	ck_assert_uint_eq(history_batch_images(b), 2);
	/* take: the images move with the events */
	c = history_batch_new(f.h);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(history_batch_take(c, b), 0);
	ck_assert_uint_eq(history_batch_images(b), 0);
	ck_assert_uint_eq(history_batch_images(c), 2);
	ck_assert_int_eq(history_commit(f.h, c), 0);
	deltas_text(&f, "svc", &s);
	ck_assert_str_eq(s.text, "");
	ck_assert_int_eq(snapshots_get(f.db, "svc", 1, &rec), 0);
	ck_assert_int_eq(((char *)rec.data)[0], 'G');
	free(rec.data);
	ck_assert_int_eq(snapshots_get(f.db, "other", 0, &rec), 0);
	ck_assert_str_eq(dropped, "");

	/* a failed batch and a freed one report their images */
	ck_assert_int_eq(add_event(b, "svc"), 0);
	ck_assert_int_eq(history_batch_add_image(b, "svc", f.sha, 2, false,
						 blob("d3"), 2),
			 0);
	history_batch_fail(b, -EIO);
	ck_assert_str_eq(dropped, "svc");
	ck_assert_int_eq(history_batch_add_image(c, "other", f.sha, 2, false,
						 blob("d4"), 2),
			 0);
	history_batch_free(c);
	ck_assert_str_eq(dropped, "svc other");
	deltas_text(&f, "svc", &s);
	ck_assert_str_eq(s.text, "");
	/* bad arguments: refused, the data freed (ASan/valgrind see it) */
	ck_assert_int_eq(history_batch_add_image(b, NULL, f.sha, 2, false,
						 blob("z"), 1),
			 -EINVAL);
	ck_assert_int_eq(history_batch_add_image(b, "svc", "nope", 2, false,
						 blob("z"), 1),
			 -EINVAL);
	ck_assert_uint_eq(history_batch_images(b), 0);
	/* a batch of images only commits too */
	ck_assert_int_eq(history_batch_add_image(b, "svc", f.sha, 2, false,
						 blob("e"), 1),
			 0);
	ck_assert_int_eq(history_commit(f.h, b), 0);
	deltas_text(&f, "svc", &s);
	ck_assert_str_eq(s.text, "1:0:e");
	history_batch_free(b);
	teardown(&f);
}
END_TEST

/* A fold for tests: the snapshot's bytes, then the delta's; a delta
 * starting with 'X' does not fold. */
static int cat_fold(void *arg, const void *full, size_t flen,
		    const void *delta, size_t dlen, void **out, size_t *outlen,
		    char *why, size_t whylen)
{
	char *p;

	if (arg)
		(*(int *)arg)++;
	if (dlen && ((const char *)delta)[0] == 'X') {
		snprintf(why, whylen, "an X does not fold");
		return -1;
	}
	if (!(p = malloc(flen + dlen)))
		return -1;
	memcpy(p, full, flen);
	memcpy(p + flen, delta, dlen);
	*out = p;
	*outlen = flen + dlen;
	return 0;
}

static void put_delta(struct fixture *f, const char *svc, const char *data,
		      uint64_t upto)
{
	ck_assert_int_eq(db_begin(f->db), 0);
	ck_assert_int_eq(snapshots_write_delta(f->db, svc, data, strlen(data),
					       upto),
			 0);
	ck_assert_int_eq(db_commit(f->db), 0);
}

static void snapshot_is(struct fixture *f, const char *svc, const char *want,
			uint64_t upto)
{
	struct snapshot_record rec;

	ck_assert_int_eq(snapshots_get(f->db, svc, 1, &rec), 0);
	ck_assert_uint_eq(rec.size, strlen(want));
	ck_assert_mem_eq(rec.data, want, rec.size);
	ck_assert_uint_eq(rec.upto, upto);
	free(rec.data);
}

static int fold(struct fixture *f, const char *svc, uint64_t budget,
		struct snapshots_folded *out)
{
	char why[64] = "";
	int rc;

	ck_assert_int_eq(db_begin(f->db), 0);
	rc = snapshots_fold(f->db, svc, budget, cat_fold, NULL, out, why,
			    sizeof(why));
	if (rc == 0)
		ck_assert_int_eq(db_commit(f->db), 0);
	else
		db_rollback(f->db);
	if (rc == -EINVAL)
		ck_assert_str_eq(why, "an X does not fold");
	return rc;
}

/*
 * snapshots_fold: the oldest deltas, at least the budget's bytes of them
 * (one at least), into the row, with the last one's upto; the later ones
 * keep their numbers; a refusal changes nothing; nothing to fold is
 * -ENOENT.
 */
START_TEST(test_fold_rows)
{
	struct fixture f;
	struct snapshots_folded out;
	struct seen s;

	setup(&f);
	ck_assert_int_eq(fold(&f, "svc", 1, &out), -ENOENT);
	ck_assert_int_eq(snapshots_put(f.db, "svc", f.sha, 3, "F", 1, 2), 0);
	ck_assert_int_eq(fold(&f, "svc", 1, &out), -ENOENT);
	put_delta(&f, "svc", "a1", 5);
	put_delta(&f, "svc", "b22", 7);
	put_delta(&f, "svc", "c333", 9);
	put_delta(&f, "svc", "d4444", 11);
	/* budget 1: one delta */
	ck_assert_int_eq(fold(&f, "svc", 1, &out), 0);
	ck_assert_uint_eq(out.deltas, 1);
	ck_assert_uint_eq(out.delta_bytes, 2);
	ck_assert_uint_eq(out.size, 3);
	ck_assert_uint_eq(out.deltas_left, 3);
	ck_assert_uint_eq(out.delta_bytes_left, 12);
	snapshot_is(&f, "svc", "Fa1", 5);
	deltas_text(&f, "svc", &s);
	ck_assert_str_eq(s.text, "2:7:b 3:9:c 4:11:d");
	/* budget 4: b22 (3 bytes) is not enough, c333 ends the step */
	ck_assert_int_eq(fold(&f, "svc", 4, &out), 0);
	ck_assert_uint_eq(out.deltas, 2);
	snapshot_is(&f, "svc", "Fa1b22c333", 9);
	deltas_text(&f, "svc", &s);
	ck_assert_str_eq(s.text, "4:11:d");
	/* numbering goes on after the folded ones */
	put_delta(&f, "svc", "X", 12);
	deltas_text(&f, "svc", &s);
	ck_assert_str_eq(s.text, "4:11:d 5:12:X");
	/* a delta that does not fold: no row changes, not even d4444's */
	ck_assert_int_eq(fold(&f, "svc", 1000, &out), -EINVAL);
	snapshot_is(&f, "svc", "Fa1b22c333", 9);
	deltas_text(&f, "svc", &s);
	ck_assert_str_eq(s.text, "4:11:d 5:12:X");
	/* a full snapshot replaces the chain: nothing to fold */
	ck_assert_int_eq(snapshots_put(f.db, "svc", f.sha, 3, "G", 1, 13), 0);
	ck_assert_int_eq(fold(&f, "svc", 1, &out), -ENOENT);
	ck_assert_int_eq(fold(&f, "nobody", 1, &out), -ENOENT);
	teardown(&f);
}
END_TEST

static void *zeros(size_t n, char first)
{
	char *p = calloc(1, n);

	ck_assert_ptr_nonnull(p);
	p[0] = first;
	return p;
}

/* Commit a batch holding one event and one image of svc. */
static void commit_image(struct fixture *f, bool full, void *data, size_t n)
{
	struct history_batch *b = history_batch_new(f->h);

	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(add_event(b, "svc"), 0);
	ck_assert_int_eq(
		history_batch_add_image(b, "svc", f->sha, 3, full, data, n), 0);
	ck_assert_int_eq(history_commit(f->h, b), 0);
	history_batch_free(b);
}

/*
 * Folds in the history (store/folds.h): past max(snapshot, 1 MiB) of
 * deltas a fold is due and a step folds them; a service whose deltas do
 * not fold goes past 4 x that bound, and the image hook hears "over".
 */
START_TEST(test_folds_in_history)
{
	struct fixture f;
	struct snapshot_record rec;
	char why[64] = "";
	int calls = 0;
	size_t piece = 300u << 10; /* 300 KiB */

	setup(&f);
	dropped[0] = '\0';
	history_set_image_hook(f.h, on_dropped, NULL);
	history_set_fold(f.h, cat_fold, &calls);
	ck_assert(!history_fold_due(f.h));
	commit_image(&f, true, blob("F"), 1);
	/* 3 x 300 KiB: under 1 MiB, nothing due */
	for (int i = 0; i < 3; i++)
		commit_image(&f, false, zeros(piece, 'a'), piece);
	ck_assert(!history_fold_due(f.h));
	ck_assert_int_eq(history_fold_step(f.h, why, sizeof(why)), 0);
	ck_assert_int_eq(calls, 0);
	/* the fourth passes it */
	commit_image(&f, false, zeros(piece, 'a'), piece);
	ck_assert(history_fold_due(f.h));
	ck_assert_int_eq(history_fold_step(f.h, why, sizeof(why)), 0);
	ck_assert_int_eq(calls, 4);
	ck_assert(!history_fold_due(f.h));
	ck_assert_int_eq(snapshots_get(f.db, "svc", 0, &rec), 0);
	ck_assert_uint_eq(rec.size, 1 + 4 * piece);
	ck_assert_uint_eq(rec.ndeltas, 0);
	ck_assert_uint_eq(rec.upto, history_last_seq(f.h));
	ck_assert_str_eq(dropped, "");

	/* now the snapshot is 1.2 MiB: its own size is the bound; deltas
	 * that do not fold are refused once, then pile up to 4 x it */
	commit_image(&f, false, zeros(piece, 'X'), piece);
	for (int i = 0; i < 4; i++)
		commit_image(&f, false, zeros(piece, 'b'), piece);
	ck_assert(history_fold_due(f.h));
	ck_assert_int_eq(history_fold_step(f.h, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, "an X does not fold");
	ck_assert(!history_fold_due(f.h));
	for (int i = 0; i < 12 && !dropped[0]; i++)
		commit_image(&f, false, zeros(piece, 'b'), piece);
	ck_assert_str_eq(dropped, "svc(over)");
	ck_assert(!history_fold_due(f.h));
	ck_assert_int_eq(snapshots_get(f.db, "svc", 0, &rec), 0);
	ck_assert_uint_gt(rec.delta_bytes, 4 * rec.size);
	/* the full image the daemon then writes replaces the chain, and
	 * folds are tried again */
	commit_image(&f, true, blob("G"), 1);
	ck_assert_int_eq(snapshots_get(f.db, "svc", 0, &rec), 0);
	ck_assert_uint_eq(rec.ndeltas, 0);
	for (int i = 0; i < 4; i++)
		commit_image(&f, false, zeros(piece, 'c'), piece);
	ck_assert(history_fold_due(f.h));
	teardown(&f);
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("snapshots");
	TCase *tc = tcase_create("snapshots");

	tcase_add_test(tc, test_full_replaces_and_deletes_deltas);
	tcase_add_test(tc, test_bad_arguments_and_gone_services);
	tcase_add_test(tc, test_images_ride_in_batches);
	tcase_add_test(tc, test_fold_rows);
	tcase_add_test(tc, test_folds_in_history);
	suite_add_tcase(s, tc);
	return s;
}
