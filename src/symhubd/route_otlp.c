/*
 * route_otlp: POST /symbolize/otlp, an OpenTelemetry ProfilesData (or
 * ExportProfilesServiceRequest) symbolized (otlp.h reads, fills in and
 * writes it), the way route_pprof.c does a pprof profile: the modules
 * its mappings name made ready together within the request's deadline
 * (batch.h), then every location of a ready module filled in.  A
 * mapping may name its module twice (a GNU build-id and a FileID): both
 * are asked, and the first ready serves.  This file picks the statuses.
 */
#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "otlp.h"
#include "route.h"

/* A request's state, kept across its suspensions. */
struct oreq {
	struct otlp		*o;
	struct batch_module	*mods;	/* one a module's id, two when it
					 * has a build-id and a FileID */
	size_t			*first;	/* a module's first in mods */
	struct batch		*b;
	int			 gzip;	/* answer gzip-compressed */
};

static void
oreq_free(struct oreq *q)
{
	if (q == NULL)
		return;
	batch_free(q->b);
	otlp_free(q->o);
	free(q->mods);
	free(q->first);
	free(q);
}

void
route_otlp_free(struct req *r)
{
	oreq_free(r->otlp);
	r->otlp = NULL;
}

/* pprof_lookup_fn: off is a file offset of the module's executable. */
static int
lookup(void *ctx, size_t mod, uint64_t off, struct gsym_result *res)
{
	const struct oreq *q = ctx;

	return route_profile_lookup(q->mods, q->first, mod, off, res);
}

static enum MHD_Result
answer(struct http *h, struct req *r)
{
	struct oreq		*q = r->otlp;
	struct pprof_stats	 st;
	struct MHD_Response	*resp;
	void			*out;
	size_t			 outlen;
	int			 rc;

	if ((rc = otlp_symbolize(q->o, lookup, q, &st)) != 0)
		return rc == -E2BIG ? reply_text(r, REPLY_TOO_LARGE, "the "
		    "answer would pass 2^31 strings or functions", "otlp") :
		    reply_text(r, REPLY_INTERNAL, "out of memory", "otlp");
	if ((rc = otlp_write(q->o, q->gzip, h->cfg->symbolize_answer_max,
	    &out, &outlen)) != 0)
		return rc == -E2BIG ? reply_text(r, REPLY_TOO_LARGE, "the "
		    "answer would be larger than --symbolize-max-answer",
		    "otlp") : reply_text(r, REPLY_INTERNAL, "out of memory",
		    "otlp");
	snprintf(r->how_buf, sizeof(r->how_buf), "%zu of %zu locations, %zu "
	    "mappings", st.locations, otlp_nlocations(q->o), st.mappings);
	resp = reply_buffer(out, outlen, "application/x-protobuf");
	if (resp != NULL) {
		if (q->gzip)
			MHD_add_response_header(resp,
			    MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
		MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY,
		    "Accept-Encoding");
	}
	route_otlp_free(r);	/* the GSYMs: the answer is made */
	return reply_response(r, REPLY_OK, resp, outlen, r->how_buf);
}

/* Does the Accept-Encoding header v take gzip (by name or "*")?  A
 * weight of 0 refuses it (RFC 9110 12.5.3). */
static int
takes_gzip(const char *v)
{
	const char	*w;
	size_t		 n, name;

	while (v != NULL && *v != '\0') {
		v += strspn(v, " \t,");
		n = strcspn(v, ",");
		name = strcspn(v, " \t;,");
		if ((name == 4 && strncasecmp(v, "gzip", 4) == 0) ||
		    (name == 1 && *v == '*')) {
			w = v + name + strspn(v + name, " \t");
			if (*w != ';')
				return 1;
			w += 1 + strspn(w + 1, " \t");
			return (*w != 'q' && *w != 'Q') || w[1] != '=' ||
			    strtod(w + 2, NULL) > 0;
		}
		v += n;
	}
	return 0;
}

/* The batch's modules: a profile module's build-id, then its FileID. */
static int
batch_modules(struct oreq *q, const struct otlp_module *om, size_t n)
{
	size_t i, k;

	if ((q->mods = calloc(2 * n + 1, sizeof(*q->mods))) == NULL ||
	    (q->first = calloc(n + 1, sizeof(*q->first))) == NULL)
		return -ENOMEM;
	for (i = k = 0; i < n; i++) {
		q->first[i] = k;
		if (om[i].gnu.idlen > 0) {
			memcpy(q->mods[k].id, om[i].gnu.id, om[i].gnu.idlen);
			q->mods[k].idlen = om[i].gnu.idlen;
			q->mods[k++].want_loads = BATCH_LOADS_MAP;
		}
		if (om[i].fileid.idlen > 0) {
			memcpy(q->mods[k].id, om[i].fileid.id,
			    om[i].fileid.idlen);
			q->mods[k].idlen = om[i].fileid.idlen;
			q->mods[k].by_fileid = 1;
			q->mods[k++].want_loads = BATCH_LOADS_MAP;
		}
	}
	q->first[n] = k;
	return (int)k;
}

static enum MHD_Result
begin(struct http *h, struct req *r)
{
	struct oreq			*q;
	const struct otlp_module	*om;
	struct pprof_limits		 lim;
	const char			*why = NULL, *ce;
	int64_t				 ms;
	size_t				 n;
	int				 rc, gz;

	if (r->too_long)
		return reply_text(r, REPLY_TOO_LARGE, "request body too "
		    "large: see --symbolize-max-addresses", "otlp");
	if ((ms = route_deadline_ms(h, r, &why)) < 0)
		return reply_text(r, REPLY_BAD_REQUEST, why, "otlp");
	ce = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONTENT_ENCODING);
	gz = ce != NULL && strcasecmp(ce, "gzip") == 0;
	if (ce != NULL && !gz && strcasecmp(ce, "identity") != 0)
		return reply_text(r, REPLY_BAD_REQUEST, "Content-Encoding "
		    "is gzip or identity", "otlp");
	if ((q = calloc(1, sizeof(*q))) == NULL)
		return MHD_NO;
	r->otlp = q;
	q->gzip = takes_gzip(MHD_lookup_connection_value(r->conn,
	    MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING));
	lim.max_bytes = route_body_max(h->cfg);
	lim.max_locations = (size_t)h->cfg->symbolize_max;
	lim.reuse_min = 0;
	lim.own = r->body_pooled ? r->body.cap : 0;
	if ((rc = otlp_read(r->body.p, r->body.len, gz, &lim, &q->o,
	    &why)) != 0)
		return route_profile_refused(h, r, rc, why, "otlp");
	metrics_symbolize(METRICS_API_OTLP, otlp_nlocations(q->o));
	n = otlp_modules(q->o, &om);
	if (n > (size_t)h->cfg->symbolize_modules)
		return reply_textf(r, REPLY_TOO_LARGE, "otlp", "too many "
		    "modules (at most %llu: --symbolize-max-modules)",
		    (unsigned long long)h->cfg->symbolize_modules);
	if ((rc = batch_modules(q, om, n)) < 0)
		return MHD_NO;
	if (route_batch_start(h, r, q->mods, (size_t)rc, ms, &q->b) != 0)
		return MHD_NO;
	return MHD_YES;
}

enum MHD_Result
route_otlp(struct http *h, struct req *r)
{
	enum MHD_Result ret;

	if (r->otlp == NULL && ((ret = begin(h, r)) != MHD_YES ||
	    r->status != 0))
		return ret;
	return route_batch_turn(h, r, r->otlp->b) ? answer(h, r) : MHD_YES;
}
