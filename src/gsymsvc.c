/*
 * gsymsvc: conversions on worker threads, and open GSYM files with a
 * cache of decoded hot records.  See gsymsvc.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gsym_dwarf.h"
#include "gsymsvc.h"

#define NSHARDS		16
#define SHARD_BUDGET	(2u << 20)	/* decoded bytes kept per shard */
#define MAX_OPEN	8		/* GSYM files kept open */

struct waiter {
	gsymsvc_done_fn	 done;
	void		*ctx;
	struct waiter	*next;
};

struct job {
	unsigned char	 id[CACHE_ID_MAX];
	size_t		 idlen;
	int		 running;
	struct waiter	*waiters;
	struct job	*next;
};

struct hot {			/* one decoded record */
	uint32_t	 index;
	struct gsym_func *fn;
	struct hot	*next;
};

struct shard {
	pthread_mutex_t	 mu;
	struct hot	*head;	/* a short list per shard is enough: the
				 * shard is cleared when over budget */
	struct hot	**tab;
	size_t		 cap, n, bytes;
};

struct gsymsvc_file {
	struct gsymsvc	*s;
	unsigned char	 digest[32];
	struct gsym	*g;
	unsigned	 refs;
	uint64_t	 used;		/* LRU tick */
	struct shard	 shards[NSHARDS];
};

struct gsymsvc {
	struct cache		*c;
	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;
	struct job		*jobs;		/* queued and running */
	int			 stop;
	pthread_t		*threads;
	unsigned		 nthreads;
	unsigned		 convert_threads; /* a conversion's */
	struct gsymsvc_file	*open[MAX_OPEN];
	uint64_t		 tick;
	/* metrics */
	uint64_t		 n_ok, n_nodata, n_missing, n_error;
	uint64_t		 n_coalesced;
	double			 seconds;
	uint64_t		 hot_hits, hot_misses;
};

/* ---- conversions ---- */

static int64_t
now_s(void)
{
	return (int64_t)time(NULL);
}

static int
parent_of(struct gsymsvc *s, const unsigned char *id, size_t idlen,
    enum cache_kind kind, struct cache_record *rec)
{
	struct cache_key k = { kind, id, idlen, NULL };

	return cache_get(s->c, &k, now_s(), rec);
}

static int
blob_sink(void *ctx, const void *buf, size_t len)
{
	return cache_blob_write(ctx, buf, len);
}

/* Convert from the parent of kind, straight into a blob; store.
 * @return 0 or -errno. */
static int
convert_from(struct gsymsvc *s, const unsigned char *id, size_t idlen,
    enum cache_kind kind)
{
	struct cache_key key = { CACHE_GSYM, id, idlen, NULL };
	struct cache_record p, rec;
	struct cache_blob *b = NULL;
	int fd = -1, rc;

	if ((rc = parent_of(s, id, idlen, kind, &p)) != 0)
		return rc == -ENODATA ? -ENOENT : rc;
	if ((rc = cache_open_data(s->c, &p, &fd)) < 0 ||
	    (rc = cache_blob_create(s->c, &b)) < 0 ||
	    (rc = gsym_dwarf_convert(fd, s->convert_threads, blob_sink, b,
	    NULL)) < 0)
		goto out;
	memset(&rec, 0, sizeof(rec));
	rec.flags = CACHE_F_DERIVED;
	rec.parent = cache_fingerprint(&p);
	rec.stored = now_s();
	rec.last_modified = rec.stored;
	rec.origin = "gsym";
	rc = cache_put_blob(s->c, b, &key, &rec, NULL);
	b = NULL;	/* consumed */
out:
	cache_blob_abort(b);
	if (fd >= 0)
		close(fd);
	cache_record_release(&p);
	return rc;
}

static int
convert(struct gsymsvc *s, const unsigned char *id, size_t idlen)
{
	struct cache_key key = { CACHE_GSYM, id, idlen, NULL };
	struct cache_record rec;
	int rc, rc2;

	if (cache_get(s->c, &key, now_s(), &rec) == 0) {
		int fresh = cache_derived_fresh(s->c, id, idlen, &rec,
		    now_s());

		cache_record_release(&rec);
		if (fresh)
			return 0;
	}
	rc = convert_from(s, id, idlen, CACHE_DEBUGINFO);
	if (rc == -ENOENT || rc == -ENODATA) {
		/* An unstripped executable converts as well. */
		rc2 = convert_from(s, id, idlen, CACHE_EXECUTABLE);
		if (rc2 != -ENOENT)
			rc = rc2;
	}
	return rc;
}

static void *
worker(void *arg)
{
	struct gsymsvc *s = arg;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		struct job *j, **pp;
		struct waiter *w;
		struct timespec t0, t1;
		int rc;

		for (j = s->jobs; j != NULL && j->running; j = j->next)
			;
		if (j == NULL && !s->stop) {
			pthread_cond_wait(&s->cv, &s->mu);
			continue;
		}
		if (j == NULL)
			break;
		j->running = 1;
		pthread_mutex_unlock(&s->mu);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = s->stop ? -ECANCELED : convert(s, j->id, j->idlen);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		pthread_mutex_lock(&s->mu);
		s->seconds += (double)(t1.tv_sec - t0.tv_sec) +
		    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		if (rc == 0)
			s->n_ok++;
		else if (rc == -ENODATA)
			s->n_nodata++;
		else if (rc == -ENOENT)
			s->n_missing++;
		else
			s->n_error++;
		for (pp = &s->jobs; *pp != j; pp = &(*pp)->next)
			;
		*pp = j->next;
		w = j->waiters;
		pthread_mutex_unlock(&s->mu);
		while (w != NULL) {
			struct waiter *next = w->next;

			w->done(w->ctx, rc);
			free(w);
			w = next;
		}
		free(j);
		pthread_mutex_lock(&s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

int
gsymsvc_convert(struct gsymsvc *s, const unsigned char *id, size_t idlen,
    gsymsvc_done_fn done, void *ctx)
{
	struct waiter *w = NULL;
	struct job *j;

	if (idlen == 0 || idlen > CACHE_ID_MAX)
		return -EINVAL;
	if (done != NULL && (w = calloc(1, sizeof(*w))) == NULL)
		return -ENOMEM;
	if (w != NULL) {
		w->done = done;
		w->ctx = ctx;
	}
	pthread_mutex_lock(&s->mu);
	if (s->stop) {
		pthread_mutex_unlock(&s->mu);
		free(w);
		return -ECANCELED;
	}
	for (j = s->jobs; j != NULL; j = j->next)
		if (j->idlen == idlen && memcmp(j->id, id, idlen) == 0)
			break;
	if (j != NULL) {
		s->n_coalesced += w != NULL;
	} else {
		if ((j = calloc(1, sizeof(*j))) == NULL) {
			pthread_mutex_unlock(&s->mu);
			free(w);
			return -ENOMEM;
		}
		memcpy(j->id, id, idlen);
		j->idlen = idlen;
		j->next = s->jobs;
		s->jobs = j;
		pthread_cond_signal(&s->cv);
	}
	if (w != NULL) {
		w->next = j->waiters;
		j->waiters = w;
	}
	pthread_mutex_unlock(&s->mu);
	return 0;
}

/* ---- open files and hot records ---- */

static void
shard_clear(struct shard *sh)
{
	size_t i;

	for (i = 0; i < sh->cap; i++) {
		struct hot *h = sh->tab[i];

		while (h != NULL) {
			struct hot *next = h->next;

			gsym_func_free(h->fn);
			free(h);
			h = next;
		}
		sh->tab[i] = NULL;
	}
	sh->n = 0;
	sh->bytes = 0;
}

static void
file_free(struct gsymsvc_file *f)
{
	size_t i;

	if (f == NULL)
		return;
	for (i = 0; i < NSHARDS; i++) {
		shard_clear(&f->shards[i]);
		free(f->shards[i].tab);
		pthread_mutex_destroy(&f->shards[i].mu);
	}
	gsym_free(f->g);
	free(f);
}

int
gsymsvc_open(struct gsymsvc *s, const struct cache_record *rec,
    struct gsymsvc_file **out)
{
	struct gsymsvc_file *f = NULL;
	struct gsym *g;
	size_t i, victim = MAX_OPEN;
	int fd, rc;

	*out = NULL;
	pthread_mutex_lock(&s->mu);
	for (i = 0; i < MAX_OPEN; i++)
		if (s->open[i] != NULL &&
		    memcmp(s->open[i]->digest, rec->digest, 32) == 0) {
			f = s->open[i];
			f->refs++;
			f->used = ++s->tick;
			pthread_mutex_unlock(&s->mu);
			*out = f;
			return 0;
		}
	pthread_mutex_unlock(&s->mu);

	if ((rc = cache_open_data(s->c, rec, &fd)) < 0)
		return rc;
	rc = gsym_open_fd(fd, &g);
	close(fd);
	if (rc < 0)
		return rc;
	if ((f = calloc(1, sizeof(*f))) == NULL) {
		gsym_free(g);
		return -ENOMEM;
	}
	f->s = s;
	f->g = g;
	f->refs = 1;
	memcpy(f->digest, rec->digest, 32);
	for (i = 0; i < NSHARDS; i++)
		pthread_mutex_init(&f->shards[i].mu, NULL);

	pthread_mutex_lock(&s->mu);
	f->used = ++s->tick;
	for (i = 0; i < MAX_OPEN; i++) {
		if (s->open[i] == NULL) {
			victim = i;
			break;
		}
		if (s->open[i]->refs == 1 && (victim == MAX_OPEN ||
		    s->open[i]->used < s->open[victim]->used))
			victim = i;	/* only the table holds it */
	}
	if (victim < MAX_OPEN) {
		struct gsymsvc_file *old = s->open[victim];

		/* The table's reference. */
		f->refs++;
		s->open[victim] = f;
		if (old != NULL && --old->refs == 0)
			file_free(old);
	}
	pthread_mutex_unlock(&s->mu);
	*out = f;
	return 0;
}

void
gsymsvc_release(struct gsymsvc_file *f)
{
	struct gsymsvc *s;
	int last;

	if (f == NULL)
		return;
	s = f->s;
	pthread_mutex_lock(&s->mu);
	last = --f->refs == 0;
	pthread_mutex_unlock(&s->mu);
	if (last)
		file_free(f);
}

int
gsymsvc_lookup(struct gsymsvc_file *f, uint64_t addr, struct gsym_result *res)
{
	struct shard *sh;
	struct hot *h;
	struct gsym_func *fn;
	uint32_t idx;
	size_t slot;
	int rc;

	if ((rc = gsym_find(f->g, addr, &idx)) < 0)
		return rc;
	sh = &f->shards[idx % NSHARDS];
	pthread_mutex_lock(&sh->mu);
	if (sh->cap > 0) {
		slot = (idx / NSHARDS) % sh->cap;
		for (h = sh->tab[slot]; h != NULL; h = h->next)
			if (h->index == idx) {
				rc = gsym_func_lookup(f->g, h->fn, addr, res);
				pthread_mutex_unlock(&sh->mu);
				__atomic_add_fetch(&f->s->hot_hits, 1,
				    __ATOMIC_RELAXED);
				return rc;
			}
	}
	pthread_mutex_unlock(&sh->mu);
	__atomic_add_fetch(&f->s->hot_misses, 1, __ATOMIC_RELAXED);

	if ((rc = gsym_decode(f->g, idx, &fn)) < 0)
		return rc;
	rc = gsym_func_lookup(f->g, fn, addr, res);
	pthread_mutex_lock(&sh->mu);
	if (sh->bytes + gsym_func_size(fn) > SHARD_BUDGET)
		shard_clear(sh);
	if (sh->cap == 0) {
		sh->cap = 1024;
		if ((sh->tab = calloc(sh->cap, sizeof(*sh->tab))) == NULL)
			sh->cap = 0;
	}
	if (sh->cap > 0 && (h = malloc(sizeof(*h))) != NULL) {
		slot = (idx / NSHARDS) % sh->cap;
		h->index = idx;
		h->fn = fn;
		h->next = sh->tab[slot];
		sh->tab[slot] = h;
		sh->n++;
		sh->bytes += gsym_func_size(fn);
		fn = NULL;	/* now the cache's */
	}
	pthread_mutex_unlock(&sh->mu);
	gsym_func_free(fn);
	return rc;
}

/* ---- life cycle ---- */

int
gsymsvc_create(struct cache *c, unsigned workers, unsigned threads,
    struct gsymsvc **out)
{
	struct gsymsvc *s;
	unsigned i;

	*out = NULL;
	if (workers == 0)
		workers = 1;
	if ((s = calloc(1, sizeof(*s))) == NULL ||
	    (s->threads = calloc(workers, sizeof(*s->threads))) == NULL) {
		free(s);
		return -ENOMEM;
	}
	s->c = c;
	s->convert_threads = threads;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	for (i = 0; i < workers; i++) {
		if (pthread_create(&s->threads[i], NULL, worker, s) != 0)
			break;
		s->nthreads++;
	}
	if (s->nthreads == 0) {
		gsymsvc_free(s);
		return -EAGAIN;
	}
	*out = s;
	return 0;
}

void
gsymsvc_stop(struct gsymsvc *s)
{
	unsigned i;

	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	/* Workers drain the queue, answering -ECANCELED. */
	for (i = 0; i < s->nthreads; i++)
		pthread_join(s->threads[i], NULL);
	s->nthreads = 0;
}

void
gsymsvc_free(struct gsymsvc *s)
{
	unsigned i;

	if (s == NULL)
		return;
	gsymsvc_stop(s);
	for (i = 0; i < MAX_OPEN; i++)
		if (s->open[i] != NULL && --s->open[i]->refs == 0)
			file_free(s->open[i]);
	free(s->threads);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

void
gsymsvc_metrics(struct gsymsvc *s, FILE *fp)
{
	size_t queued = 0;
	struct job *j;

	pthread_mutex_lock(&s->mu);
	for (j = s->jobs; j != NULL; j = j->next)
		queued++;
	fprintf(fp,
	    "# HELP symhub_gsym_conversions_total DWARF to GSYM conversions "
	    "by outcome.\n"
	    "# TYPE symhub_gsym_conversions_total counter\n"
	    "symhub_gsym_conversions_total{result=\"ok\"} %" PRIu64 "\n"
	    "symhub_gsym_conversions_total{result=\"nothing\"} %" PRIu64 "\n"
	    "symhub_gsym_conversions_total{result=\"missing\"} %" PRIu64 "\n"
	    "symhub_gsym_conversions_total{result=\"error\"} %" PRIu64 "\n"
	    "# TYPE symhub_gsym_conversion_seconds_total counter\n"
	    "symhub_gsym_conversion_seconds_total %.3f\n"
	    "# TYPE symhub_gsym_coalesced_total counter\n"
	    "symhub_gsym_coalesced_total %" PRIu64 "\n"
	    "# TYPE symhub_gsym_jobs gauge\n"
	    "symhub_gsym_jobs %zu\n"
	    "# HELP symhub_gsym_record_cache_total Lookups answered from a "
	    "decoded record (hit) or by decoding one (miss).\n"
	    "# TYPE symhub_gsym_record_cache_total counter\n"
	    "symhub_gsym_record_cache_total{result=\"hit\"} %" PRIu64 "\n"
	    "symhub_gsym_record_cache_total{result=\"miss\"} %" PRIu64 "\n",
	    s->n_ok, s->n_nodata, s->n_missing, s->n_error, s->seconds,
	    s->n_coalesced, queued,
	    __atomic_load_n(&s->hot_hits, __ATOMIC_RELAXED),
	    __atomic_load_n(&s->hot_misses, __ATOMIC_RELAXED));
	pthread_mutex_unlock(&s->mu);
}
