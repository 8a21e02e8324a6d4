/*
 * route_ask: what the routes under /buildid and /fileid share to ask the
 * upstreams (fetch.h) for what the store lacks, and to answer once they
 * had their say; and the FileID map that uploads fill.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hex.h"
#include "log.h"
#include "route.h"

/* Keep what the fetch engine handed over: the fd, and a copy of rec. */
static void
keep_served(struct req *r, const struct fetch_served *s)
{
	const char	*src[4] = { s->rec->origin, s->rec->xfile,
			    s->rec->xarchive, s->rec->ximasig };
	const char	**dst[4];
	char		*m;
	size_t		 n = 0, i, l;

	r->srec = *s->rec;
	dst[0] = &r->srec.origin;
	dst[1] = &r->srec.xfile;
	dst[2] = &r->srec.xarchive;
	dst[3] = &r->srec.ximasig;
	for (i = 0; i < 4; i++)
		n += src[i] ? strlen(src[i]) + 1 : 0;
	if ((m = malloc(n ? n : 1)) == NULL) {
		close(s->fd);	/* served from the store instead */
		memset(&r->srec, 0, sizeof(r->srec));
		return;
	}
	r->srec.mem = m;
	for (i = 0; i < 4; i++) {
		*dst[i] = NULL;
		if (src[i] == NULL)
			continue;
		l = strlen(src[i]) + 1;
		memcpy(m, src[i], l);
		*dst[i] = m;
		m += l;
	}
	r->sfd = s->fd;		/* fd now owned by r */
}

/* Runs on the fetch thread; MHD calls the handler again (DISPATCH). */
static void
fetched(void *ctx, enum fetch_result res, const char *from,
    const struct fetch_served *served)
{
	static const char *const why[] = {
		[FETCH_OK] = "upstream", [FETCH_NOTFOUND] = "upstream 404",
		[FETCH_TRANSIENT] = "upstreams: nothing definite",
		[FETCH_TOOBIG] = "upstream: too big",
		[FETCH_UNSUPPORTED] = "upstream: no sections",
	};
	struct req *r = ctx;

	r->fetch_result = res;
	if (served != NULL)
		keep_served(r, served);
	if (from != NULL)
		snprintf(r->how_buf, sizeof(r->how_buf), "upstream %s", from);
	else
		snprintf(r->how_buf, sizeof(r->how_buf), "%s", why[res]);
	MHD_resume_connection(r->conn);
}

int
route_ask_upstream(struct http *h, struct req *r, const struct cache_key *key,
    const char *raw_extra, int want_bytes, int upgrade)
{
	struct fetch_req	 fr;
	char			 peer[NI_MAXHOST] = "unknown";
	uint64_t		 max;
	int			 rc;

	if (h->f == NULL ||
	    !fetch_may_ask(h->f, req_header(r, "X-Forwarded-For")))
		return 0;
	req_peer(r, peer, sizeof(peer));
	max = req_maxsize(r);
	memset(&fr, 0, sizeof(fr));
	fr.key = *key;
	fr.idhex = r->w.idhex;
	fr.raw_extra = raw_extra;
	fr.user_agent = req_header(r, MHD_HTTP_HEADER_USER_AGENT);
	fr.forwarded_for = req_header(r, "X-Forwarded-For");
	fr.peer = peer;
	fr.via = req_header(r, "X-Symhub-Via");
	fr.maxsize = max == UINT64_MAX ? 0 : max;
	fr.want_bytes = want_bytes;
	fr.upgrade = upgrade;
	r->fetches++;
	r->asked = key->kind;
	r->phase = PHASE_FETCH;
	MHD_suspend_connection(r->conn);
	if ((rc = fetch_request(h->f, &fr, fetched, r)) < 0) {
		log_limited("cannot ask upstreams", NULL,
		    "cannot ask upstreams: %s", strerror(-rc));
		r->fetch_result = FETCH_TRANSIENT;
		MHD_resume_connection(r->conn);
	}
	return 1;
}

enum MHD_Result
route_after_fetch(struct req *r)
{
	switch (r->fetch_result) {
	case FETCH_NOTFOUND:
		return reply_text(r, REPLY_NOT_FOUND, "not found",
		    "upstream 404");
	case FETCH_TOOBIG:
		return reply_text(r, REPLY_TOO_BIG,
		    "artifact larger than the size limit", "too-big");
	default:
		return reply_transient(r);
	}
}

/* A FileID's build-id, from the map that uploads fill (doc/protocol.md,
 * "Keys"). */
int
route_map_fileid(struct http *h, struct req *r)
{
	unsigned char	id[CACHE_ID_MAX];
	size_t		idlen;

	if (r->w.idlen != CACHE_FILEID_LEN ||
	    cache_fileid_get(h->c, r->w.id, id, &idlen) < 0)
		return 0;
	memcpy(r->w.id, id, idlen);
	r->w.idlen = idlen;
	hex_encode(id, idlen, r->w.idhex);
	r->w.by_fileid = 0;
	return 1;
}
