/*
 * route_pprof: POST /symbolize/pprof, a whole pprof profile symbolized
 * (pprof.h reads, fills in and writes it): its mappings' modules made
 * ready together within the request's deadline (batch.h, as POST
 * /symbolize does), then every location of a ready module filled in and
 * the profile answered gzip-compressed.  This file picks the statuses.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "log.h"
#include "pprof.h"
#include "route.h"

/* A profile request's state, kept across its suspensions. */
struct preq {
	struct pprof		*p;
	struct batch_module	*mods;	/* two a module that may be either
					 * a build-id or a FileID */
	size_t			 nmods;
	size_t			*first;	/* a pprof module's first in mods */
	struct batch		*b;
};

static void
preq_free(struct preq *q)
{
	if (q == NULL)
		return;
	batch_free(q->b);
	pprof_free(q->p);
	free(q->mods);
	free(q->first);
	free(q);
}

void
route_pprof_free(struct req *r)
{
	preq_free(r->pprof);
	r->pprof = NULL;
}

/* pprof_lookup_fn: off is a file offset of the module's executable. */
static int
lookup(void *ctx, size_t mod, uint64_t off, struct gsym_result *res)
{
	const struct preq *q = ctx;

	return route_profile_lookup(q->mods, q->first, mod, off, res);
}

/* What a profile's answer keeps until it is sent: the request's body,
 * whose compressed blocks it starts with, and its own bytes. */
struct sent {
	unsigned char	*body;
	size_t		 bodycap;
	int		 pooled;	/* arena_big_alloc()'s */
	void		*own;
};

static void
sent_free(void *cls)
{
	struct sent *s = cls;

	if (s->pooled)
		arena_big_free(s->body, s->bodycap);
	else
		free(s->body);
	free(s->own);
	free(s);
}

/*
 * The answer goes out from where its parts are, the input's compressed
 * blocks from the request's body (pprof_answer()): no buffer of the
 * answer's size, no copy.  The body is the answer's from here on (the
 * request's end no longer frees it).
 */
static enum MHD_Result
answer(struct http *h, struct req *r)
{
	struct preq		*q = r->pprof;
	struct pprof_stats	 st;
	struct pprof_answer	 a;
	struct MHD_IoVec	 iov[PPROF_PARTS];
	struct MHD_Response	*resp;
	struct sent		*s;
	unsigned		 i, n;
	int			 rc;

	if ((rc = pprof_symbolize(q->p, lookup, q, &st)) != 0)
		return reply_text(r, REPLY_INTERNAL, "out of memory",
		    "pprof");
	if ((rc = pprof_answer(q->p, h->cfg->symbolize_answer_max,
	    &a)) != 0)
		return rc == -E2BIG ? reply_text(r, REPLY_TOO_LARGE, "the "
		    "answer would be larger than --symbolize-max-answer",
		    "pprof") : reply_text(r, REPLY_INTERNAL, "out of memory",
		    "pprof");
	snprintf(r->how_buf, sizeof(r->how_buf), "%zu of %zu locations, %zu "
	    "mappings", st.locations, pprof_nlocations(q->p), st.mappings);
	route_pprof_free(r);	/* the GSYMs: the answer is made */
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		free(a.own);
		return MHD_NO;
	}
	s->own = a.own;
	s->body = r->body.p;
	s->bodycap = r->body.cap;
	s->pooled = r->body_pooled;
	memset(&r->body, 0, sizeof(r->body));
	r->body_pooled = 0;
	for (i = n = 0; i < PPROF_PARTS; i++)
		if (a.part[i].len > 0) {
			iov[n].iov_base = a.part[i].p;
			iov[n++].iov_len = a.part[i].len;
		}
	if ((resp = MHD_create_response_from_iovec(iov, n, sent_free,
	    s)) == NULL) {
		sent_free(s);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
	    "application/vnd.google.protobuf");
	return reply_response(r, REPLY_OK, resp, a.len, r->how_buf);
}

static enum MHD_Result
begin(struct http *h, struct req *r)
{
	struct preq			*q;
	const struct pprof_module	*pm;
	struct pprof_limits		 lim;
	const char			*why = NULL;
	int64_t				 ms;
	size_t				 i, n, k;
	int				 rc;

	if (r->too_long)
		return reply_text(r, REPLY_TOO_LARGE, "request body too "
		    "large: see --symbolize-max-addresses", "pprof");
	if ((ms = route_deadline_ms(h, r, &why)) < 0)
		return reply_text(r, REPLY_BAD_REQUEST, why, "pprof");
	if ((q = calloc(1, sizeof(*q))) == NULL)
		return MHD_NO;
	r->pprof = q;
	lim.max_bytes = route_body_max(h->cfg);
	lim.max_locations = (size_t)h->cfg->symbolize_max;
	lim.reuse_min = 0;
	lim.own = r->body_pooled ? r->body.cap : 0;
	if ((rc = pprof_read(r->body.p, r->body.len, &lim, &q->p,
	    &why)) != 0)
		return route_profile_refused(h, r, rc, why, "pprof");
	metrics_symbolize(METRICS_API_PPROF, pprof_nlocations(q->p));
	n = pprof_modules(q->p, &pm);
	if (n > (size_t)h->cfg->symbolize_modules)
		return reply_textf(r, REPLY_TOO_LARGE, "pprof", "too many "
		    "modules (at most %llu: --symbolize-max-modules)",
		    (unsigned long long)h->cfg->symbolize_modules);
	if ((q->mods = calloc(2 * n + 1, sizeof(*q->mods))) == NULL ||
	    (q->first = calloc(n + 1, sizeof(*q->first))) == NULL)
		return MHD_NO;
	for (i = k = 0; i < n; i++) {
		q->first[i] = k;
		memcpy(q->mods[k].id, pm[i].id, pm[i].idlen);
		q->mods[k].idlen = pm[i].idlen;
		q->mods[k++].want_loads = BATCH_LOADS_MAP;
		if (!pm[i].maybe_fileid)
			continue;
		q->mods[k] = q->mods[k - 1];
		q->mods[k++].by_fileid = 1;
	}
	q->first[n] = k;
	q->nmods = k;
	if (route_batch_start(h, r, q->mods, q->nmods, ms, &q->b) != 0)
		return MHD_NO;
	return MHD_YES;
}

enum MHD_Result
route_pprof(struct http *h, struct req *r)
{
	enum MHD_Result ret;

	if (r->pprof == NULL && ((ret = begin(h, r)) != MHD_YES ||
	    r->status != 0))
		return ret;
	return route_batch_turn(h, r, r->pprof->b) ? answer(h, r) : MHD_YES;
}
