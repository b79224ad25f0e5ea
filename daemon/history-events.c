/*
 * history-events.c - the event kinds the daemon records: the hooks of
 * history-hooks.h, each turning what it is told into an event of the
 * batch the loop fills (store/history.h's payload builders), with the
 * accounting the commit policy needs (calls opened and closed, replies
 * waiting: history-commit.c).
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

static int hook_call_started(void *ctx, const char *service, const char *call,
			     const char *export_name, json_t *arguments,
			     const struct conn_cred *caller)
{
	struct daemon_history *h = hist_of(ctx);
	struct history_caller who = {0};
	const char *args;
	int rc = 0;

	if (!h)
		return -ESHUTDOWN;
	if (h->off)
		return 0;
	args = dump(h, arguments, &rc);
	if (rc)
		return rc;
	if (caller && caller->valid)
		who = (struct history_caller){true, caller->pid, caller->uid,
					      caller->gid};
	rc = history_add_call_started(h->batch, service, call, export_name,
				      args, &who, NULL, NULL);
	if (rc == 0)
		h->open_calls++;
	return added(h, HISTORY_CALL_STARTED, rc);
}

static const char *const outcome_kinds[] = {
	[CALL_RETURNED] = HISTORY_CALL_RETURNED,
	[CALL_TRAPPED] = HISTORY_CALL_TRAPPED,
	[CALL_CANCELLED] = HISTORY_CALL_CANCELLED,
	[CALL_FAILED] = HISTORY_CALL_FAILED,
	[CALL_INTERRUPTED] = HISTORY_CALL_INTERRUPTED,
};

static int hook_call_ended(void *ctx, const char *service, const char *call,
			   enum call_outcome outcome, json_t *detail,
			   history_done_fn done, void *arg)
{
	struct daemon_history *h = hist_of(ctx);
	const char *text;
	int rc = 0;

	if (!h)
		return -ESHUTDOWN;
	if ((unsigned)outcome > CALL_INTERRUPTED)
		return -EINVAL;
	if (h->off)
		return hist_off_done(h, done, arg);
	text = dump(h, detail, &rc);
	if (rc)
		return rc;
	rc = history_add_call_ended(h->batch, service, call,
				    outcome_kinds[outcome], text, done, arg);
	rc = added(h, outcome_kinds[outcome], rc);
	if (rc == 0)
		hist_call_closed(h);
	if (rc == 0 && done)
		hist_waiter_added(h);
	return rc;
}

static int hook_hostcall_started(void *ctx, const char *service,
				 const char *call, uint64_t hostcall,
				 const char *import_name, json_t *arguments)
{
	struct daemon_history *h = hist_of(ctx);
	const char *args;
	char *owned;
	int rc = 0;

	if (!h)
		return -ESHUTDOWN;
	if (h->off)
		return 0;
	args = dump_value(h, arguments, &owned, &rc);
	if (rc)
		return rc;
	rc = history_add_hostcall_started(h->batch, service, call, hostcall,
					  import_name, args);
	free(owned);
	return added(h, HISTORY_HOSTCALL_STARTED, rc);
}

static int hook_hostcall_settled(void *ctx, const char *service,
				 const char *call, uint64_t hostcall,
				 const char *outcome, json_t *result,
				 const char *message)
{
	struct daemon_history *h = hist_of(ctx);
	const char *text;
	char *owned;
	int rc = 0;

	if (!h)
		return -ESHUTDOWN;
	if (h->off)
		return 0;
	text = dump_value(h, result, &owned, &rc);
	if (rc)
		return rc;
	rc = history_add_hostcall_settled(h->batch, service, call, hostcall,
					  outcome, text, message);
	free(owned);
	return added(h, HISTORY_HOSTCALL_SETTLED, rc);
}

static int store_event(void *ctx, const char *kind, const char *service,
		       const char *component, json_t *detail)
{
	struct daemon_history *h = hist_of(ctx);
	const char *text;
	int rc = 0;

	if (!h)
		return -ESHUTDOWN;
	if (h->off)
		return 0;
	text = dump(h, detail, &rc);
	if (rc)
		return rc;
	rc = history_add_store_event(h->batch, kind, service, component, text);
	return added(h, kind, rc);
}

static int hook_store_created(void *ctx, const char *service,
			      const char *component)
{
	return store_event(ctx, HISTORY_STORE_CREATED, service, component,
			   NULL);
}

static int hook_store_poisoned(void *ctx, const char *service, json_t *reason)
{
	return store_event(ctx, HISTORY_STORE_POISONED, service, NULL, reason);
}

static int hook_store_recreated(void *ctx, const char *service,
				const char *component)
{
	return store_event(ctx, HISTORY_STORE_RECREATED, service, component,
			   NULL);
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
	struct daemon_history *h = hist_of(ctx);
	const char *text;
	int rc = 0;

	if (!h)
		return -ESHUTDOWN;
	if (h->off)
		return hist_off_done(h, done, arg);
	text = dump(h, payload, &rc);
	if (rc)
		return rc;
	rc = history_batch_add(h->batch,
			       &(struct history_record){
				       .service = service,
				       .call = call,
				       .kind = kind,
				       .payload = text,
			       },
			       done, arg);
	rc = added(h, kind ? kind : "(null)", rc);
	if (rc == 0 && done)
		hist_waiter_added(h);
	return rc;
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
	};
}

const struct history_hooks *daemon_history_hooks(struct daemon *d)
{
	return d->history ? &d->history->hooks : NULL;
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
