/*
 * batch: many modules made ready at once, within a deadline.
 *
 * Each module goes: FileID mapped; a fresh stored GSYM opened; else the
 * stored debuginfo (or executable) converted; else the debuginfo fetched
 * from the upstreams, then converted; a conversion that finds nothing in
 * a lone executable asks the upstreams for the debuginfo, as GET .../gsym
 * does (route_gsym.c).  Each step is tried once per module.
 *
 * Threads: the caller steps a batch on its own thread; fetch and derive
 * callbacks note what ended under the batch's lock and wake the caller,
 * which does the work on its next step.  A batch is counted: its owner
 * holds one reference and every fetch or conversion in flight one, so a
 * callback that ends after the answer finds it still there.  The timer
 * thread walks the engine's list (its own lock, taken before a batch's)
 * and wakes the batches whose deadline passed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/hex.h"
#include "batch.h"
#include "log.h"
#include "records.h"

/* What a module's step needs of the last thing in flight. */
struct bmod {
	struct batch	*b;
	size_t		 i;
	/* Under b->mu. */
	int		 inflight;
	int		 ev_fetch;	/* a fetch ended: fres */
	enum fetch_result fres;
	int		 ev_convert;	/* a conversion ended: crc */
	int		 crc;
	/* The stepping thread's own. */
	int		 fetched;	/* asked the upstreams */
	int		 got;		/* ... and they sent a debuginfo */
	int		 fetched_exe;	/* asked them for the executable */
	int		 converts;	/* conversions started */
	int		 loads_read;
	char		 idhex[2 * CACHE_ID_MAX + 1];	/* fetches' */
	int		 what;		/* in flight: 'f'etch the debuginfo,
					 * 'x' the executable, 'c'onvert */
};

struct batch {
	struct batches		*e;
	struct batch		*prev, *next;	/* e's list, under e->mu */
	struct batch_module	*mods;
	struct bmod		*bm;
	size_t			 n;
	int64_t			 deadline;	/* clock_us() */
	struct fetch_req	 fr;
	int			 may_fetch;
	char			 ua[256], xff[512], peer[64], via[256];
	char			 reader[64];	/* the token's name, or "" */
	batch_wake_fn		 wake;
	void			*ctx;
	pthread_mutex_t		 mu;
	/* Under mu. */
	int			 refs;
	int			 waiting;	/* the caller waits for wake */
	int			 events;	/* since the last step */
	int			 expired;
	int			 closed;
};

struct batches {
	struct cache	*c;
	struct scan	*s;
	struct derive	*dv;
	struct fetch	*f;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	pthread_t	 timer;
	int		 stop;
	struct batch	*list;
	/* Under mu: counts for /metrics. */
	uint64_t	 nbatches, expired;
	uint64_t	 nstatus[BATCH_ERROR + 1];
};

static const char *const status_names[] = {
	[BATCH_PENDING] = "pending",
	[BATCH_READY] = "symbolized",
	[BATCH_NO_DEBUGINFO] = "no_debuginfo",
	[BATCH_UNKNOWN_FILEID] = "unknown_fileid",
	[BATCH_UPSTREAM_FAILED] = "upstream_failed",
	[BATCH_TIMEOUT] = "timeout",
	[BATCH_NOTHING] = "no_symbols",
	[BATCH_CONVERSION_FAILED] = "conversion_failed",
	[BATCH_ERROR] = "error",
};

const char *
batch_status_name(enum batch_status st)
{
	return (unsigned)st <= BATCH_ERROR ? status_names[st] : "error";
}

/* ---- references and events ---- */

static void
batch_destroy(struct batch *b)
{
	pthread_mutex_destroy(&b->mu);
	free(b->bm);
	free(b);
}

/* Drop a reference, b->mu held (released here). */
static void
unref_locked(struct batch *b)
{
	int last = --b->refs == 0;

	pthread_mutex_unlock(&b->mu);
	if (last)
		batch_destroy(b);
}

/*
 * Something in flight for m ended: its result noted under the lock, in
 * the same section that clears inflight (so that a step never sees the
 * module idle without its result), the caller woken.
 */
static void
ended(struct bmod *m, int is_fetch, enum fetch_result fres, int crc)
{
	struct batch	*b = m->b;
	int		 wake = 0;

	pthread_mutex_lock(&b->mu);
	if (is_fetch) {
		m->fres = fres;
		m->ev_fetch = 1;
	} else {
		m->crc = crc;
		m->ev_convert = 1;
	}
	m->inflight = 0;
	b->events++;
	if (b->waiting && !b->closed) {
		b->waiting = 0;
		wake = 1;
	}
	/* Our reference keeps b while the caller is woken. */
	pthread_mutex_unlock(&b->mu);
	if (wake)
		b->wake(b->ctx);
	pthread_mutex_lock(&b->mu);
	unref_locked(b);
}

static void
fetched(void *ctx, enum fetch_result res, const char *from,
    const struct fetch_served *served)
{
	(void)from;
	(void)served;	/* never asked for: want_bytes 0 */
	ended(ctx, 1, res, 0);
}

static void
converted(void *ctx, int rc)
{
	ended(ctx, 0, FETCH_OK, rc);
}

/* ---- the steps of one module ---- */

/* The module's GSYM, stored and fresh or just converted unstored.
 * @return 0 with mod->gf; -ENOENT: none yet; -errno. */
static int
open_gsym(struct batches *e, struct batch_module *mod)
{
	struct cache_record	rec;
	struct cache_key	k = { CACHE_GSYM, mod->bid, mod->bidlen, NULL };
	struct derive_gsym	*gf = NULL;
	int			rc, fd = -1;

	if ((rc = derive_open(e->dv, &k, &rec, NULL, &mod->gf)) == 0) {
		cache_record_release(&rec);
		return 0;
	}
	if (rc != -ESTALE && rc != -ENOENT && rc != -ENODATA)
		return rc;
	if (derive_gsym_unstored(e->dv, mod->bid, mod->bidlen, &rec, &fd,
	    &gf) != 0)
		return -ENOENT;
	mod->gf = gf;
	return 0;
}

/* The program headers, from the debuginfo, else from the executable; to
 * map offsets, only those of a file with its code (elfinfo_loads_map()).
 * @return 0 (mod->nloads set); -ENOENT: no file here has them. */
static int
read_loads(struct batches *e, struct batch_module *mod)
{
	static const enum cache_kind kinds[] = { CACHE_DEBUGINFO,
	    CACHE_EXECUTABLE };
	struct cache_record	rec;
	size_t			i;
	int			rc, fd;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		struct cache_key k = { kinds[i], mod->bid, mod->bidlen, NULL };

		if (records_open(e->c, e->s, &k, &rec, &fd) != 0)
			continue;
		rc = elfinfo_loads(fd, mod->loads);
		close(fd);
		cache_record_release(&rec);
		if (rc > 0 && (mod->want_loads != BATCH_LOADS_MAP ||
		    elfinfo_loads_map(mod->loads, (size_t)rc))) {
			mod->nloads = (size_t)rc;
			return 0;
		}
	}
	return -ENOENT;
}

/* The build-id of a module named by the first bytes of one: a stored
 * file's, else those bytes themselves.  @return 0. */
static int
find_prefix(struct batches *e, struct batch_module *mod)
{
	static const enum cache_kind kinds[] = { CACHE_DEBUGINFO,
	    CACHE_EXECUTABLE, CACHE_GSYM };
	size_t	i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (cache_find_prefix(e->c, kinds[i], mod->id, mod->idlen,
		    mod->bid, &mod->bidlen) == 0)
			return 0;
	/* Not here: ask for the bytes as they are (a build-id of exactly
	 * that length can match; a shorter one's padding is not told from a
	 * longer one's zeros). */
	memcpy(mod->bid, mod->id, mod->idlen);
	mod->bidlen = mod->idlen;
	return 0;
}

static void
settle(struct batch_module *mod, enum batch_status st, const char *why)
{
	mod->status = st;
	mod->why = why;
}

/* Start something for m (what 'f' or 'c'); 1 when in flight, 0 when it
 * could not start (the module is settled). */
static int
start(struct batch *b, struct bmod *m, int what)
{
	struct batch_module	*mod = &b->mods[m->i];
	int			 rc;

	pthread_mutex_lock(&b->mu);
	m->inflight = 1;
	b->refs++;
	pthread_mutex_unlock(&b->mu);
	m->what = what;
	if (what == 'f' || what == 'x') {
		struct fetch_req fr = b->fr;

		fr.key.kind = what == 'f' ? CACHE_DEBUGINFO : CACHE_EXECUTABLE;
		fr.key.id = mod->bid;
		fr.key.idlen = mod->bidlen;
		fr.key.extra = NULL;
		hex_encode(mod->bid, mod->bidlen, m->idhex);
		fr.idhex = m->idhex;
		if (what == 'f')
			m->fetched = 1;
		else
			m->fetched_exe = 1;
		rc = fetch_request(b->e->f, &fr, fetched, m);
	} else {
		m->converts++;
		rc = derive_gsym_convert(b->e->dv, mod->bid, mod->bidlen,
		    converted, m);
	}
	if (rc == 0)
		return 1;
	pthread_mutex_lock(&b->mu);
	m->inflight = 0;
	b->refs--;	/* never the last: the owner holds one */
	pthread_mutex_unlock(&b->mu);
	if (what == 'x' && rc != -ECANCELED) {
		/* Its GSYM is open: answer without offsets mapped. */
		m->loads_read = 1;
		settle(mod, BATCH_READY, NULL);
		mod->how = m->converts == 0 ? "stored" : "converted";
		return 0;
	}
	if (rc != -ECANCELED)
		log_warnx("batch: cannot %s: %s", what == 'c' ? "convert" :
		    "ask upstreams", strerror(-rc));
	settle(mod, BATCH_ERROR, rc == -ECANCELED ? "shutting down" :
	    "cannot start");
	return 0;
}

/* What a conversion's end says, when it did not store a GSYM. */
static void
convert_failed(struct batch_module *mod, int rc)
{
	switch (rc) {
	case 0:		/* stored, then evicted or changed again */
	case -ENOENT:	/* the parent went away meanwhile */
		settle(mod, BATCH_NO_DEBUGINFO, "its debuginfo went away");
		break;
	case -ENODATA:
		settle(mod, BATCH_NOTHING,
		    "its files have no DWARF or symbol table");
		break;
	case -ENOEXEC:
		settle(mod, BATCH_CONVERSION_FAILED,
		    "its debuginfo is not ELF, or its DWARF is corrupt");
		break;
	case -ECANCELED:
		settle(mod, BATCH_ERROR, "shutting down");
		break;
	default:
		settle(mod, BATCH_CONVERSION_FAILED,
		    "conversion to GSYM failed");
		break;
	}
}

/* Step one pending module that has nothing in flight. @return 1 when it
 * now has. */
static int
step_module(struct batch *b, struct bmod *m, int ev_fetch,
    enum fetch_result fres, int ev_convert, int crc, int expired)
{
	struct batches		*e = b->e;
	struct batch_module	*mod = &b->mods[m->i];
	int			 rc, can_fetch;

	if (mod->bidlen == 0) {
		if (mod->by_prefix) {
			find_prefix(e, mod);
		} else if (!mod->by_fileid) {
			memcpy(mod->bid, mod->id, mod->idlen);
			mod->bidlen = mod->idlen;
		} else if (mod->idlen != CACHE_FILEID_LEN ||
		    cache_fileid_get(e->c, mod->id, mod->bid,
		    &mod->bidlen) < 0) {
			mod->bidlen = 0;
			settle(mod, BATCH_UNKNOWN_FILEID,
			    "no upload maps this FileID to a build-id");
			return 0;
		}
		/* Another tenant's private upload is not here. */
		if (!records_may_read(e->c, mod->bid, mod->bidlen,
		    b->reader)) {
			settle(mod, BATCH_NO_DEBUGINFO, "not found");
			return 0;
		}
	}
	if (e->dv == NULL) {
		settle(mod, BATCH_ERROR, "GSYM is disabled");
		return 0;
	}
	if (ev_fetch && mod->gf == NULL) {
		if (fres == FETCH_NOTFOUND) {
			settle(mod, BATCH_NO_DEBUGINFO,
			    "no debuginfo here or upstream");
			return 0;
		}
		if (fres != FETCH_OK) {
			settle(mod, BATCH_UPSTREAM_FAILED, "the upstreams "
			    "timed out or failed; ask again later");
			return 0;
		}
		m->got = 1;
	}
	can_fetch = b->may_fetch && e->f != NULL && !m->fetched;
	if (mod->gf == NULL && (rc = open_gsym(e, mod)) != 0 &&
	    rc != -ENOENT) {
		/* derive_gsym_open() logged why, once. */
		settle(mod, BATCH_ERROR, "cannot read the GSYM");
		return 0;
	}
	if (mod->gf == NULL && ev_convert) {
		/* A lone executable with nothing in it: the debuginfo may
		 * be upstream. */
		if (crc == -ENODATA && can_fetch &&
		    !records_have(e->c, CACHE_DEBUGINFO, mod->bid,
		    mod->bidlen)) {
			if (!expired)
				return start(b, m, 'f');
			settle(mod, BATCH_TIMEOUT,
			    "not fetched by the deadline");
			return 0;
		}
		convert_failed(mod, crc);
		return 0;
	}
	if (mod->gf == NULL) {
		if ((m->converts == 0 || m->got) &&
		    (records_have(e->c, CACHE_DEBUGINFO, mod->bid,
		    mod->bidlen) || records_have(e->c, CACHE_EXECUTABLE,
		    mod->bid, mod->bidlen))) {
			m->got = 0;
			if (!expired)
				return start(b, m, 'c');
			/* Converted anyway, for the next request. */
			(void)derive_gsym_convert(e->dv, mod->bid, mod->bidlen,
			    NULL, NULL);
			settle(mod, BATCH_TIMEOUT,
			    "not converted by the deadline");
		} else if (can_fetch && !expired) {
			return start(b, m, 'f');
		} else if (can_fetch) {
			settle(mod, BATCH_TIMEOUT,
			    "not fetched by the deadline");
		} else {
			settle(mod, BATCH_NO_DEBUGINFO, m->fetched ?
			    "no debuginfo here or upstream" :
			    "no debuginfo here");
		}
		return 0;
	}
	/* Its GSYM is open.  File offsets need its program headers, which
	 * only a file with its code has: ask for the executable. */
	if (mod->want_loads && !m->loads_read) {
		if (read_loads(e, mod) == 0 || m->fetched_exe ||
		    !b->may_fetch || e->f == NULL || expired)
			m->loads_read = 1;
		else
			return start(b, m, 'x');
	}
	settle(mod, BATCH_READY, NULL);
	mod->how = m->converts == 0 ? "stored" : m->fetched ?
	    "fetched, converted" : "converted";
	return 0;
}

int
batch_step(struct batch *b)
{
	size_t	i;
	int	expired, inflight = 0;

	pthread_mutex_lock(&b->mu);
	b->events = 0;
	if (!b->expired && clock_us() >= b->deadline)
		b->expired = 1;
	expired = b->expired;
	pthread_mutex_unlock(&b->mu);
	for (i = 0; i < b->n; i++) {
		struct bmod		*m = &b->bm[i];
		struct batch_module	*mod = &b->mods[i];
		enum fetch_result	 fres;
		int			 busy, evf, evc, crc;

		if (mod->status != BATCH_PENDING)
			continue;
		pthread_mutex_lock(&b->mu);
		busy = m->inflight;
		evf = evc = crc = 0;
		fres = FETCH_OK;
		if (!busy) {
			evf = m->ev_fetch;
			evc = m->ev_convert;
			fres = m->fres;
			crc = m->crc;
			m->ev_fetch = m->ev_convert = 0;
		}
		pthread_mutex_unlock(&b->mu);
		if (busy && expired) {
			/* It goes on, for the next request. */
			settle(mod, BATCH_TIMEOUT, m->what == 'c' ?
			    "still converting at the deadline" :
			    "still fetching at the deadline");
			continue;
		}
		if (busy)
			inflight = 1;
		else if (step_module(b, m, evf, fres, evc, crc, expired))
			inflight = 1;
	}
	return inflight;
}

int
batch_wait(struct batch *b)
{
	int	wait;

	pthread_mutex_lock(&b->mu);
	wait = b->events == 0 && !b->expired;
	b->waiting = wait;
	pthread_mutex_unlock(&b->mu);
	return wait;
}

/* ---- the engine and its timer ---- */

static void *
timer_main(void *arg)
{
	struct batches	*e = arg;
	struct batch	*b, *due;
	int64_t		 now, next;

	pthread_mutex_lock(&e->mu);
	for (;;) {
		now = clock_us();
		next = INT64_MAX;
		due = NULL;
		for (b = e->list; b != NULL; b = b->next) {
			pthread_mutex_lock(&b->mu);
			if (!b->expired && (b->deadline <= now || e->stop)) {
				b->expired = 1;
				if (b->waiting) {
					b->waiting = 0;
					b->refs++;
					due = b;
				}
			} else if (!b->expired && b->deadline < next) {
				next = b->deadline;
			}
			pthread_mutex_unlock(&b->mu);
			if (due != NULL)
				break;
		}
		if (due != NULL) {
			/* Woken outside every lock; our reference keeps it. */
			pthread_mutex_unlock(&e->mu);
			due->wake(due->ctx);
			pthread_mutex_lock(&due->mu);
			unref_locked(due);
			pthread_mutex_lock(&e->mu);
			continue;
		}
		if (e->stop)
			break;
		if (next == INT64_MAX) {
			pthread_cond_wait(&e->cv, &e->mu);
		} else {
			struct timespec ts = clock_deadline(
			    (next - now + 999) / 1000);

			pthread_cond_timedwait(&e->cv, &e->mu, &ts);
		}
	}
	pthread_mutex_unlock(&e->mu);
	return NULL;
}

int
batches_create(struct cache *c, struct scan *s, struct derive *dv,
    struct fetch *f, struct batches **out)
{
	struct batches	*e;
	int		 rc;

	*out = NULL;
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return -ENOMEM;
	e->c = c;
	e->s = s;
	e->dv = dv;
	e->f = f;
	pthread_mutex_init(&e->mu, NULL);
	pthread_cond_init(&e->cv, NULL);
	if ((rc = pthread_create(&e->timer, NULL, timer_main, e)) != 0) {
		pthread_mutex_destroy(&e->mu);
		pthread_cond_destroy(&e->cv);
		free(e);
		return -rc;
	}
	*out = e;
	return 0;
}

void
batches_free(struct batches *e)
{
	if (e == NULL)
		return;
	pthread_mutex_lock(&e->mu);
	e->stop = 1;
	pthread_cond_signal(&e->cv);
	pthread_mutex_unlock(&e->mu);
	pthread_join(e->timer, NULL);
	pthread_mutex_destroy(&e->mu);
	pthread_cond_destroy(&e->cv);
	free(e);
}

/* Copy a header's value into buf, or NULL when there is none. */
static const char *
keep(char *buf, size_t len, const char *v)
{
	if (v == NULL)
		return NULL;
	snprintf(buf, len, "%s", v);
	return buf;
}

int
batch_create(struct batches *e, struct batch_module *mods, size_t n,
    int64_t deadline_us, const struct fetch_req *fr, const char *reader,
    batch_wake_fn wake, void *ctx, struct batch **out)
{
	struct batch	*b;
	size_t		 i;

	*out = NULL;
	if ((b = calloc(1, sizeof(*b))) == NULL ||
	    (n > 0 && (b->bm = calloc(n, sizeof(*b->bm))) == NULL)) {
		free(b);
		return -ENOMEM;
	}
	b->e = e;
	b->mods = mods;
	b->n = n;
	b->deadline = deadline_us;
	b->wake = wake;
	b->ctx = ctx;
	b->refs = 1;
	(void)keep(b->reader, sizeof(b->reader), reader);
	pthread_mutex_init(&b->mu, NULL);
	for (i = 0; i < n; i++) {
		b->bm[i].b = b;
		b->bm[i].i = i;
		mods[i].status = mods[i].hidden ? BATCH_NO_DEBUGINFO :
		    BATCH_PENDING;
		mods[i].how = NULL;
		mods[i].why = mods[i].hidden ? "not found" : NULL;
		mods[i].gf = NULL;
		mods[i].nloads = 0;
		mods[i].bidlen = 0;
	}
	if (fr != NULL) {
		b->may_fetch = 1;
		b->fr.user_agent = keep(b->ua, sizeof(b->ua), fr->user_agent);
		b->fr.forwarded_for = keep(b->xff, sizeof(b->xff),
		    fr->forwarded_for);
		b->fr.peer = keep(b->peer, sizeof(b->peer), fr->peer);
		b->fr.via = keep(b->via, sizeof(b->via), fr->via);
		b->fr.maxsize = fr->maxsize;
	}
	pthread_mutex_lock(&e->mu);
	b->next = e->list;
	if (e->list != NULL)
		e->list->prev = b;
	e->list = b;
	e->nbatches++;
	pthread_cond_signal(&e->cv);
	pthread_mutex_unlock(&e->mu);
	*out = b;
	return 0;
}

void
batch_free(struct batch *b)
{
	struct batches	*e;
	size_t		 i;
	int		 late;

	if (b == NULL)
		return;
	e = b->e;
	pthread_mutex_lock(&e->mu);
	if (b->prev != NULL)
		b->prev->next = b->next;
	else
		e->list = b->next;
	if (b->next != NULL)
		b->next->prev = b->prev;
	for (i = 0, late = 0; i < b->n; i++) {
		e->nstatus[b->mods[i].status]++;
		late |= b->mods[i].status == BATCH_TIMEOUT;
	}
	e->expired += late;
	pthread_mutex_unlock(&e->mu);
	for (i = 0; i < b->n; i++) {
		derive_gsym_release(b->mods[i].gf);
		b->mods[i].gf = NULL;
	}
	pthread_mutex_lock(&b->mu);
	b->closed = 1;
	b->waiting = 0;
	unref_locked(b);
}

void
batches_stats(struct batches *e, uint64_t *requests, uint64_t *expired,
    uint64_t *modules, uint64_t *ready)
{
	enum batch_status st;

	*requests = *expired = *modules = *ready = 0;
	if (e == NULL)
		return;
	pthread_mutex_lock(&e->mu);
	*requests = e->nbatches;
	*expired = e->expired;
	for (st = BATCH_READY; st <= BATCH_ERROR; st++)
		*modules += e->nstatus[st];
	*ready = e->nstatus[BATCH_READY];
	pthread_mutex_unlock(&e->mu);
}

void
batches_metrics(struct batches *e, FILE *fp)
{
	enum batch_status	st;

	if (e == NULL)
		return;
	pthread_mutex_lock(&e->mu);
	fprintf(fp, "# HELP symhub_batch_requests_total Multi-module "
	    "symbolization requests.\n"
	    "# TYPE symhub_batch_requests_total counter\n"
	    "symhub_batch_requests_total %llu\n"
	    "# HELP symhub_batch_deadlines_total Requests whose deadline "
	    "passed before every module was ready.\n"
	    "# TYPE symhub_batch_deadlines_total counter\n"
	    "symhub_batch_deadlines_total %llu\n"
	    "# HELP symhub_batch_modules_total Modules of those requests, "
	    "by how each ended.\n"
	    "# TYPE symhub_batch_modules_total counter\n",
	    (unsigned long long)e->nbatches, (unsigned long long)e->expired);
	for (st = BATCH_READY; st <= BATCH_ERROR; st++)
		fprintf(fp, "symhub_batch_modules_total{status=\"%s\"} %llu\n",
		    status_names[st], (unsigned long long)e->nstatus[st]);
	pthread_mutex_unlock(&e->mu);
}
