/*
 * route_section: GET .../section/NAME.  From the store while the derived
 * entry is fresh, else cut now from the debuginfo, then the executable,
 * and stored as a derived entry; when neither file is here, the
 * upstreams are asked for the section, then for the files to cut it from.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "common/elfinfo.h"
#include "log.h"
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

	if (r->fetches == 0 && known == 0)
		next = CACHE_SECTION;
	else if ((r->fetches == 0 || (r->asked == CACHE_SECTION &&
	    r->fetch_result == FETCH_UNSUPPORTED)) &&
	    !(known & 1u << CACHE_DEBUGINFO))
		next = CACHE_DEBUGINFO;
	else if ((r->fetches == 0 || r->asked != CACHE_EXECUTABLE) &&
	    r->fetch_result != FETCH_TRANSIENT &&
	    r->fetch_result != FETCH_TOOBIG &&
	    !(r->asked == CACHE_SECTION && r->fetch_result == FETCH_NOTFOUND) &&
	    !(known & 1u << CACHE_EXECUTABLE))
		next = CACHE_EXECUTABLE;
	if (next != 0) {
		pk.kind = (enum cache_kind)next;
		pk.extra = next == CACHE_SECTION ? key->extra : NULL;
		if (route_ask_upstream(h, r, &pk, next == CACHE_SECTION ?
		    r->w.raw_extra : NULL, next == CACHE_SECTION, 0))
			return MHD_YES;
	}
	if (r->fetch_result == FETCH_TRANSIENT)
		return reply_reset(r);
	if (r->fetch_result == FETCH_TOOBIG)
		return route_after_fetch(r);
	return reply_text(r, REPLY_NOT_FOUND, "no such section",
	    r->fetches ? "upstream 404" : "miss");
}

static int
mem_sink(void *ctx, const void *buf, size_t len)
{
	return buf_add(ctx, buf, len);
}

/* Store an extracted section as a derived blob; failure only costs the
 * next request another extraction, so it is logged and ignored. */
static void
store_section(struct http *h, const struct cache_key *key,
    const struct cache_record *rec, const struct buf *m)
{
	struct cache_blob	*b;
	int			 rc;

	if ((rc = cache_blob_create(h->c, &b)) == 0 &&
	    (rc = cache_blob_write(b, m->p, m->len)) == 0) {
		rc = cache_put_blob(h->c, b, key, rec, NULL);
		b = NULL;	/* consumed */
	}
	cache_blob_abort(b);
	if (rc == -EROFS)
		log_debug("read-only store: section not cached");
	else if (rc < 0)
		log_warnx("cannot cache section %s: %s", key->extra,
		    strerror(-rc));
}

enum MHD_Result
route_section(struct http *h, struct req *r, const struct cache_key *key)
{
	static const enum cache_kind parents[] = { CACHE_DEBUGINFO,
	    CACHE_EXECUTABLE };
	struct MHD_Response	*resp;
	struct cache_record	 rec, p;
	struct cache_key	 pk = *key;
	struct buf		 m = { 0 };
	enum MHD_Result		 ret;
	size_t			 i;
	unsigned		 known = 0;
	int			 fd, rc, found = 0, neg;

	rc = cache_get(h->c, key, clock_wall_s(), &rec);
	neg = rc == -ENODATA;
	if (rc == 0) {
		/* A section an upstream cut has no parent here to check. */
		if ((!(rec.flags & CACHE_F_DERIVED) ||
		    cache_derived_fresh(h->c, key->id, key->idlen, &rec,
		    clock_wall_s())) &&
		    cache_open_data(h->c, &rec, &fd) == 0) {
			ret = reply_fd(h, r, key, &rec, fd);
			cache_record_release(&rec);
			return ret;
		}
		cache_record_release(&rec);
	}

	pk.extra = NULL;
	for (i = 0; i < 2 && !found; i++) {
		pk.kind = parents[i];
		if ((rc = route_lookup(h, &pk, &p, &fd)) < 0) {
			if (rc != -ENOENT && rc != -ENODATA)
				log_warnx("section %s: %s", key->extra,
				    strerror(-rc));
			continue;
		}
		known |= 1u << pk.kind;
		m.len = 0;
		rc = elfinfo_section(fd, key->extra, mem_sink, &m);
		close(fd);
		if (rc == 0) {
			found = 1;
			memset(&rec, 0, sizeof(rec));
			rec.flags = CACHE_F_DERIVED;
			rec.parent = cache_fingerprint(&p);
			rec.size = m.len;
			rec.last_modified = p.last_modified;
			rec.stored = clock_wall_s();
			rec.origin = p.origin;
			rec.xfile = p.xfile;
			rec.xarchive = p.xarchive;
			if (m.len > 0)
				store_section(h, key, &rec, &m);
		} else if (rc != -ENOENT) {
			log_warnx("section %s of %s: %s", key->extra,
			    p.path ? p.path : "blob", strerror(-rc));
		}
		if (!found)
			cache_record_release(&p);
	}
	if (!found) {
		buf_free(&m);
		if (known == 0 && neg && r->fetches == 0)
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
