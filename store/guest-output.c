/*
 * guest-output.c - line splitting of guest output (see guest-output.h).
 *
 * Allocations sized by a guest or a client (issue 18 audit):
 *  - guest_output_init: a copy of the service name (HISTORY_NAME_MAX).
 *  - guest_output_feed: a stream's partial line in a fixed buffer of
 *    HISTORY_LINE_MAX bytes; a longer line is recorded cut (truncated),
 *    so a guest's output never grows a buffer.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store/guest-output.h"

int guest_output_init(struct guest_output *g, const char *service, int stream)
{
	memset(g, 0, sizeof(*g) - sizeof(g->line));
	if (stream != 1 && stream != 2)
		return -EINVAL;
	g->service = strdup(service);
	if (!g->service)
		return -ENOMEM;
	g->stream = stream;
	return 0;
}

void guest_output_fini(struct guest_output *g)
{
	free(g->service);
	g->service = NULL;
	g->len = 0;
}

static int emit(struct guest_output *g, struct history_batch *b, bool truncated)
{
	int rc = history_add_guest_line(b, g->service, g->stream, g->line,
					g->len, truncated);

	g->len = 0;
	return rc;
}

int guest_output_feed(struct guest_output *g, struct history_batch *b,
		      const char *data, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(data, '\n', n);
		size_t take = nl ? (size_t)(nl - data) : n;
		int rc = 0;

		if (!g->discarding) {
			size_t room = sizeof(g->line) - g->len;
			size_t copy = take < room ? take : room;

			memcpy(g->line + g->len, data, copy);
			g->len += copy;
			if (take > copy) {
				/* Longer than a line may be: record, skip on.
				 */
				rc = emit(g, b, true);
				g->discarding = true;
			} else if (nl) {
				rc = emit(g, b, false);
			}
		}
		if (nl)
			g->discarding = false;
		if (rc)
			return rc;
		take += nl ? 1 : 0;
		data += take;
		n -= take;
	}
	return 0;
}

int guest_output_flush(struct guest_output *g, struct history_batch *b)
{
	if (g->discarding || g->len == 0) {
		g->discarding = false;
		g->len = 0;
		return 0;
	}
	return emit(g, b, false);
}
