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

	r->meta_rc = rc;
	r->meta_json = json;
	r->meta_len = len;
	r->meta_done = 1;
	MHD_resume_connection(r->conn);
}

static enum MHD_Result
answer(struct req *r)
{
	struct MHD_Response	*resp;
	size_t			 len = r->meta_len;

	switch (r->meta_rc) {
	case 0:
		break;
	case -ECANCELED:	/* shutting down: ask again */
		return reply_transient(r);
	default:
		return reply_text(r, REPLY_INTERNAL, "out of memory",
		    "metadata");
	}
	resp = reply_buffer(r->meta_json, len, "application/json");
	r->meta_json = NULL;	/* the response's now */
	return reply_response(r, REPLY_OK, resp, len, "metadata");
}

enum MHD_Result
route_metadata(struct http *h, struct req *r)
{
	struct meta_query	 q;
	const char		*why = NULL, *xff, *via, *ua;
	char			 peer[NI_MAXHOST] = "unknown";
	int			 rc;

	r->type = METRICS_T_METADATA;
	if (r->meta_done)
		return answer(r);
	memset(&q, 0, sizeof(q));
	if (webapi_metadata(MHD_lookup_connection_value(r->conn,
	    MHD_GET_ARGUMENT_KIND, "key"), MHD_lookup_connection_value(r->conn,
	    MHD_GET_ARGUMENT_KIND, "value"), &q.q, &why) < 0)
		return reply_text(r, REPLY_UNAVAILABLE, why, "metadata");
	req_peer(r, peer, sizeof(peer));
	ua = req_header(r, MHD_HTTP_HEADER_USER_AGENT);
	xff = req_header(r, "X-Forwarded-For");
	via = req_header(r, "X-Symhub-Via");
	q.fed.user_agent = ua;
	q.fed.forwarded_for = xff;
	q.fed.peer = peer;
	q.fed.via = via;
	/* Past the hop limit, or come round the federation back here: this
	 * hub's own entries only, at once. */
	q.ask_upstreams = h->f != NULL && fetch_may_ask(h->f, xff) &&
	    !fetch_loop(h->f, via, ua);
	r->phase = PHASE_METADATA;
	MHD_suspend_connection(r->conn);
	if ((rc = meta_query(h->meta, &q, answered, r)) < 0) {
		MHD_resume_connection(r->conn);
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
