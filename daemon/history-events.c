/*
 * history-events.c - the event kinds the daemon records, each described
 * once in kinds[] (its name, its payload's members, what it means to
 * the commit policy), and the hooks of history-hooks.h over them: a
 * hook names its kind's row and hands its arguments to record(), the
 * one way an event joins the batch the loop fills (store/history.h:
 * history_add_fields()), with the accounting the commit policy needs
 * (calls opened and closed, replies waiting: history-commit.c).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - the batch being filled: events of one loop turn, a payload over
 *    HISTORY_PAYLOAD_MAX (8 MiB) refused, and a batch refuses events
 *    past HISTORY_BATCH_BYTES_MAX (64 MiB) of payload (store/history.h);
 *    guest output arrives as lines of at most HISTORY_LINE_MAX.
 *  - dump, dump_value: one event's JSON text in h->text (reused), as
 *    long as the value the caller built; a host call's value past
 *    HISTORY_VALUE_MAX is replaced by its bounded form (about 25 KiB at
 *    most), so hostcall.* events always fit HISTORY_PAYLOAD_MAX.  The
 *    other kinds are bounded where they are built: call values by
 *    invocation.c (history_form), guest lines by HISTORY_LINE_MAX,
 *    store.* reasons and call.* messages by fixed buffers
 *    (CM_ERROR_MSG_MAX, service.h's 256-byte reason), daemon.* by the
 *    operator's hostel.conf (CONFIG_FILE_MAX).
 *  The bounds themselves are listed in docs/limits.md ("daemon calls
 *  and history").
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "daemon/conn.h"
#include "daemon/daemon.h"
#include "daemon/history-internal.h"
#include "store/guest-output.h"

static struct daemon_history *hist_of(void *ctx)
{
	struct daemon *d = ctx;

	return d->history && d->history->hist ? d->history : NULL;
}

/*
 * v's compact JSON text in h->text (valid until the next call); NULL for
 * no value, or on failure with *rc set.
 */
static const char *dump(struct daemon_history *h, json_t *v, int *rc)
{
	if (!v)
		return NULL;
	json_text_reset(&h->text);
	*rc = json_text_put(&h->text, v);
	return *rc ? NULL : h->text.buf;
}

/*
 * A host call's value (its arguments, its result) as the history records
 * it: v's text, or, when that is longer than HISTORY_VALUE_MAX, its
 * bounded form (history_value_bounded), in *owned (the caller frees it).
 * So no value a guest's host call carries, whatever its size, makes the
 * history refuse the event: the rest of a hostcall.* payload (a number,
 * an import name of at most 256 bytes, a message of at most
 * CM_ERROR_MSG_MAX) fits in the 64 KiB HISTORY_VALUE_MAX leaves.  NULL
 * for no value, or on failure with *rc set.
 */
static const char *dump_value(struct daemon_history *h, json_t *v, char **owned,
			      int *rc)
{
	const char *text = dump(h, v, rc);

	*owned = NULL;
	if (!text || h->text.len <= HISTORY_VALUE_MAX)
		return text;
	*owned = history_value_bounded(h->text.buf, h->text.len);
	if (!*owned)
		*rc = -ENOMEM;
	return *owned;
}

static int added(struct daemon_history *h, const char *kind, int rc)
{
	if (rc)
		log_warn(&h->d->log, "history: %s not recorded: %s", kind,
			 db_errmsg(h->db));
	else
		hist_schedule(h);
	return rc;
}

/* What a kind means to the commit policy (history-commit.c). */
enum {
	OPENS_CALL = 1,	 /* call.started: the batch waits for its end */
	CLOSES_CALL = 2, /* a terminal event */
	BOUNDED = 4,	 /* its value past HISTORY_VALUE_MAX goes bounded */
};

/* The rows of kinds[]; a call's five ends in enum call_outcome's order. */
enum event_id {
	EV_CALL_STARTED,
	EV_CALL_ENDED, /* + enum call_outcome */
	EV_HOSTCALL_STARTED = EV_CALL_ENDED + CALL_INTERRUPTED + 1,
	EV_HOSTCALL_SETTLED,
	EV_STORE_CREATED,
	EV_STORE_POISONED,
	EV_STORE_RECREATED,
	EV_OTHER, /* any other kind: the caller's payload as it is */
};

_Static_assert(CALL_RETURNED == 0 && CALL_INTERRUPTED == 4,
	       "enum call_outcome indexes the call.* ends of kinds[]");

/*
 * Every kind the hooks record, described once: its name, what it means
 * to the commit policy, and its payload (store/history.h: struct
 * history_fields): the key of the name a hook passes (export, import,
 * component), the key of its value (NULL: the value is the payload
 * itself), and whether it carries the host call's number.  A hook only
 * says which row and hands its arguments to record().
 */
static const struct event_kind {
	const char *kind;
	unsigned flags;
	const char *name_key, *value_key;
	bool hostcall;
} kinds[] = {
	[EV_CALL_STARTED] = {.kind = HISTORY_CALL_STARTED,
			     .flags = OPENS_CALL,
			     .name_key = "export",
			     .value_key = "arguments"},
	[EV_CALL_ENDED + CALL_RETURNED] = {.kind = HISTORY_CALL_RETURNED,
					   .flags = CLOSES_CALL},
	[EV_CALL_ENDED + CALL_TRAPPED] = {.kind = HISTORY_CALL_TRAPPED,
					  .flags = CLOSES_CALL},
	[EV_CALL_ENDED + CALL_CANCELLED] = {.kind = HISTORY_CALL_CANCELLED,
					    .flags = CLOSES_CALL},
	[EV_CALL_ENDED + CALL_FAILED] = {.kind = HISTORY_CALL_FAILED,
					 .flags = CLOSES_CALL},
	[EV_CALL_ENDED + CALL_INTERRUPTED] = {.kind = HISTORY_CALL_INTERRUPTED,
					      .flags = CLOSES_CALL},
	[EV_HOSTCALL_STARTED] = {.kind = HISTORY_HOSTCALL_STARTED,
				 .flags = BOUNDED,
				 .name_key = "import",
				 .value_key = "arguments",
				 .hostcall = true},
	[EV_HOSTCALL_SETTLED] = {.kind = HISTORY_HOSTCALL_SETTLED,
				 .flags = BOUNDED,
				 .value_key = "result",
				 .hostcall = true},
	[EV_STORE_CREATED] = {.kind = HISTORY_STORE_CREATED,
			      .name_key = "component",
			      .value_key = "detail"},
	[EV_STORE_POISONED] = {.kind = HISTORY_STORE_POISONED,
			       .name_key = "component",
			       .value_key = "detail"},
	[EV_STORE_RECREATED] = {.kind = HISTORY_STORE_RECREATED,
				.name_key = "component",
				.value_key = "detail"},
	[EV_OTHER] = {.kind = NULL}, /* the note's kind */
};

/* What a hook was told; the row of its kind picks the members. */
struct note {
	const char *service, *call;
	const char *kind; /* EV_OTHER's; else the row's */
	const char *name;
	uint64_t hostcall;
	const char *outcome, *message;
	json_t *value;
	const struct conn_cred *caller;
	history_done_fn done;
	void *arg;
};

/* The one way an event joins the batch (history = off: only `done`). */
static int record(void *ctx, enum event_id id, const struct note *n)
{
	const struct event_kind *k = &kinds[id];
	const char *kind = k->kind ? k->kind : n->kind;
	struct daemon_history *h = hist_of(ctx);
	struct history_caller who = {0};
	const char *text;
	char *owned = NULL;
	int rc = 0;

	if (!h)
		return -ESHUTDOWN;
	if (h->off)
		return hist_off_done(h, n->done, n->arg);
	text = k->flags & BOUNDED ? dump_value(h, n->value, &owned, &rc)
				  : dump(h, n->value, &rc);
	if (rc)
		return rc;
	if (n->caller && n->caller->valid)
		who = (struct history_caller){true, n->caller->pid,
					      n->caller->uid, n->caller->gid};
	rc = history_add_fields(
		h->batch, n->service, n->call, kind,
		&(struct history_fields){
			.has_hostcall = k->hostcall,
			.hostcall = n->hostcall,
			.name_key = n->name ? k->name_key : NULL,
			.name = n->name,
			.outcome = n->outcome,
			.value_key = k->value_key,
			.value_json = text,
			.message = n->message,
			.caller = &who,
		},
		n->done, n->arg);
	free(owned);
	if (rc == 0 && k->flags & OPENS_CALL)
		h->open_calls++;
	rc = added(h, kind ? kind : "(null)", rc);
	if (rc == 0 && k->flags & CLOSES_CALL)
		hist_call_closed(h);
	if (rc == 0 && n->done)
		hist_waiter_added(h);
	return rc;
}

static int hook_call_started(void *ctx, const char *service, const char *call,
			     const char *export_name, json_t *arguments,
			     const struct conn_cred *caller)
{
	return record(ctx, EV_CALL_STARTED,
		      &(struct note){.service = service,
				     .call = call,
				     .name = export_name,
				     .value = arguments,
				     .caller = caller});
}

static int hook_call_ended(void *ctx, const char *service, const char *call,
			   enum call_outcome outcome, json_t *detail,
			   history_done_fn done, void *arg)
{
	if (!hist_of(ctx))
		return -ESHUTDOWN;
	if ((unsigned)outcome > CALL_INTERRUPTED)
		return -EINVAL;
	return record(ctx, EV_CALL_ENDED + outcome,
		      &(struct note){.service = service,
				     .call = call,
				     .value = detail,
				     .done = done,
				     .arg = arg});
}

static int hook_hostcall_started(void *ctx, const char *service,
				 const char *call, uint64_t hostcall,
				 const char *import_name, json_t *arguments)
{
	return record(ctx, EV_HOSTCALL_STARTED,
		      &(struct note){.service = service,
				     .call = call,
				     .hostcall = hostcall,
				     .name = import_name,
				     .value = arguments});
}

static int hook_hostcall_settled(void *ctx, const char *service,
				 const char *call, uint64_t hostcall,
				 const char *outcome, json_t *result,
				 const char *message)
{
	return record(ctx, EV_HOSTCALL_SETTLED,
		      &(struct note){.service = service,
				     .call = call,
				     .hostcall = hostcall,
				     .outcome = outcome,
				     .value = result,
				     .message = message});
}

static int hook_store_created(void *ctx, const char *service,
			      const char *component)
{
	return record(ctx, EV_STORE_CREATED,
		      &(struct note){.service = service, .name = component});
}

static int hook_store_poisoned(void *ctx, const char *service, json_t *reason)
{
	return record(ctx, EV_STORE_POISONED,
		      &(struct note){.service = service, .value = reason});
}

static int hook_store_recreated(void *ctx, const char *service,
				const char *component)
{
	return record(ctx, EV_STORE_RECREATED,
		      &(struct note){.service = service, .name = component});
}

static int hook_guest_output(void *ctx, struct guest_output *out,
			     const char *bytes, size_t len)
{
	struct daemon_history *h = hist_of(ctx);

	if (!h)
		return -ESHUTDOWN;
	if (h->off)
		return 0;
	return added(h, "guest output",
		     guest_output_feed(out, h->batch, bytes, len));
}

static int hook_event(void *ctx, const char *service, const char *call,
		      const char *kind, json_t *payload, history_done_fn done,
		      void *arg)
{
	return record(ctx, EV_OTHER,
		      &(struct note){.service = service,
				     .call = call,
				     .kind = kind,
				     .value = payload,
				     .done = done,
				     .arg = arg});
}

static int hook_store_image(void *ctx, const char *service,
			    const char *component, uint32_t format, bool full,
			    void *data, size_t len)
{
	struct daemon_history *h = hist_of(ctx);

	if (!h || h->off) {
		free(data);
		return h ? -ENOTSUP : -ESHUTDOWN;
	}
	return history_batch_add_image(h->batch, service, component,
				       format, full, data, len);
}

void hist_hooks_init(struct daemon_history *h)
{
	h->hooks = (struct history_hooks){
		.ctx = h->d,
		.call_started = hook_call_started,
		.call_ended = hook_call_ended,
		.hostcall_started = hook_hostcall_started,
		.hostcall_settled = hook_hostcall_settled,
		.store_created = hook_store_created,
		.store_poisoned = hook_store_poisoned,
		.store_recreated = hook_store_recreated,
		.guest_output = hook_guest_output,
		.event = hook_event,
		.store_image = hook_store_image,
	};
}

const struct history_hooks *daemon_history_hooks(struct daemon *d)
{
	return d->history ? &d->history->hooks : NULL;
}

bool daemon_history_is_on(const struct daemon *d)
{
	return d->history && !d->history->off;
}

int hist_daemon_event(struct daemon_history *h, const char *kind,
		      json_t *payload)
{
	int rc;

	if (!payload)
		return -ENOMEM;
	rc = hook_event(h->d, NULL, NULL, kind, payload, NULL, NULL);
	json_decref(payload);
	return rc;
}
