/*
 * route_artifact: GET /buildid/ID/KIND and /fileid/FILEID/KIND of a
 * debuginfo, an executable or a source file, from the store or, on a
 * miss, from the upstreams (fetch.h, route_ask.c).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "bundle.h"
#include "log.h"
#include "records.h"
#include "route.h"

/* Runs on the encode worker; MHD calls the handler again (DISPATCH). */
static void
encoded(void *ctx, int rc)
{
	struct req *r = ctx;

	(void)rc;	/* a copy the store refused: sent as it is */
	r->art.encoded = 1;
	route_resume(r);
}

/* What encoded() waits for. */
struct encoding {
	const struct cache_key	*key;
	unsigned		 coding;
};

static int
start_encode(struct http *h, struct req *r, void *arg)
{
	struct encoding *e = arg;

	return encode_request(h->enc, e->key, e->coding, encoded, r);
}

unsigned
route_coding(struct http *h, const struct req *r, const struct cache_key *key,
    const struct cache_record *rec)
{
	unsigned ok;

	if (h->enc == NULL || (key->kind != CACHE_DEBUGINFO &&
	    key->kind != CACHE_EXECUTABLE) || rec->size < h->cfg->compress_min ||
	    req_header(r, MHD_HTTP_HEADER_RANGE) != NULL)
		return 0;
	ok = webapi_accept_encoding(req_header(r,
	    MHD_HTTP_HEADER_ACCEPT_ENCODING)) & encode_offered(h->enc);
	return ok & WEBAPI_ENC_ZSTD ? WEBAPI_ENC_ZSTD : ok;
}

/*
 * Serve rec (key's, open on fd, consumed) in coding: its stored copy, or
 * after making one (suspended, phase ENCODE), or as it is when the file
 * does not compress or the copy cannot be made now.
 */
static enum MHD_Result
serve_coded(struct http *h, struct req *r, const struct cache_key *key,
    const struct cache_record *rec, int fd, unsigned coding)
{
	struct cache_record	erec;
	enum MHD_Result		ret;
	int			efd, rc;

	rc = encode_lookup(h->enc, key, rec, coding, &erec, &efd);
	if (rc == 0) {
		close(fd);
		ret = reply_coded(h, r, key, rec, &erec, efd, coding);
		cache_record_release(&erec);
		return ret;
	}
	/* Made once, by the first GET that wants it. */
	if (rc == -ENOENT && !r->art.encoded &&
	    strcmp(r->method, MHD_HTTP_METHOD_GET) == 0) {
		struct encoding e = { key, coding };

		if (route_wait(h, r, PHASE_ENCODE, start_encode, &e) == 0) {
			close(fd);
			return MHD_YES;
		}
	}
	ret = reply_fd(h, r, key, rec, fd);
	if (r->status == 200)
		encode_count(h->enc, 0, r->bytes);
	return ret;
}

/*
 * rec (key's, just looked up): a small file served before and still the
 * one the store names, asked plainly (whole, as it is, without
 * validators), from memory (hot.h).  @return 1 when answered (*ret set;
 * rec is still the caller's to release).
 */
static int
serve_hot(struct http *h, struct req *r, const struct cache_key *key,
    const struct cache_record *rec, enum MHD_Result *ret)
{
	struct hot_bytes *b;

	/* Not one a client would get coded, nor one that may have a
	 * better copy upstream; which files are kept is hot.c's rule. */
	if (h->hot == NULL || r->ask.fetches > 0 ||
	    req_header(r, MHD_HTTP_HEADER_RANGE) != NULL ||
	    req_header(r, MHD_HTTP_HEADER_IF_NONE_MATCH) != NULL ||
	    req_header(r, MHD_HTTP_HEADER_IF_MODIFIED_SINCE) != NULL ||
	    route_coding(h, r, key, rec) != 0 ||
	    (h->f != NULL && fetch_upgrade_possible(key, rec)) ||
	    (b = hot_find(h->hot, key, rec)) == NULL)
		return 0;
	*ret = reply_hot(h, r, key, rec, b);
	return 1;
}

enum MHD_Result
route_artifact(struct http *h, struct req *r)
{
	struct cache_record	 rec;
	struct cache_key	 key;
	enum MHD_Result		 ret;
	unsigned		 coding;
	int			 fd, rc, may_map;

	/* A build-id's miss may still be a FileID sent as a build-id. */
	may_map = !r->w.by_fileid;
	if (route_key(h, r, &key, &ret))
		return ret;
	for (;;) {
		/* One look-up: for the bytes kept in memory, else to open. */
		if ((rc = cache_get(h->c, &key, clock_wall_s(), &rec)) == 0) {
			if (serve_hot(h, r, &key, &rec, &ret)) {
				cache_record_release(&rec);
				return ret;
			}
			rc = records_open_got(h->c, h->s, &key, &rec, &fd);
		}
		if (rc != -ENOENT || !may_map || r->ask.fetches > 0 ||
		    !route_map_fileid(h, r))
			break;
		may_map = 0;	/* r->w names the build-id now */
		key.idlen = r->w.idlen;
	}
	/* The bundle uploaded with the build has it (bundle.h): put in
	 * the store now, and served from there. */
	if (rc == -ENOENT && key.kind == CACHE_SOURCE &&
	    bundle_expand(h->c, key.id, key.idlen, key.extra) == 0)
		rc = records_open(h->c, h->s, &key, &rec, &fd);
	/* The debuginfo itself may embed the file, or name it by a longer
	 * path (a relative request). */
	if ((rc == -ENOENT || rc == -ENODATA) && key.kind == CACHE_SOURCE &&
	    r->ask.fetches == 0 && route_source_dwarf(h, r, &key, &ret))
		return ret;
	if (rc == -ENODATA && r->ask.fetches > 0)
		return reply_text(r, REPLY_NOT_FOUND, "not found",
		    "upstream 404");
	if (rc == -ENODATA)
		return reply_text(r, REPLY_NEGATIVE, "not found", "negative");
	if (rc == -ENOENT && r->ask.fetches > 0)
		return route_after_fetch(r);
	if (rc == -ENOENT && route_ask_upstream(h, r, &key, r->w.raw_extra,
	    1, 0))
		return MHD_YES;
	/* A better copy may be upstream: ask, keep the better of the two. */
	if (rc == 0 && h->f != NULL && r->ask.fetches == 0 &&
	    fetch_upgrade_due(h->f, &key, &rec)) {
		close(fd);
		cache_record_release(&rec);
		if (route_ask_upstream(h, r, &key, NULL, 0, 1))
			return MHD_YES;
		rc = records_open(h->c, h->s, &key, &rec, &fd);
	}
	if (rc == -ENOENT)
		return reply_text(r, REPLY_NOT_FOUND, "not found", "miss");
	if (rc < 0) {
		log_limited("lookup", NULL, "lookup %s: %s", r->w.idhex,
		    strerror(-rc));
		return reply_text(r, REPLY_INTERNAL, "store error", "error");
	}
	if ((coding = route_coding(h, r, &key, &rec)) != 0)
		ret = serve_coded(h, r, &key, &rec, fd, coding);
	else
		ret = reply_fd(h, r, &key, &rec, fd);
	cache_record_release(&rec);
	return ret;
}
