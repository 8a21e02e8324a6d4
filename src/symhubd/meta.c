/*
 * meta: /metadata queries (see meta.h).
 *
 * Threads: HTTP workers queue queries (meta_query); META_WORKERS threads
 * take them, one at a time each, with a libcurl multi handle of their
 * own for the upstreams.  The answers kept from upstreams are shared
 * under a lock.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "base/clock.h"
#include "base/counter.h"
#include "base/hex.h"
#include "log.h"
#include "meta.h"
#include "metajson.h"

#define META_WORKERS	2
#define META_BODY_MAX	(64u << 20)	/* bytes of one upstream answer */
#define KEPT_MAX	256		/* upstream answers kept */
#define KEPT_BYTES	(32u << 20)	/* and their bytes */

struct job {
	struct job		*next;
	struct webapi_meta	 q;
	char			*value;		/* q.value points here */
	char			*ua, *xff, *peer, *via;
	int			 ask;
	meta_done_fn		 done;
	void			*ctx;
};

/* An upstream's answer, kept: 200 with its body, or 404. */
struct kept {
	char		*key;		/* "I KEY VALUE" */
	long		 status;
	char		*body;
	size_t		 len;
	int64_t		 expires;	/* wall seconds */
};

/* One upstream asked for one query. */
struct ask {
	CURL			*easy;
	struct curl_slist	*hdrs;
	int			 done;
	CURLcode		 res;
	char			*body;
	size_t			 len, cap;
	int			 too_big;
	long			 status;	/* a kept answer's, or 0 */
	char			*kbody;		/* a kept answer's body */
	size_t			 klen;
};

struct worker {
	struct meta	*m;
	pthread_t	 th;
	CURLM		*multi;
};

struct meta {
	struct cache		*c;
	struct fetch		*f;
	size_t			 nup;
	int64_t			 maxtime_ms, up_timeout_ms, ttl_s;

	pthread_mutex_t		 mu;		/* guards the queue, stop */
	pthread_cond_t		 cv;
	struct job		*head, **tail;
	unsigned		 queued;	/* waiting or running */
	atomic_int		 stop;
	struct worker		 w[META_WORKERS];
	int			 nw;

	pthread_mutex_t		 kmu;		/* guards kept */
	struct kept		 kept[KEPT_MAX];
	size_t			 nkept;
	uint64_t		 kept_bytes;

	atomic_uint_fast64_t	 queries, busy, walks_cut, up_answers,
				 up_notfound, up_failed, up_kept;
};


/*
 * Upstream answers kept.
 */

static void
kept_clear(struct kept *k)
{
	free(k->key);
	free(k->body);
	memset(k, 0, sizeof(*k));
}

/* Copy the answer kept under key into a; @return 1 if there is one. */
static int
kept_get(struct meta *m, const char *key, struct ask *a)
{
	int64_t	now = clock_wall_s();
	size_t	i;
	int	found = 0;

	pthread_mutex_lock(&m->kmu);
	for (i = 0; i < m->nkept; i++) {
		if (strcmp(m->kept[i].key, key) != 0)
			continue;
		if (m->kept[i].expires <= now)
			break;
		if (m->kept[i].len > 0) {
			if ((a->kbody = malloc(m->kept[i].len)) == NULL)
				break;
			memcpy(a->kbody, m->kept[i].body, m->kept[i].len);
		}
		a->klen = m->kept[i].len;
		a->status = m->kept[i].status;
		found = 1;
		break;
	}
	pthread_mutex_unlock(&m->kmu);
	return found;
}

/* Keep an answer (status 200 with body, or 404) under key. */
static void
kept_put(struct meta *m, const char *key, long status, const char *body,
    size_t len)
{
	struct kept	 k = { NULL, status, NULL, len, 0 };
	int64_t		 now = clock_wall_s();
	size_t		 i, victim;

	if (m->ttl_s == 0 || len > KEPT_BYTES / 4)
		return;
	if ((k.key = strdup(key)) == NULL ||
	    (len > 0 && (k.body = malloc(len)) == NULL)) {
		free(k.key);
		return;
	}
	if (len > 0)
		memcpy(k.body, body, len);
	k.expires = now + m->ttl_s;
	pthread_mutex_lock(&m->kmu);
	/* The same key's older answer goes; then the expired ones, then
	 * the soonest to expire, until there is room. */
	for (i = 0; i < m->nkept; i++)
		if (strcmp(m->kept[i].key, key) == 0 ||
		    m->kept[i].expires <= now) {
			m->kept_bytes -= m->kept[i].len;
			kept_clear(&m->kept[i]);
			m->kept[i] = m->kept[--m->nkept];
			i--;
		}
	while (m->nkept > 0 && (m->nkept == KEPT_MAX ||
	    m->kept_bytes + len > KEPT_BYTES)) {
		for (victim = 0, i = 1; i < m->nkept; i++)
			if (m->kept[i].expires < m->kept[victim].expires)
				victim = i;
		m->kept_bytes -= m->kept[victim].len;
		kept_clear(&m->kept[victim]);
		m->kept[victim] = m->kept[--m->nkept];
	}
	m->kept[m->nkept++] = k;
	m->kept_bytes += len;
	pthread_mutex_unlock(&m->kmu);
}

/*
 * The local part: what this hub indexed in place.
 */

struct walk {
	struct meta		*m;
	const struct webapi_meta *q;
	struct metajson		*mj;
	const char		*type;
	int64_t			 deadline;	/* clock_ms() */
	unsigned		 n;
	int			 cut;
	int			 rc;
};

/* A file indexed where it is (a scanned file or package member), named:
 * what elfutils answers /metadata from.  Fetched copies are what the
 * upstreams answer for; uploads have no file name. */
static int
indexed(const struct cache_record *rec)
{
	/* A private upload is never listed (none has a name anyway). */
	return (rec->flags & CACHE_F_EXTERNAL) &&
	    !(rec->flags & CACHE_F_PRIVATE) && rec->origin != NULL &&
	    strcmp(rec->origin, "scan") == 0 && rec->xfile != NULL &&
	    rec->xfile[0] != '\0';
}

static int
add_local(struct walk *w, const struct cache_key *key,
    const struct cache_record *rec)
{
	char	idhex[2 * CACHE_ID_MAX + 1];
	int	rc;

	hex_encode(key->id, key->idlen, idhex);
	if ((rc = metajson_add(w->mj, w->type, idhex, rec->xfile,
	    (rec->flags & CACHE_F_MEMBER) ? rec->xarchive : NULL)) < 0)
		w->rc = rc;
	return rc < 0;
}

static int
walk_fn(void *ctx, const struct cache_key *key,
    const struct cache_record *rec)
{
	struct walk *w = ctx;

	if ((++w->n & 63) == 0 && (clock_ms() >= w->deadline ||
	    GET(w->m->stop))) {
		w->cut = 1;
		return 1;
	}
	if (!indexed(rec) || !webapi_meta_match(w->q, rec->xfile))
		return 0;
	if (metajson_full(w->mj)) {
		w->cut = 1;
		return 1;
	}
	return add_local(w, key, rec);
}

/* Look the index through for j, executables first (so that a file that
 * is both gives its executable entry first, as elfutils does).
 * @return 0 or -ENOMEM; *complete cleared when the time ran out. */
static int
local(struct meta *m, const struct job *j, struct metajson *mj,
    int *complete)
{
	static const enum cache_kind kinds[] = { CACHE_EXECUTABLE,
	    CACHE_DEBUGINFO };
	struct walk		 w;
	struct cache_record	 rec;
	struct cache_key	 key;
	size_t			 i;
	int			 rc;

	memset(&w, 0, sizeof(w));
	w.m = m;
	w.q = &j->q;
	w.mj = mj;
	w.deadline = m->maxtime_ms ? clock_ms() + m->maxtime_ms : INT64_MAX;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]) && !w.cut &&
	    w.rc == 0; i++) {
		w.type = kinds[i] == CACHE_EXECUTABLE ? "executable" :
		    "debuginfo";
		if (j->q.key != WEBAPI_META_BUILDID) {
			rc = cache_foreach_kind(m->c, kinds[i], walk_fn, &w);
			if (rc < 0 && w.rc == 0) {
				/* The index could not be read: say so. */
				log_warnx("metadata: cannot walk the index: %s",
				    strerror(-rc));
				w.cut = 1;
			}
			continue;
		}
		if (j->q.idlen == 0)
			break;
		key.kind = kinds[i];
		key.id = j->q.id;
		key.idlen = j->q.idlen;
		key.extra = NULL;
		if (cache_get(m->c, &key, clock_wall_s(), &rec) != 0)
			continue;
		if (indexed(&rec))
			add_local(&w, &key, &rec);
		cache_record_release(&rec);
	}
	if (w.cut) {
		INC(m->walks_cut);
		*complete = 0;
	}
	return w.rc;
}

/*
 * The upstreams.
 */

static size_t
on_body(char *buf, size_t size, size_t n, void *arg)
{
	struct ask	*a = arg;
	size_t		 len = size * n, cap;
	char		*p;

	if (a->len + len > META_BODY_MAX) {
		a->too_big = 1;
		return 0;
	}
	if (a->len + len > a->cap) {
		cap = a->cap ? a->cap : 16384;
		while (cap < a->len + len)
			cap *= 2;
		if ((p = realloc(a->body, cap)) == NULL)
			return 0;
		a->body = p;
		a->cap = cap;
	}
	memcpy(a->body + a->len, buf, len);
	a->len += len;
	return len;
}

/* The key an upstream's answer to q is kept under. */
static char *
kept_key(size_t i, const struct webapi_meta *q)
{
	char *s;

	if (asprintf(&s, "%zu %s %s", i, q->keyname, q->value) < 0)
		return NULL;
	return s;
}

/* Start asking every upstream that may be asked; those with an answer
 * kept are not.  @return how many were started. */
static size_t
ask_start(struct meta *m, struct worker *wk, const struct job *j,
    struct ask *asks, int *complete)
{
	struct fetch_req	 fed;
	char			*path = NULL, *ev, *ek, *key;
	size_t			 i, started = 0;
	int			 rc;

	memset(&fed, 0, sizeof(fed));
	fed.user_agent = j->ua;
	fed.forwarded_for = j->xff;
	fed.peer = j->peer;
	fed.via = j->via;
	ek = curl_easy_escape(NULL, j->q.keyname, 0);
	ev = curl_easy_escape(NULL, j->q.value, 0);
	if (ek == NULL || ev == NULL ||
	    asprintf(&path, "/metadata?key=%s&value=%s", ek, ev) < 0)
		path = NULL;
	curl_free(ek);
	curl_free(ev);
	for (i = 0; i < m->nup; i++) {
		if ((key = kept_key(i, &j->q)) != NULL &&
		    kept_get(m, key, &asks[i])) {
			INC(m->up_kept);
			free(key);
			continue;
		}
		free(key);
		if (path == NULL) {
			*complete = 0;
			continue;
		}
		rc = fetch_side_handle(m->f, i, path,
		    (1u << CACHE_DEBUGINFO) | (1u << CACHE_EXECUTABLE), &fed,
		    &asks[i].easy, &asks[i].hdrs);
		if (rc == -EPERM)
			continue;	/* it serves neither kind */
		if (rc < 0) {
			*complete = 0;	/* breaker open, or no memory */
			INC(m->up_failed);
			continue;
		}
		curl_easy_setopt(asks[i].easy, CURLOPT_PRIVATE, &asks[i]);
		curl_easy_setopt(asks[i].easy, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(asks[i].easy, CURLOPT_WRITEDATA, &asks[i]);
		curl_easy_setopt(asks[i].easy, CURLOPT_TIMEOUT_MS,
		    (long)m->up_timeout_ms);
		if (curl_multi_add_handle(wk->multi, asks[i].easy) !=
		    CURLM_OK) {
			*complete = 0;
			curl_easy_cleanup(asks[i].easy);
			curl_slist_free_all(asks[i].hdrs);
			asks[i].easy = NULL;
			asks[i].hdrs = NULL;
			continue;
		}
		started++;
	}
	free(path);
	return started;
}

/* Drive the transfers until they end, the time is up or we stop. */
static void
ask_wait(struct meta *m, struct worker *wk, int64_t deadline)
{
	struct CURLMsg	*msg;
	struct ask	*a;
	int64_t		 left;
	int		 running = 1, n;

	for (;;) {
		curl_multi_perform(wk->multi, &running);
		while ((msg = curl_multi_info_read(wk->multi, &n)) != NULL) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE,
			    (char **)&a);
			a->done = 1;
			a->res = msg->data.result;
		}
		left = deadline - clock_ms();
		if (running == 0 || left <= 0 || GET(m->stop))
			break;
		curl_multi_poll(wk->multi, NULL, 0, (int)(left < 1000 ? left :
		    1000), NULL);
	}
}

/* Does the answer say the upstream has no /metadata route: a 404 (a
 * symhubd before it), or elfutils' 503 for an unknown route (before
 * 0.192: "webapi error, unrecognized '/metadata'")? */
static int
no_metadata(long status, const struct ask *a)
{
	static const char unrecognized[] = "unrecognized '/metadata'";
	const char	*p = a->easy != NULL ? a->body : a->kbody;
	size_t		 len = a->easy != NULL ? a->len : a->klen;

	if (status == 404)
		return 1;
	return status == 503 && p != NULL &&
	    memmem(p, len, unrecognized, sizeof(unrecognized) - 1) != NULL;
}

/* Merge upstream i's answer (asked now, or kept) into mj. */
static int
ask_merge(struct meta *m, size_t i, const struct job *j, struct ask *a,
    struct metajson *mj, int *complete)
{
	struct fetch_upstream	 u;
	const char		*name = "?";
	char			*key;
	long			 status = a->status;
	long			 n;
	int			 up_complete = 0;

	if (fetch_upstream(m->f, i, &u) == 0)
		name = u.name;
	if (a->easy == NULL && status == 0)
		return 0;	/* not asked */
	if (a->easy != NULL) {
		if (!a->done || a->res != CURLE_OK) {
			log_debug("metadata %s=%s: upstream %s: %s",
			    j->q.keyname, j->q.value, name, !a->done ?
			    "no answer in time" : a->too_big ?
			    "answer too large" : curl_easy_strerror(a->res));
			INC(m->up_failed);
			*complete = 0;
			return 0;
		}
		curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &status);
	}
	if (no_metadata(status, a)) {
		/* No /metadata there: what it has is unknown, so the answer
		 * is not complete. */
		if (a->easy != NULL) {
			INC(m->up_notfound);
			if ((key = kept_key(i, &j->q)) != NULL)
				kept_put(m, key, 404, NULL, 0);
			free(key);
		}
		*complete = 0;
		return 0;
	}
	if (status != 200) {
		log_debug("metadata %s=%s: upstream %s answered %ld",
		    j->q.keyname, j->q.value, name, status);
		INC(m->up_failed);
		*complete = 0;
		return 0;
	}
	n = a->easy != NULL ? metajson_merge(mj, a->body ? a->body : "",
	    a->len, &up_complete) : metajson_merge(mj, a->kbody ? a->kbody :
	    "", a->klen, &up_complete);
	if (n == -ENOMEM)
		return -ENOMEM;
	if (n < 0) {
		log_warnx("metadata %s=%s: upstream %s: not a /metadata "
		    "answer", j->q.keyname, j->q.value, name);
		INC(m->up_failed);
		*complete = 0;
		return 0;
	}
	if (!up_complete)
		*complete = 0;
	if (a->easy != NULL) {
		INC(m->up_answers);
		if (up_complete && (key = kept_key(i, &j->q)) != NULL) {
			kept_put(m, key, 200, a->body, a->len);
			free(key);
		}
	}
	return 0;
}

static void
ask_free(struct worker *wk, struct ask *a)
{
	if (a->easy != NULL) {
		curl_multi_remove_handle(wk->multi, a->easy);
		curl_easy_cleanup(a->easy);
	}
	curl_slist_free_all(a->hdrs);
	free(a->body);
	free(a->kbody);
	memset(a, 0, sizeof(*a));
}

/*
 * A query, start to end.
 */

static void
job_free(struct job *j)
{
	if (j == NULL)
		return;
	free(j->value);
	free(j->ua);
	free(j->xff);
	free(j->peer);
	free(j->via);
	free(j);
}

static void
job_run(struct meta *m, struct worker *wk, struct job *j)
{
	struct metajson	*mj = NULL;
	struct ask	*asks = NULL;
	char		*buf = NULL;
	size_t		 i, len = 0, nup = j->ask && m->up_timeout_ms ? m->nup :
			    0;
	int64_t		 deadline;
	int		 complete = 1, rc;

	INC(m->queries);
	if ((rc = metajson_create(&mj)) < 0 ||
	    (nup > 0 && (asks = calloc(nup, sizeof(*asks))) == NULL)) {
		rc = -ENOMEM;
		goto out;
	}
	deadline = clock_ms() + m->up_timeout_ms;
	if (nup > 0 && ask_start(m, wk, j, asks, &complete) > 0)
		curl_multi_perform(wk->multi, &(int){ 0 });
	if ((rc = local(m, j, mj, &complete)) < 0)
		goto out;
	if (nup > 0) {
		/* The walk may have taken longer than the upstreams get:
		 * their transfers were not driven meanwhile, so they get at
		 * least a moment to be read. */
		if (deadline < clock_ms() + 100)
			deadline = clock_ms() + 100;
		ask_wait(m, wk, deadline);
	}
	for (i = 0; i < nup && rc == 0; i++)
		rc = ask_merge(m, i, j, &asks[i], mj, &complete);
	/* Cut short by a stop: "ask again", as a fetch cut short is, not
	 * whatever came in by then. */
	if (rc == 0 && GET(m->stop))
		rc = -ECANCELED;
	if (rc == 0) {
		if (metajson_full(mj))
			complete = 0;
		rc = metajson_finish(mj, complete, &buf, &len);
		mj = NULL;
	}
out:
	for (i = 0; asks != NULL && i < nup; i++)
		ask_free(wk, &asks[i]);
	free(asks);
	metajson_free(mj);
	j->done(j->ctx, rc, buf, len);
}

static void *
work(void *arg)
{
	struct worker	*wk = arg;
	struct meta	*m = wk->m;
	struct job	*j;

	for (;;) {
		pthread_mutex_lock(&m->mu);
		while (m->head == NULL && !GET(m->stop))
			pthread_cond_wait(&m->cv, &m->mu);
		if ((j = m->head) != NULL && !GET(m->stop)) {
			if ((m->head = j->next) == NULL)
				m->tail = &m->head;
		} else
			j = NULL;
		pthread_mutex_unlock(&m->mu);
		if (j == NULL)
			break;
		job_run(m, wk, j);
		job_free(j);
		pthread_mutex_lock(&m->mu);
		m->queued--;
		pthread_mutex_unlock(&m->mu);
	}
	return NULL;
}

/*
 * The API.
 */

int
meta_create(struct cache *c, struct fetch *f, const struct config *cfg,
    struct meta **out)
{
	struct meta	*m;
	int		 i;

	*out = NULL;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return -ENOMEM;
	m->c = c;
	m->f = f;
	m->nup = f != NULL ? fetch_upstreams(f) : 0;
	m->maxtime_ms = (int64_t)cfg->metadata_maxtime * 1000;
	m->up_timeout_ms = (int64_t)cfg->metadata_up_timeout * 1000;
	m->ttl_s = (int64_t)cfg->metadata_ttl;
	m->tail = &m->head;
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->cv, NULL);
	pthread_mutex_init(&m->kmu, NULL);
	for (i = 0; i < META_WORKERS; i++) {
		m->w[i].m = m;
		if ((m->w[i].multi = curl_multi_init()) == NULL)
			break;
		if (pthread_create(&m->w[i].th, NULL, work, &m->w[i]) != 0) {
			curl_multi_cleanup(m->w[i].multi);
			m->w[i].multi = NULL;
			break;
		}
		m->nw++;
	}
	if (m->nw == 0) {
		meta_free(m);
		return -EAGAIN;
	}
	*out = m;
	return 0;
}

int
meta_query(struct meta *m, const struct meta_query *q, meta_done_fn done,
    void *ctx)
{
	struct job	*j;
	int		 rc = 0;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -ENOMEM;
	j->q = q->q;
	j->ask = q->ask_upstreams && m->nup > 0;
	j->done = done;
	j->ctx = ctx;
	if ((j->value = strdup(q->q.value)) == NULL ||
	    (q->fed.user_agent && (j->ua = strdup(q->fed.user_agent)) ==
	    NULL) ||
	    (q->fed.forwarded_for && (j->xff = strdup(q->fed.forwarded_for))
	    == NULL) ||
	    (q->fed.peer && (j->peer = strdup(q->fed.peer)) == NULL) ||
	    (q->fed.via && (j->via = strdup(q->fed.via)) == NULL)) {
		job_free(j);
		return -ENOMEM;
	}
	j->q.value = j->value;
	pthread_mutex_lock(&m->mu);
	if (GET(m->stop))
		rc = -ECANCELED;
	else if (m->queued >= META_QUEUE_MAX)
		rc = -EBUSY;
	else {
		*m->tail = j;
		m->tail = &j->next;
		m->queued++;
		pthread_cond_signal(&m->cv);
	}
	pthread_mutex_unlock(&m->mu);
	if (rc < 0) {
		if (rc == -EBUSY)
			INC(m->busy);
		job_free(j);
	}
	return rc;
}

void
meta_stop(struct meta *m)
{
	struct job	*j, *next;
	int		 i;

	if (m == NULL)
		return;
	pthread_mutex_lock(&m->mu);
	if (GET(m->stop)) {
		pthread_mutex_unlock(&m->mu);
		return;
	}
	atomic_store(&m->stop, 1);
	pthread_cond_broadcast(&m->cv);
	j = m->head;
	m->head = NULL;
	m->tail = &m->head;
	pthread_mutex_unlock(&m->mu);
	for (i = 0; i < m->nw; i++)
		curl_multi_wakeup(m->w[i].multi);
	for (i = 0; i < m->nw; i++)
		pthread_join(m->w[i].th, NULL);
	for (; j != NULL; j = next) {
		next = j->next;
		j->done(j->ctx, -ECANCELED, NULL, 0);
		job_free(j);
	}
}

void
meta_free(struct meta *m)
{
	size_t	i;
	int	w;

	if (m == NULL)
		return;
	meta_stop(m);
	for (w = 0; w < META_WORKERS; w++)
		if (m->w[w].multi != NULL)
			curl_multi_cleanup(m->w[w].multi);
	for (i = 0; i < m->nkept; i++)
		kept_clear(&m->kept[i]);
	pthread_mutex_destroy(&m->mu);
	pthread_cond_destroy(&m->cv);
	pthread_mutex_destroy(&m->kmu);
	free(m);
}

void
meta_metrics(struct meta *m, FILE *fp)
{
	size_t		nkept;
	unsigned	queued;

	pthread_mutex_lock(&m->kmu);
	nkept = m->nkept;
	pthread_mutex_unlock(&m->kmu);
	pthread_mutex_lock(&m->mu);
	queued = m->queued;
	pthread_mutex_unlock(&m->mu);
	fprintf(fp,
	    "# HELP symhub_metadata_queries_total /metadata queries "
	    "answered\n"
	    "# TYPE symhub_metadata_queries_total counter\n"
	    "symhub_metadata_queries_total %" PRIuFAST64 "\n"
	    "# HELP symhub_metadata_busy_total /metadata queries refused: "
	    "too many at once\n"
	    "# TYPE symhub_metadata_busy_total counter\n"
	    "symhub_metadata_busy_total %" PRIuFAST64 "\n"
	    "# HELP symhub_metadata_walks_cut_total index walks that ran "
	    "out of --metadata-maxtime\n"
	    "# TYPE symhub_metadata_walks_cut_total counter\n"
	    "symhub_metadata_walks_cut_total %" PRIuFAST64 "\n"
	    "# HELP symhub_metadata_upstream_total upstream /metadata "
	    "answers, by outcome\n"
	    "# TYPE symhub_metadata_upstream_total counter\n"
	    "symhub_metadata_upstream_total{outcome=\"answer\"} %"
	    PRIuFAST64 "\n"
	    "symhub_metadata_upstream_total{outcome=\"notfound\"} %"
	    PRIuFAST64 "\n"
	    "symhub_metadata_upstream_total{outcome=\"failed\"} %"
	    PRIuFAST64 "\n"
	    "symhub_metadata_upstream_total{outcome=\"kept\"} %"
	    PRIuFAST64 "\n"
	    "# HELP symhub_metadata_kept upstream /metadata answers kept\n"
	    "# TYPE symhub_metadata_kept gauge\n"
	    "symhub_metadata_kept %zu\n"
	    "# HELP symhub_metadata_queued /metadata queries waiting or "
	    "running\n"
	    "# TYPE symhub_metadata_queued gauge\n"
	    "symhub_metadata_queued %u\n",
	    GET(m->queries), GET(m->busy), GET(m->walks_cut),
	    GET(m->up_answers), GET(m->up_notfound), GET(m->up_failed),
	    GET(m->up_kept), nkept, queued);
}
