/*
 * route_metadata: GET /metadata?key=KEY&value=VALUE (meta.h).  The query
 * runs on a meta worker while the connection is suspended.
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "route.h"

/* Runs on a meta worker; MHD calls the handler again (DISPATCH). */
static void
answered(void *ctx, int rc, char *json, size_t len)
{
	struct req *r = ctx;

	r->meta.rc = rc;
	r->meta.json = json;
	r->meta.len = len;
	r->meta.done = 1;
	route_resume(r);
}

static int
start_query(struct http *h, struct req *r, void *arg)
{
	return meta_query(h->meta, arg, answered, r);
}

static enum MHD_Result
answer(struct req *r)
{
	struct MHD_Response	*resp;
	size_t			 len = r->meta.len;

	switch (r->meta.rc) {
	case 0:
		break;
	case -ECANCELED:	/* shutting down: ask again */
		return reply_transient(r);
	default:
		return reply_text(r, REPLY_INTERNAL, "out of memory",
		    "metadata");
	}
	resp = reply_buffer(r->meta.json, len, "application/json");
	r->meta.json = NULL;	/* the response's now */
	return reply_response(r, REPLY_OK, resp, len, "metadata");
}

enum MHD_Result
route_metadata(struct http *h, struct req *r)
{
	struct meta_query	 q;
	const char		*why = NULL;
	char			 peer[NI_MAXHOST];
	int			 rc;

	if (r->meta.done)
		return answer(r);
	memset(&q, 0, sizeof(q));
	if (webapi_metadata(MHD_lookup_connection_value(r->conn,
	    MHD_GET_ARGUMENT_KIND, "key"), MHD_lookup_connection_value(r->conn,
	    MHD_GET_ARGUMENT_KIND, "value"), &q.q, &why) < 0)
		return reply_text(r, REPLY_UNAVAILABLE, why, "metadata");
	/* Past the hop limit, or come round the federation back here: this
	 * hub's own entries only, at once. */
	q.ask_upstreams = route_federation(h, r, &q.fed, peer, sizeof(peer));
	if ((rc = route_wait(h, r, PHASE_METADATA, start_query, &q)) < 0) {
		if (rc == -EBUSY)
			return reply_text(r, REPLY_BUSY, "too many /metadata "
			    "queries at once; try again", "busy");
		if (rc == -ECANCELED)
			return reply_transient(r);
		return reply_text(r, REPLY_INTERNAL, "out of memory",
		    "metadata");
	}
	return MHD_YES;
}
