/*
 * route_batch: POST /symbolize, the addresses of many modules in one
 * request, and POST /symbolicate/v5, Mozilla's Tecken API for the same
 * (symjson.h): the modules made ready together (batch.h) within the
 * request's deadline, then the answer written in the request's shape.
 */
#include <sys/types.h>

#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/hex.h"
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

/* Runs on a fetch, derive or timer thread; MHD calls the handler again. */
static void
woken(void *ctx)
{
	route_resume(ctx);
}

/* A module's part of the answer up to its results. */
static int
module_head(struct symjson *j, const struct symjson_module *m,
    const struct batch_module *bm)
{
	char	 hex[2 * CACHE_ID_MAX + 1];
	int	 rc = 0;

	rc |= symjson_text(j, m->by_fileid ? "{\"fileid\":" : "{\"buildid\":");
	rc |= symjson_string(j, m->idhex);
	if (m->by_fileid && bm->bidlen > 0) {
		hex_encode(bm->bid, bm->bidlen, hex);
		rc |= symjson_text(j, ",\"buildid\":");
		rc |= symjson_string(j, hex);
	}
	rc |= symjson_text(j, ",\"status\":");
	rc |= symjson_string(j, batch_status_name(bm->status));
	if (bm->status == BATCH_READY) {
		rc |= symjson_text(j, ",\"how\":");
		rc |= symjson_string(j, bm->how);
	} else {
		rc |= symjson_text(j, ",\"error\":");
		rc |= symjson_string(j, bm->why ? bm->why : "unknown");
	}
	rc |= symjson_text(j, ",\"results\":[");
	symjson_list(j);
	return rc == 0 ? 0 : -ENOMEM;
}

/* Bytes written per step at most (and one result more): a result of 128
 * inlined frames with long names can be large. */
#define STREAM_BYTES	(64 * 1024)

/* The results of a module's addresses *k to end, or until STREAM_BYTES
 * are pending; *k moves past those written. */
static int
module_results(struct symjson *j, const struct symjson_module *m,
    const struct batch_module *bm, size_t *kp, size_t end,
    struct gsym_result *res)
{
	size_t	k = *kp;
	int	rc = 0;

	for (; bm->status == BATCH_READY && k < end && rc == 0 &&
	    (k == *kp || symjson_pending(j) < STREAM_BYTES); k++) {
		uint64_t	addr = m->addrs[k];
		int		lrc;

		if (!m->offsets)
			lrc = derive_gsym_lookup(bm->gf, addr, res);
		else if (bm->nloads == 0)
			lrc = -ENOEXEC;
		else if ((lrc = elfinfo_load_addr(bm->loads, bm->nloads,
		    m->addrs[k], &addr)) == 0)
			lrc = derive_gsym_lookup(bm->gf, addr, res);
		rc |= symjson_result(j, addr, m->offsets ? &m->addrs[k] :
		    NULL, lrc, res);
	}
	*kp = k;
	return rc == 0 ? 0 : -ENOMEM;
}

/*
 * The answers are written as libmicrohttpd sends them (route_stream()):
 * 100,000 results are some 25 MB of JSON, and a Tecken answer repeats a
 * module's name in every frame.  A stream owns the request's batch (the
 * open GSYMs) until the response is freed.
 */
struct bstream {
	struct breq		*q;
	size_t			 mod;		/* next module, or job */
	size_t			 addr;		/* its next address; SIZE_MAX:
						 * its head is not written */
	/* Tecken: the job's next stack, and frame in it. */
	size_t			 stack, frame;
	int			 in_stack;	/* its "[" written */
	unsigned char		*used;		/* the job's libs that its
						 * frames use; NULL: the job's
						 * head is not written */
	struct gsym_result	 res;
};

/* Results written per step: enough to fill a send buffer or two. */
#define STREAM_STEP	256

static void
bstream_free(void *ctx)
{
	struct bstream *s = ctx;

	free(s->used);
	breq_free(s->q);
	free(s);
}

/* Write the next piece of a /symbolize answer. */
static int
batch_step_answer(void *ctx, struct symjson *j, int *done)
{
	struct bstream		*s = ctx;
	const struct breq	*q = s->q;
	const struct symjson_module *m;
	const struct batch_module *bm;
	size_t			 end;

	if (s->mod == q->in.nmods) {
		*done = 1;
		return symjson_text(j, "]}");
	}
	m = &q->in.mods[s->mod];
	bm = &q->mods[s->mod];
	if (s->addr == SIZE_MAX) {
		s->addr = 0;
		return symjson_text(j, s->mod > 0 ? "," : "") |
		    module_head(j, m, bm) ? -ENOMEM : 0;
	}
	end = bm->status != BATCH_READY ? s->addr :
	    m->naddrs - s->addr > STREAM_STEP ? s->addr + STREAM_STEP :
	    m->naddrs;
	if (end > s->addr)
		return module_results(j, m, bm, &s->addr, end, &s->res);
	s->mod++;
	s->addr = SIZE_MAX;
	return symjson_text(j, "]}");
}

/* "DEBUGNAME/BREAKPADID", a key of found_modules and module_errors. */
static int
tecken_key(struct symjson *j, const struct symjson_tlib *lib, int first)
{
	char	*k;
	int	 rc;

	if (asprintf(&k, "%s/%s", lib->name, lib->key) < 0)
		return -ENOMEM;
	rc = symjson_text(j, first ? "" : ",");
	rc |= symjson_string(j, k);
	free(k);
	return rc == 0 ? 0 : -ENOMEM;
}

/* Is lib l of job named like an earlier one that its frames use?  Its
 * key is written once. */
static int
dup_lib(const struct symjson_tjob *job, const unsigned char *used, size_t l)
{
	size_t	k;

	for (k = 0; k < l; k++)
		if (used[k] && strcmp(job->libs[k].name, job->libs[l].name) == 0 &&
		    strcmp(job->libs[k].key, job->libs[l].key) == 0)
			return 1;
	return 0;
}

/* The end of a Tecken job: which of the modules its frames use were
 * found, and why the others were not. */
static int
tecken_modules(struct symjson *j, const struct breq *q,
    const struct symjson_tjob *job, const unsigned char *used)
{
	size_t	l;
	int	first, errs = 0, rc = 0;

	rc |= symjson_text(j, "],\"found_modules\":{");
	for (l = 0, first = 1; l < job->nlibs && rc == 0; l++) {
		const struct batch_module *bm = &q->mods[job->libs[l].mod];

		if (!used[l] || dup_lib(job, used, l))
			continue;
		rc |= tecken_key(j, &job->libs[l], first);
		first = 0;
		rc |= symjson_text(j, bm->status == BATCH_READY &&
		    bm->nloads > 0 ? ":true" : ":false");
		errs |= !(bm->status == BATCH_READY && bm->nloads > 0);
	}
	rc |= symjson_text(j, "}");
	if (errs) {
		rc |= symjson_text(j, ",\"module_errors\":{");
		for (l = 0, first = 1; l < job->nlibs && rc == 0; l++) {
			const struct batch_module *bm =
			    &q->mods[job->libs[l].mod];
			int ready = bm->status == BATCH_READY;

			if (!used[l] || (ready && bm->nloads > 0) ||
			    dup_lib(job, used, l))
				continue;
			rc |= tecken_key(j, &job->libs[l], first);
			first = 0;
			rc |= symjson_text(j, ":[{\"name\":");
			rc |= symjson_string(j, ready ? "no_program_headers" :
			    batch_status_name(bm->status));
			rc |= symjson_text(j, ",\"message\":");
			rc |= symjson_string(j, ready ? "no file of the module "
			    "here has program headers to place its relative "
			    "addresses" : bm->why ? bm->why : "unknown");
			rc |= symjson_text(j, "}]");
		}
		rc |= symjson_text(j, "}");
	}
	rc |= symjson_text(j, "}");
	return rc == 0 ? 0 : -ENOMEM;
}

/* Write the next piece of a Tecken answer: per job, its stacks frame by
 * frame, then which modules were found. */
static int
tecken_step(void *ctx, struct symjson *j, int *done)
{
	struct bstream			*s = ctx;
	const struct breq		*q = s->q;
	const struct symjson_tjob	*job;
	size_t				 end, first;
	int				 rc = 0;

	if (s->mod == q->tk.njobs) {
		*done = 1;
		return symjson_text(j, "]}");
	}
	job = &q->tk.jobs[s->mod];
	if (s->used == NULL) {
		if ((s->used = calloc(job->nlibs + 1, 1)) == NULL)
			return -ENOMEM;
		s->stack = 0;
		s->in_stack = 0;
		return symjson_text(j, s->mod == 0 ? "{\"results\":[" "{\"stacks\":[" :
		    ",{\"stacks\":[");
	}
	if (s->stack == job->nstacks) {
		rc = tecken_modules(j, q, job, s->used);
		free(s->used);
		s->used = NULL;
		s->mod++;
		return rc;
	}
	if (!s->in_stack) {
		s->in_stack = 1;
		s->frame = job->stacks[s->stack];
		symjson_list(j);
		return symjson_text(j, s->stack > 0 ? ",[" : "[");
	}
	end = job->stacks[s->stack + 1];
	if (end - s->frame > STREAM_STEP)
		end = s->frame + STREAM_STEP;
	for (first = s->frame; s->frame < end && rc == 0 &&
	    (s->frame == first || symjson_pending(j) < STREAM_BYTES);
	    s->frame++) {
		const struct symjson_tframe *fr = &job->frames[s->frame];
		const struct batch_module *bm =
		    &q->mods[job->libs[fr->lib].mod];
		int lrc = -ENOENT;

		s->used[fr->lib] = 1;
		if (bm->status == BATCH_READY && bm->nloads > 0)
			lrc = derive_gsym_lookup(bm->gf,
			    bm->loads[0].vaddr + fr->addr, &s->res);
		rc |= symjson_tecken_frame(j, s->frame - job->stacks[s->stack],
		    fr->addr, job->libs[fr->lib].name, lrc, &s->res);
	}
	if (s->frame == job->stacks[s->stack + 1]) {
		rc |= symjson_text(j, "]");
		s->in_stack = 0;
		s->stack++;
	}
	return rc == 0 ? 0 : -ENOMEM;
}

static enum MHD_Result
answer(struct http *h, struct req *r)
{
	struct breq	*q = r->batch;
	struct bstream	*s;
	struct symjson	*j;
	size_t		 i, ready = 0;
	int		 tecken = r->w.route == WEBAPI_TECKEN;

	for (i = 0; i < q->nmods; i++)
		ready += q->mods[i].status == BATCH_READY;
	snprintf(r->how_buf, sizeof(r->how_buf), "%zu of %zu modules", ready,
	    q->nmods);
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return MHD_NO;
	if (symjson_open(0, tecken || q->in.demangle ? SYMJSON_DEMANGLE : 0,
	    &j) != 0 || (!tecken && symjson_text(j, "{\"modules\":[") != 0)) {
		symjson_free(j);
		free(s);
		return MHD_NO;
	}
	s->addr = SIZE_MAX;
	s->q = q;
	r->batch = NULL;	/* the stream's now */
	/* A Tecken request with no job still answers {"results":[]}. */
	if (tecken && q->tk.njobs == 0 && symjson_text(j, "{\"results\":[") != 0) {
		symjson_free(j);
		bstream_free(s);
		return MHD_NO;
	}
	return route_stream(h, r, j, tecken ? tecken_step : batch_step_answer,
	    bstream_free, s, r->how_buf);
}

/*
 * The least an answer takes, known from the request: a Tecken frame,
 * {"frame":0,"module_offset":"0x0","module":"NAME"}; a /symbolize
 * module, its head.
 */
static uint64_t
least_answer(const struct breq *q)
{
	uint64_t	n = 0;
	size_t		i, f;

	/* A module not ready writes no results: its head only. */
	n += 64 * q->in.nmods;
	for (i = 0; i < q->tk.njobs; i++) {
		const struct symjson_tjob *job = &q->tk.jobs[i];

		for (f = 0; f < job->stacks[job->nstacks]; f++)
			n += 45 + strlen(job->libs[job->frames[f].lib].name);
	}
	return n;
}

/* Start: read the body, make the batch. */
static enum MHD_Result
begin_batch(struct http *h, struct req *r)
{
	struct breq		*q;
	struct fetch_req	 fr;
	const char		*why = NULL;
	char			 peer[NI_MAXHOST];
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
	if (!route_answer_fits(h, least_answer(q)))
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
	if (batch_create(h->batches, q->mods, (size_t)n, r->t0 + ms * 1000,
	    route_federation(h, r, &fr, peer, sizeof(peer)) ? &fr : NULL,
	    woken, r, &q->b) != 0)
		return MHD_NO;
	return MHD_YES;
}

/* Wait for the batch's next step; none to wait for: the next call takes
 * it at once. */
static int
start_step(struct http *h, struct req *r, void *arg)
{
	(void)h;
	(void)arg;
	return batch_wait(r->batch->b) ? 0 : -EAGAIN;
}

enum MHD_Result
route_batch(struct http *h, struct req *r)
{
	enum MHD_Result ret;

	if (r->batch == NULL && ((ret = begin_batch(h, r)) != MHD_YES ||
	    r->status != 0))
		return ret;
	if (!batch_step(r->batch->b))
		return answer(h, r);
	(void)route_wait(h, r, PHASE_BATCH, start_step, NULL);
	return MHD_YES;
}
