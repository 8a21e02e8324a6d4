/*
 * route_batch: POST /symbolize, the addresses of many modules in one
 * request, and POST /symbolicate/v5, Mozilla's Tecken API for the same
 * (symjson.h): the modules made ready together (batch.h) within the
 * request's deadline, then the answer streamed in the request's shape
 * (symjson_write.c writes it; this file looks its addresses up).
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "log.h"
#include "route.h"
#include "symjson.h"

/* A batch request's state, kept across its suspensions. */
struct breq {
	struct symjson_batch	 in;	/* /symbolize */
	struct symjson_tecken	 tk;	/* /symbolicate/v5 */
	struct batch_module	*mods;
	size_t			 nmods;
	struct batch		*b;
};

static void
breq_free(struct breq *q)
{
	if (q == NULL)
		return;
	batch_free(q->b);
	symjson_batch_free(&q->in);
	symjson_tecken_free(&q->tk);
	free(q->mods);
	free(q);
}

void
route_batch_free(struct req *r)
{
	breq_free(r->batch);
	r->batch = NULL;
}

/* The lookups of the answer (symjson_lookup_fn); ctx is the breq. */
static int
lookup(void *ctx, size_t mod, int at, uint64_t *addr,
    struct gsym_result *res)
{
	const struct batch_module	*bm = &((struct breq *)ctx)->mods[mod];
	int				 rc;

	if (at == SYMJSON_AT_OFFSET) {
		if (bm->nloads == 0)
			return -ENOEXEC;
		if ((rc = elfinfo_load_addr(bm->loads, bm->nloads, *addr,
		    addr)) != 0)
			return rc;
	} else if (at == SYMJSON_AT_RELATIVE)
		*addr += bm->loads[0].vaddr;
	return derive_gsym_lookup(bm->gf, *addr, res);
}

/*
 * The answers are written as libmicrohttpd sends them (route_stream()):
 * 100,000 results are some 25 MB of JSON, and a Tecken answer repeats a
 * module's name in every frame.  A stream owns the request's batch (the
 * open GSYMs) until the response is freed.
 */
struct bstream {
	struct breq		*q;
	struct symjson_state	*st;	/* one a module of q */
	struct symjson_answer	*a;
};

static void
bstream_free(void *ctx)
{
	struct bstream *s = ctx;

	symjson_answer_free(s->a);
	free(s->st);
	breq_free(s->q);
	free(s);
}

static int
bstream_step(void *ctx, struct symjson *j, int *done)
{
	struct bstream *s = ctx;

	return symjson_answer_step(s->a, j, done);
}

static enum MHD_Result
answer(struct http *h, struct req *r)
{
	struct breq	*q = r->batch;
	struct bstream	*s;
	struct symjson	*j = NULL;
	size_t		 i, ready = 0;
	int		 tecken = r->w.route == WEBAPI_TECKEN;

	for (i = 0; i < q->nmods; i++)
		ready += q->mods[i].status == BATCH_READY;
	snprintf(r->how_buf, sizeof(r->how_buf), "%zu of %zu modules", ready,
	    q->nmods);
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return MHD_NO;
	if ((q->nmods > 0 && (s->st = calloc(q->nmods,
	    sizeof(*s->st))) == NULL) || symjson_open(0, tecken ||
	    q->in.demangle ? SYMJSON_DEMANGLE : 0, &j) != 0)
		goto fail;
	for (i = 0; i < q->nmods; i++) {
		const struct batch_module	*bm = &q->mods[i];
		struct symjson_state		*st = &s->st[i];

		st->status = batch_status_name(bm->status);
		st->ready = bm->status == BATCH_READY;
		st->placed = st->ready && bm->nloads > 0;
		st->how = bm->how;
		st->why = bm->why;
		st->bid = bm->bid;
		st->bidlen = bm->bidlen;
	}
	if ((tecken ? symjson_answer_tecken(j, &q->tk, s->st, lookup, q,
	    &s->a) : symjson_answer_batch(j, &q->in, s->st, lookup, q,
	    &s->a)) != 0)
		goto fail;
	s->q = q;
	r->batch = NULL;	/* the stream's now */
	return route_stream(h, r, j, bstream_step, bstream_free, s,
	    r->how_buf);
fail:
	symjson_free(j);
	bstream_free(s);
	return MHD_NO;
}

/* Start: read the body, make the batch. */
static enum MHD_Result
begin_batch(struct http *h, struct req *r)
{
	struct breq		*q;
	const char		*why = NULL;
	int64_t			 ms, most;
	size_t			 i;
	long			 n;

	if (r->too_long)
		return reply_text(r, REPLY_TOO_LARGE, "request body too "
		    "large: see --symbolize-max-addresses", "symbolize");
	if ((q = calloc(1, sizeof(*q))) == NULL)
		return MHD_NO;
	r->batch = q;
	if (r->w.route == WEBAPI_TECKEN)
		n = symjson_parse_tecken(r->body.p ? (const char *)r->body.p :
		    "", r->body.len, h->cfg->symbolize_max,
		    (size_t)h->cfg->symbolize_modules, &q->tk, &why);
	else
		n = symjson_parse_batch(r->body.p ? (const char *)r->body.p :
		    "", r->body.len, h->cfg->symbolize_max,
		    (size_t)h->cfg->symbolize_modules, &q->in, &why);
	if (n == -E2BIG) {
		char msg[128];

		int mods = strcmp(why, "too many modules") == 0 ||
		    strcmp(why, "too many jobs") == 0;

		if (mods || strcmp(why, "too many addresses") == 0)
			snprintf(msg, sizeof(msg), "%s (at most %llu)", why,
			    (unsigned long long)(mods ?
			    h->cfg->symbolize_modules : h->cfg->symbolize_max));
		else	/* twice the addresses, and the modules */
			snprintf(msg, sizeof(msg), "%s", why);
		return reply_text(r, REPLY_TOO_LARGE, msg, "symbolize");
	}
	if (n < 0)
		return reply_text(r, n == -EINVAL ? REPLY_BAD_REQUEST :
		    REPLY_INTERNAL, why, "symbolize");
	if (r->w.route == WEBAPI_TECKEN)
		metrics_symbolize(METRICS_API_TECKEN, q->tk.nframes);
	else
		metrics_symbolize(METRICS_API_BATCH, q->in.naddrs);
	if (!route_answer_fits(h, symjson_answer_least(&q->in, &q->tk)))
		return reply_text(r, REPLY_TOO_LARGE, "the answer would be "
		    "larger than --symbolize-max-answer: ask for fewer "
		    "addresses at once", "symbolize");
	if (n > 0 && (q->mods = calloc((size_t)n, sizeof(*q->mods))) == NULL)
		return MHD_NO;
	q->nmods = (size_t)n;
	for (i = 0; i < (size_t)n; i++) {
		const struct symjson_module *m = r->w.route == WEBAPI_TECKEN ?
		    &q->tk.mods[i] : &q->in.mods[i];

		memcpy(q->mods[i].id, m->id, m->idlen);
		q->mods[i].idlen = m->idlen;
		q->mods[i].by_fileid = m->by_fileid;
		/* Another tenant's private build-id is not there: by its
		 * full build-id here, nothing looked at; by a prefix or a
		 * FileID once batch.c knows the build-id (the reader). */
		q->mods[i].hidden = !m->by_fileid && r->w.route !=
		    WEBAPI_TECKEN && !route_may_read(h, r, m->id, m->idlen);
		if (r->w.route == WEBAPI_TECKEN) {
			q->mods[i].by_prefix = 1;
			q->mods[i].want_loads = BATCH_LOADS_BASE;
		} else if (m->offsets) {
			q->mods[i].want_loads = BATCH_LOADS_MAP;
		}
	}
	most = (int64_t)h->cfg->symbolize_deadline * 1000;
	ms = r->w.route == WEBAPI_TECKEN || q->in.deadline_ms < 0 ||
	    q->in.deadline_ms > most ? most : q->in.deadline_ms;
	if (route_batch_start(h, r, q->mods, (size_t)n, ms, &q->b) != 0)
		return MHD_NO;
	return MHD_YES;
}

enum MHD_Result
route_batch(struct http *h, struct req *r)
{
	enum MHD_Result ret;

	if (r->batch == NULL && ((ret = begin_batch(h, r)) != MHD_YES ||
	    r->status != 0))
		return ret;
	return route_batch_turn(h, r, r->batch->b) ? answer(h, r) : MHD_YES;
}
