/*
 * route_gsym: GET .../gsym and POST .../symbolize.  A fresh stored GSYM,
 * else one converted now (derive.h) from the debuginfo, or executable,
 * that the store has or an upstream gives.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "log.h"
#include "records.h"
#include "route.h"
#include "symjson.h"

/* Runs on a derive worker; MHD calls the handler again (DISPATCH). */
static void
converted(void *ctx, int rc)
{
	struct req *r = ctx;

	r->gsym.converted = 1;
	r->gsym.rc = rc;
	route_resume(r);
}

static int
start_convert(struct http *h, struct req *r, void *arg)
{
	(void)arg;
	return derive_gsym_convert(h->dv, r->w.id, r->w.idlen, converted, r);
}

/* ?demangle=1 (or true): function names as a person reads them. */
static int
want_demangled(const struct req *r)
{
	const char *v = MHD_lookup_connection_value(r->conn,
	    MHD_GET_ARGUMENT_KIND, "demangle");

	return v != NULL && (strcmp(v, "1") == 0 || strcmp(v, "true") == 0);
}

/* A /symbolize answer being streamed (route_stream()). */
struct sstream {
	struct derive_gsym	*gf;
	uint64_t		*addrs;
	size_t			 n, next;
	struct gsym_result	 res;
};

static void
sstream_free(void *ctx)
{
	struct sstream *s = ctx;

	derive_gsym_release(s->gf);
	free(s->addrs);
	free(s);
}

/* Results written per step: enough to fill a send buffer or two. */
#define STREAM_STEP	256

static int
sstream_step(void *ctx, struct symjson *j, int *done)
{
	struct sstream	*s = ctx;
	size_t		 end = s->n - s->next > STREAM_STEP ?
			    s->next + STREAM_STEP : s->n, first;
	int		 rc = 0;

	/* At most some 64 KiB a step (and one result more): a result of
	 * 128 inlined frames with long names can be large. */
	for (first = s->next; s->next < end && rc == 0 &&
	    (s->next == first || symjson_pending(j) < 64 * 1024); s->next++)
		rc = symjson_add(j, s->addrs[s->next],
		    derive_gsym_lookup(s->gf, s->addrs[s->next], &s->res),
		    &s->res);
	if (rc == 0 && s->next == s->n) {
		*done = 1;
		rc = symjson_text(j, "]}");
	}
	return rc;
}

/* Answer a /symbolize request from gf, which is consumed. */
static enum MHD_Result
symbolize(struct http *h, struct req *r, struct derive_gsym *gf)
{
	struct sstream	*s;
	struct symjson	*j = NULL;
	const char	*why = NULL;
	uint64_t	*addrs = NULL;
	long		 n;

	if (r->too_long) {
		derive_gsym_release(gf);
		return reply_text(r, REPLY_TOO_LARGE, "too many addresses",
		    "symbolize");
	}
	n = symjson_parse(r->body.p ? (const char *)r->body.p : "",
	    r->body.len, h->cfg->symbolize_max, &addrs, &why);
	if (n < 0) {
		derive_gsym_release(gf);
		return reply_text(r, n == -E2BIG ? REPLY_TOO_LARGE :
		    n == -EINVAL ? REPLY_BAD_REQUEST : REPLY_INTERNAL, why,
		    "symbolize");
	}
	metrics_symbolize(METRICS_API_BUILDID, (uint64_t)n);
	/* The least a result takes: {"address":"0x0","frames":[]...}. */
	if (!route_answer_fits(h, 64 + (uint64_t)n * 32)) {
		free(addrs);
		derive_gsym_release(gf);
		return reply_text(r, REPLY_TOO_LARGE, "the answer would be "
		    "larger than --symbolize-max-answer: ask for fewer "
		    "addresses at once", "symbolize");
	}
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    symjson_create(r->w.idhex, 0, want_demangled(r) ?
	    SYMJSON_DEMANGLE : 0, &j) != 0) {
		free(s);
		free(addrs);
		derive_gsym_release(gf);
		return MHD_NO;
	}
	s->gf = gf;
	s->addrs = addrs;
	s->n = (size_t)n;
	/* gf is freed after the writer: it knows gf's strings by their
	 * address. */
	return route_stream(h, r, j, sstream_step, sstream_free, s,
	    r->gsym.converted ? "converted" : "symbolized");
}

/* A conversion ran for this request and stored nothing usable. */
static enum MHD_Result
conversion_failed(struct req *r)
{
	switch (r->gsym.rc) {
	case 0:		/* stored, then evicted or changed again */
	case -ENOENT:	/* the parent went away meanwhile */
		return reply_text(r, REPLY_NOT_FOUND,
		    "no debuginfo for this build-id", "gsym");
	case -ENODATA:
		return reply_text(r, REPLY_NOT_FOUND, "its debuginfo has no "
		    "DWARF or symbol table to convert", "gsym");
	case -ENOEXEC:	/* definite for this build-id (logged) */
		return reply_text(r, REPLY_UNPROCESSABLE, "its debuginfo is "
		    "not ELF, or its DWARF is corrupt", "gsym");
	case -ECANCELED:	/* shutting down: ask again */
		return reply_transient(r);
	default:
		log_limited("gsym: conversion failed", NULL, "gsym %s: %s",
		    r->w.idhex, strerror(-r->gsym.rc));
		return reply_text(r, REPLY_INTERNAL,
		    "conversion to GSYM failed", "gsym");
	}
}

enum MHD_Result
route_gsym(struct http *h, struct req *r)
{
	struct cache_record	 rec;
	struct cache_key	 k, *key = &k, dk;
	struct derive_gsym	*gf = NULL, *ugf = NULL;
	enum MHD_Result		 ret;
	int			 fd, rc, have_dbg;

	if (route_key(h, r, key, &ret))
		return ret;
	if (h->dv == NULL)
		return reply_text(r, REPLY_NOT_FOUND, "GSYM is disabled", "-");
	dk = *key;
	dk.kind = CACHE_DEBUGINFO;
	dk.extra = NULL;
	rc = derive_open(h->dv, key, &rec, r->w.symbolize ? NULL : &fd,
	    r->w.symbolize ? &gf : NULL);
	if (rc == 0) {
		ret = r->w.symbolize ? symbolize(h, r, gf) :
		    reply_fd(h, r, key, &rec, fd);
		if (!r->w.symbolize && r->gsym.converted)
			r->how = "converted";
		cache_record_release(&rec);
		return ret;
	}
	/* Gone (dropped) or stale (its parent changed): convert again. */
	if (rc != -ESTALE && rc != -ENOENT && rc != -ENODATA) {
		/* derive_gsym_open() said why, once. */
		if (!r->w.symbolize)
			log_limited("gsym: cannot read", NULL, "gsym %s: %s",
			    r->w.idhex, strerror(-rc));
		return reply_text(r, REPLY_INTERNAL, "cannot read the GSYM",
		    "gsym");
	}
	/* Converted while the store could not take it (read-only, full). */
	if (derive_gsym_unstored(h->dv, r->w.id, r->w.idlen, &rec, &fd,
	    r->w.symbolize ? &ugf : NULL) == 0)
		return r->w.symbolize ? symbolize(h, r, ugf) :
		    reply_fd(h, r, key, &rec, fd);
	if (r->gsym.converted && r->gsym.rc == -ENODATA &&
	    r->ask.fetches == 0 && !records_have(h->c, CACHE_DEBUGINFO,
	    r->w.id, r->w.idlen)) {
		/* Only a stripped executable here: the debuginfo may be
		 * upstream. */
		r->gsym.converted = 0;
		if (route_ask_upstream(h, r, &dk, NULL, 0, 0))
			return MHD_YES;
		r->gsym.converted = 1;
	}
	if (r->gsym.converted)
		return conversion_failed(r);
	have_dbg = records_have(h->c, CACHE_DEBUGINFO, r->w.id, r->w.idlen);
	/* Only an executable with nothing to convert, and the upstreams said
	 * nothing definite about the debuginfo: ask again later. */
	if (r->ask.fetches > 0 && r->ask.result == FETCH_TRANSIENT && !have_dbg)
		return reply_transient(r);
	if (have_dbg || records_have(h->c, CACHE_EXECUTABLE, r->w.id,
	    r->w.idlen)) {
		if ((rc = route_wait(h, r, PHASE_CONVERT, start_convert,
		    NULL)) < 0) {
			log_limited("gsym: cannot convert", NULL, "gsym %s: %s",
			    r->w.idhex, strerror(-rc));
			return reply_text(r, REPLY_INTERNAL, "cannot convert",
			    "gsym");
		}
		return MHD_YES;
	}
	if (r->ask.fetches == 0 && route_ask_upstream(h, r, &dk, NULL, 0, 0))
		return MHD_YES;
	if (r->ask.fetches > 0 && r->ask.result == FETCH_TRANSIENT)
		return reply_transient(r);
	return reply_text(r, REPLY_NOT_FOUND, "no debuginfo for this build-id",
	    r->ask.fetches ? "upstream 404" : "miss");
}
