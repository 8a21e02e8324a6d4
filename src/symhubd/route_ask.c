/*
 * route_ask: what the routes share to ask others and wait for them: any
 * worker (route_wait()), and the upstreams (fetch.h) for what the store
 * lacks, with the federation's checks and headers; and the first steps
 * of every route under /buildid and /fileid (route_key()).
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/hex.h"
#include "common/auth.h"
#include "log.h"
#include "records.h"
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

	r->ask.srec = *s->rec;
	dst[0] = &r->ask.srec.origin;
	dst[1] = &r->ask.srec.xfile;
	dst[2] = &r->ask.srec.xarchive;
	dst[3] = &r->ask.srec.ximasig;
	for (i = 0; i < 4; i++)
		n += src[i] ? strlen(src[i]) + 1 : 0;
	if ((m = malloc(n ? n : 1)) == NULL) {
		/* Served from the store instead. */
		if (s->stream != NULL)
			fetch_stream_release(s->stream, NULL);
		else
			close(s->fd);
		memset(&r->ask.srec, 0, sizeof(r->ask.srec));
		return;
	}
	r->ask.srec.mem = m;
	for (i = 0; i < 4; i++) {
		*dst[i] = NULL;
		if (src[i] == NULL)
			continue;
		l = strlen(src[i]) + 1;
		memcpy(m, src[i], l);
		*dst[i] = m;
		m += l;
	}
	r->ask.sfd = s->fd;		/* fd now owned by r */
	r->ask.stream = s->stream;	/* ... or the stream's reference */
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

	r->ask.result = res;
	if (served != NULL)
		keep_served(r, served);
	if (from != NULL)
		snprintf(r->how_buf, sizeof(r->how_buf), "upstream %s", from);
	else
		snprintf(r->how_buf, sizeof(r->how_buf), "%s", why[res]);
	route_resume(r);
}

static int
start_fetch(struct http *h, struct req *r, void *arg)
{
	return fetch_request(h->f, arg, fetched, r);
}

int
route_ask_upstream(struct http *h, struct req *r, const struct cache_key *key,
    const char *raw_extra, int want_bytes, int upgrade)
{
	struct fetch_req	 fr;
	char			 peer[NI_MAXHOST];
	uint64_t		 max;
	int			 rc;

	if (!route_federation(h, r, &fr, peer, sizeof(peer)))
		return 0;
	max = req_maxsize(r);
	fr.key = *key;
	fr.idhex = r->w.idhex;
	fr.raw_extra = raw_extra;
	fr.maxsize = max == UINT64_MAX ? 0 : max;
	fr.want_bytes = want_bytes;
	/* A Range is cut from the whole file (reply_fd()). */
	fr.want_stream = want_bytes && (key->kind == CACHE_DEBUGINFO ||
	    key->kind == CACHE_EXECUTABLE) &&
	    req_header(r, MHD_HTTP_HEADER_RANGE) == NULL;
	fr.upgrade = upgrade;
	r->ask.fetches++;
	r->ask.asked = key->kind;
	if ((rc = route_wait(h, r, PHASE_FETCH, start_fetch, &fr)) < 0) {
		/* Resumed: answered on the next call, as nothing definite. */
		log_limited("cannot ask upstreams", NULL,
		    "cannot ask upstreams: %s", strerror(-rc));
		r->ask.result = FETCH_TRANSIENT;
	}
	return 1;
}

enum MHD_Result
route_after_fetch(struct req *r)
{
	switch (r->ask.result) {
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

int
route_wait(struct http *h, struct req *r, enum phase p, route_start_fn start,
    void *arg)
{
	int rc;

	r->phase = p;
	/* Before the start: its callback may resume r before start returns,
	 * and a connection must be suspended to be resumed. */
	MHD_suspend_connection(r->conn);
	if ((rc = start(h, r, arg)) < 0)
		MHD_resume_connection(r->conn);
	return rc;
}

void
route_resume(struct req *r)
{
	MHD_resume_connection(r->conn);
}

int
route_loop(struct http *h, const struct req *r)
{
	return h->f != NULL && fetch_loop(h->f, req_header(r, "X-Symhub-Via"),
	    req_header(r, MHD_HTTP_HEADER_USER_AGENT));
}

int
route_federation(struct http *h, const struct req *r, struct fetch_req *fr,
    char *peer, size_t len)
{
	memset(fr, 0, sizeof(*fr));
	snprintf(peer, len, "unknown");
	req_peer(r, peer, len);
	fr->user_agent = req_header(r, MHD_HTTP_HEADER_USER_AGENT);
	fr->forwarded_for = req_header(r, "X-Forwarded-For");
	fr->peer = peer;
	fr->via = req_header(r, "X-Symhub-Via");
	/* Past the hop limit, or come round the federation back here: this
	 * hub's own answer only. */
	return h->f != NULL && fetch_may_ask(h->f, fr->forwarded_for) &&
	    !route_loop(h, r);
}

int
route_may_read(struct http *h, const struct req *r, const unsigned char *id,
    size_t idlen)
{
	return records_may_read(h->c, id, idlen, r->tok.name);
}

int
route_key(struct http *h, struct req *r, struct cache_key *key,
    enum MHD_Result *ret)
{
	int fd;

	/* Mapped on the first round; r->w names the build-id after. */
	if (r->w.by_fileid && !route_map_fileid(h, r)) {
		*ret = reply_text(r, REPLY_NOT_FOUND, "unknown FileID",
		    "fileid");
		return 1;
	}
	/* A hub that finds itself in the chain is asked by itself. */
	if (route_loop(h, r)) {
		*ret = reply_text(r, REPLY_NOT_FOUND,
		    "federation loop: this hub asked for this itself", "loop");
		return 1;
	}
	key->kind = r->w.kind;
	key->id = r->w.id;
	key->idlen = r->w.idlen;
	key->extra = r->w.extra;
	/* Another tenant's private build-id is not there, to be asked of
	 * upstreams neither: the tenant's own upload answers it. */
	if (!route_may_read(h, r, r->w.id, r->w.idlen)) {
		*ret = reply_text(r, REPLY_NOT_FOUND, "not found", "private");
		return 1;
	}
	if (r->ask.stream != NULL) {
		/* The bytes an upstream is sending, its head checked. */
		*ret = reply_stream(h, r, key, &r->ask.srec, r->ask.stream,
		    route_coding(h, r, key, &r->ask.srec));
		r->ask.stream = NULL;
		return 1;
	}
	if (r->ask.sfd >= 0) {
		/* The bytes an upstream just sent, being stored meanwhile. */
		fd = r->ask.sfd;
		r->ask.sfd = -1;
		*ret = reply_fd(h, r, key, &r->ask.srec, fd);
		return 1;
	}
	return 0;
}

int
req_token(struct http *h, struct req *r, unsigned scope)
{
	const char	*who;
	int		 rc;

	pthread_rwlock_rdlock(&h->authlk);
	rc = auth_check(h->auth, req_header(r,
	    MHD_HTTP_HEADER_AUTHORIZATION), scope, &who);
	/* Copied: the tokens may be read again while r goes on. */
	if (who != NULL) {
		snprintf(r->tok.name, sizeof(r->tok.name), "%s", who);
		r->tok.scopes = auth_scopes(h->auth, who);
	}
	pthread_rwlock_unlock(&h->authlk);
	return rc;
}

/* Phase BODY: a /symbolize body, kept up to about 40 bytes an address
 * and within --post-buffer-max (over it: 503 once it is in). */
size_t
route_body_max(const struct config *cfg)
{
	return (size_t)cfg->symbolize_max * 40 +
	    (size_t)cfg->symbolize_modules * 256 + 4096;
}

/* ---- a request waiting on a batch of modules ---- */

/* Runs on a fetch, derive or timer thread; MHD calls the handler again. */
static void
batch_woken(void *ctx)
{
	route_resume(ctx);
}

int
route_batch_start(struct http *h, struct req *r, struct batch_module *mods,
    size_t n, int64_t ms, struct batch **b)
{
	struct fetch_req	fr;
	char			peer[NI_MAXHOST];

	return batch_create(h->batches, mods, n, r->t0 + ms * 1000,
	    route_federation(h, r, &fr, peer, sizeof(peer)) ? &fr : NULL,
	    r->tok.name, batch_woken, r, b) != 0 ? -ENOMEM : 0;
}

/* Wait for the batch's next step; none to wait for: the next call takes
 * it at once. */
static int
batch_start_step(struct http *h, struct req *r, void *arg)
{
	(void)h;
	(void)r;
	return batch_wait(arg) ? 0 : -EAGAIN;
}

int
route_batch_turn(struct http *h, struct req *r, struct batch *b)
{
	if (!batch_step(b))
		return 1;
	(void)route_wait(h, r, PHASE_BATCH, batch_start_step, b);
	return 0;
}

int64_t
route_deadline_ms(const struct http *h, const struct req *r,
    const char **why)
{
	const char	*v;
	char		*end;
	int64_t		 most = (int64_t)h->cfg->symbolize_deadline * 1000;
	long long	 ms;

	v = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND,
	    "deadline");
	if (v == NULL)
		return most;
	errno = 0;
	ms = strtoll(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || ms < 0) {
		*why = "deadline is a number of milliseconds";
		return -1;
	}
	return ms > most ? most : ms;
}

const struct batch_module *
route_profile_module(const struct batch_module *mods, const size_t *first,
    size_t mod)
{
	size_t i;

	for (i = first[mod]; i < first[mod + 1]; i++)
		if (mods[i].status == BATCH_READY && mods[i].nloads > 0)
			return &mods[i];
	return NULL;
}

int
route_profile_lookup(const struct batch_module *mods, const size_t *first,
    size_t mod, uint64_t off, struct gsym_result *res)
{
	const struct batch_module	*bm;
	uint64_t			 addr;
	int				 rc;

	if ((bm = route_profile_module(mods, first, mod)) == NULL)
		return -ENODEV;
	if ((rc = elfinfo_load_addr(bm->loads, bm->nloads, off, &addr)) != 0)
		return rc;
	return derive_gsym_lookup(bm->gf, addr, res);
}

enum MHD_Result
route_profile_refused(struct http *h, struct req *r, int rc, const char *why,
    const char *how)
{
	if (rc == -E2BIG)
		return strcmp(why, "too many locations") == 0 ?
		    reply_textf(r, REPLY_TOO_LARGE, how, "%s (at most %llu: "
		    "--symbolize-max-addresses)", why,
		    (unsigned long long)h->cfg->symbolize_max) :
		    reply_text(r, REPLY_TOO_LARGE, why, how);
	if (rc == -EBUSY)
		return reply_text(r, REPLY_BUSY, why, how);
	return reply_text(r, rc == -EINVAL ? REPLY_BAD_REQUEST :
	    REPLY_INTERNAL, why, how);
}
