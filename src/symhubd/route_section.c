/*
 * route_section: GET .../section/NAME.  From the store while the derived
 * entry is fresh, else cut now (derive.h); when neither file is here, the
 * upstreams are asked for the section, then for the files to cut it from.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "derive.h"
#include "route.h"

/*
 * Neither file of a section is here, or neither has it: ask upstreams
 * for the section itself; when they cannot cut sections (503), for the
 * debuginfo, and when none has that, for the executable, to cut it here.
 * known: bit (1 << kind) for each parent file that is here and lacks the
 * section.
 */
static enum MHD_Result
ask(struct http *h, struct req *r, const struct cache_key *key,
    unsigned known)
{
	struct cache_key	pk = *key;
	int			next = 0;

	if (r->ask.fetches == 0 && known == 0)
		next = CACHE_SECTION;
	else if ((r->ask.fetches == 0 || (r->ask.asked == CACHE_SECTION &&
	    r->ask.result == FETCH_UNSUPPORTED)) &&
	    !(known & 1u << CACHE_DEBUGINFO))
		next = CACHE_DEBUGINFO;
	else if ((r->ask.fetches == 0 || r->ask.asked != CACHE_EXECUTABLE) &&
	    r->ask.result != FETCH_TRANSIENT &&
	    r->ask.result != FETCH_TOOBIG &&
	    !(r->ask.asked == CACHE_SECTION &&
	    r->ask.result == FETCH_NOTFOUND) &&
	    !(known & 1u << CACHE_EXECUTABLE))
		next = CACHE_EXECUTABLE;
	if (next != 0) {
		pk.kind = (enum cache_kind)next;
		pk.extra = next == CACHE_SECTION ? key->extra : NULL;
		if (route_ask_upstream(h, r, &pk, next == CACHE_SECTION ?
		    r->w.raw_extra : NULL, next == CACHE_SECTION, 0))
			return MHD_YES;
	}
	if (r->ask.result == FETCH_TRANSIENT)
		return reply_transient(r);
	if (r->ask.result == FETCH_TOOBIG)
		return route_after_fetch(r);
	return reply_text(r, REPLY_NOT_FOUND, "no such section",
	    r->ask.fetches ? "upstream 404" : "miss");
}

enum MHD_Result
route_section(struct http *h, struct req *r)
{
	struct MHD_Response	*resp;
	struct cache_record	 rec, p;
	struct cache_key	 k, *key = &k;
	struct buf		 m = { 0 };
	enum MHD_Result		 ret;
	unsigned		 known = 0;
	int			 fd, rc, neg;

	if (route_key(h, r, key, &ret))
		return ret;
	rc = h->dv != NULL ? derive_open(h->dv, key, &rec, &fd, NULL) :
	    -ENOENT;
	if (rc == 0) {
		ret = reply_fd(h, r, key, &rec, fd);
		cache_record_release(&rec);
		return ret;
	}
	neg = rc == -ENODATA;

	rc = h->dv != NULL ? derive_section(h->dv, key, &m, &rec, &p, &known) :
	    -ENOENT;
	if (rc == -ENOMEM) {
		buf_free(&m);
		return MHD_NO;
	}
	if (rc < 0) {
		buf_free(&m);
		if (known == 0 && neg && r->ask.fetches == 0)
			return reply_text(r, REPLY_NEGATIVE, "no such section",
			    "negative");
		if (h->f != NULL && known != (1u << CACHE_DEBUGINFO |
		    1u << CACHE_EXECUTABLE))
			return ask(h, r, key, known);
		return reply_text(r, REPLY_NOT_FOUND, "no such section",
		    "miss");
	}
	if (reply_refused(r, m.len, &ret)) {
		buf_free(&m);
		cache_record_release(&p);
		return ret;
	}
	if ((resp = reply_buffer(m.p, m.len, NULL)) != NULL)
		reply_artifact_headers(resp, &rec);
	cache_record_release(&p);
	return reply_response(r, REPLY_SECTION, resp, m.len, "extracted");
}
