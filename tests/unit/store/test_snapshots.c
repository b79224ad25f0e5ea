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
 * not written; bad arguments are -EINVAL.
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

static void on_dropped(void *arg, const char *service)
{
	size_t n = strlen(dropped);

	(void)arg;
	snprintf(dropped + n, sizeof(dropped) - n, "%s%s", n ? " " : "",
		 service);
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

Suite *make_suite(void)
{
	Suite *s = suite_create("snapshots");
	TCase *tc = tcase_create("snapshots");

	tcase_add_test(tc, test_full_replaces_and_deletes_deltas);
	tcase_add_test(tc, test_bad_arguments_and_gone_services);
	tcase_add_test(tc, test_images_ride_in_batches);
	suite_add_tcase(s, tc);
	return s;
}
