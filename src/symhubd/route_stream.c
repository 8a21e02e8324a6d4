/*
 * route_stream: JSON answers written as libmicrohttpd sends them, a piece
 * at a time, for the routes whose answer grows with the request
 * (/symbolize, /symbolicate/v5).  Built whole, a 212 KB Tecken request
 * once made a 1 GB answer in memory; streamed, an answer costs the
 * writer's buffer (a step's worth) and its cache of escaped strings
 * (symjson.h), however long it is.  --symbolize-max-answer bounds the
 * bytes themselves: refused with 413 before any work where the request
 * tells the size, cut where it did not.
 */
#include <errno.h>
#include <stdlib.h>

#include "log.h"
#include "route.h"
#include "symjson.h"

struct jstream {
	struct symjson		*j;
	route_stream_step_fn	 step;
	void			(*free_ctx)(void *);
	void			*ctx;
	int			 done;
	uint64_t		 sent, max;
	uint64_t		*bytes;		/* the request's, for the log
						 * (read only while it lives) */
	char			 what[160];	/* for the log */
};

static ssize_t
stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct jstream	*s = cls;
	size_t		 n;

	(void)pos;
	while (symjson_pending(s->j) < max && !s->done)
		if (s->step(s->ctx, s->j, &s->done) != 0)
			return MHD_CONTENT_READER_END_WITH_ERROR;
	if (symjson_pending(s->j) == 0)
		return MHD_CONTENT_READER_END_OF_STREAM;
	n = symjson_drain(s->j, buf, max);
	*s->bytes += n;
	if (s->max > 0 && (s->sent += n) > s->max) {
		/* The client sees a cut answer (no last chunk), never a
		 * whole one that is wrong. */
		log_warnx("%s: answer cut at %llu bytes (--symbolize-max-answer)",
		    s->what, (unsigned long long)s->max);
		return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	return (ssize_t)n;
}

static void
stream_free(void *cls)
{
	struct jstream *s = cls;

	/* The writer first: it knows the strings of the GSYMs that ctx
	 * holds by their address. */
	symjson_free(s->j);
	s->free_ctx(s->ctx);
	free(s);
}

enum MHD_Result
route_stream(struct http *h, struct req *r, struct symjson *j,
    route_stream_step_fn step, void (*free_ctx)(void *), void *ctx,
    const char *how)
{
	struct MHD_Response	*resp;
	struct jstream		*s;

	if ((s = calloc(1, sizeof(*s))) == NULL) {
		symjson_free(j);
		free_ctx(ctx);
		return MHD_NO;
	}
	s->j = j;
	s->step = step;
	s->free_ctx = free_ctx;
	s->ctx = ctx;
	s->max = h->cfg->symbolize_answer_max;
	s->bytes = &r->bytes;
	snprintf(s->what, sizeof(s->what), "%s %.150s", r->method, r->url);
	if ((resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN,
	    128 * 1024, stream_read, s, stream_free)) == NULL) {
		stream_free(s);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
	    "application/json");
	return reply_response(r, REPLY_OK, resp, 0, how);
}

int
route_answer_fits(const struct http *h, uint64_t least)
{
	return h->cfg->symbolize_answer_max == 0 ||
	    least <= h->cfg->symbolize_answer_max;
}
