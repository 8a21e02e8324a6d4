/*
 * encode: compressed copies (see encode.h).
 *
 * Threads: HTTP workers look copies up (encode_lookup, the store only)
 * and queue jobs (encode_request); one worker thread compresses, one
 * file at a time, the waiters of a (key, coding) joined in one job.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <zlib.h>
#include <zstd.h>

#include "base/clock.h"
#include "base/counter.h"
#include "base/hex.h"
#include "base/strmap.h"
#include "common/kind.h"
#include "encode.h"
#include "log.h"
#include "records.h"

#define IN_CHUNK	(256u << 10)
/* A copy must save this fraction of the bytes to be worth sending. */
#define WORTH_NUM	9
#define WORTH_DEN	10

struct waiter {
	struct waiter	*next;
	encode_done_fn	 done;
	void		*ctx;
};

struct job {
	struct job		*next;
	enum cache_kind		 kind;
	unsigned char		 id[CACHE_ID_MAX];
	size_t			 idlen;
	unsigned		 coding;
	int			 running;
	struct waiter		*waiters;
};

struct encode {
	struct cache		*c;
	struct scan		*s;
	unsigned		 offered;
	int			 level;
	pthread_t		 th;
	int			 started;
	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;
	struct job		*jobs;		/* oldest first */
	unsigned		 njobs;
	int			 stop;
	/* The second pass: copies made again at best, in the background. */
	int			 best;		/* 0: none */
	pthread_t		 ith;
	int			 istarted;
	pthread_cond_t		 icv;
	struct job		*improve, **itail;
	unsigned		 nimprove;
	struct strmap		 tried;		/* see improve_push() */
	int			 improving;	/* one is being made */
	/* Metrics. */
	atomic_uint_fast64_t	 made[3], flat[3], failed, busy;
	atomic_uint_fast64_t	 in_bytes, out_bytes, usec;
	atomic_uint_fast64_t	 improved[3], kept, idropped, iusec, saved;
	atomic_uint_fast64_t	 sent[3], sent_bytes[3];	/* 0: identity */
};

static int	best_for(const struct encode *, unsigned);
static void	improve_push(struct encode *, enum cache_kind,
		    const unsigned char *, size_t, unsigned, int, uint64_t);


/* Index into the metrics arrays: 1 zstd, 2 gzip, 0 identity. */
static int
slot(unsigned coding)
{
	return coding == WEBAPI_ENC_ZSTD ? 1 : coding == WEBAPI_ENC_GZIP ? 2 :
	    0;
}

const char *
encode_name(unsigned coding)
{
	return coding == WEBAPI_ENC_ZSTD ? "zstd" :
	    coding == WEBAPI_ENC_GZIP ? "gzip" : "identity";
}

/* The key of key's copy in coding; extra in buf. */
static void
encoded_key(const struct cache_key *key, unsigned coding, char *buf,
    size_t len, struct cache_key *out)
{
	snprintf(buf, len, "%s:%s", encode_name(coding), kind_name(key->kind));
	out->kind = CACHE_ENCODED;
	out->id = key->id;
	out->idlen = key->idlen;
	out->extra = buf;
}

int
encode_lookup(struct encode *e, const struct cache_key *key,
    const struct cache_record *rec, unsigned coding,
    struct cache_record *erec, int *fd)
{
	struct cache_key	ek;
	char			extra[32];
	int			rc;

	encoded_key(key, coding, extra, sizeof(extra), &ek);
	if ((rc = cache_get(e->c, &ek, clock_wall_s(), erec)) != 0)
		return rc == -ENODATA ? -ENOENT : rc;
	if (erec->parent != cache_fingerprint(rec)) {
		cache_record_release(erec);
		return -ENOENT;		/* made from other bytes */
	}
	if (erec->size == 0) {
		cache_record_release(erec);
		return -ENODATA;
	}
	if ((rc = cache_open_data(e->c, erec, fd)) < 0) {
		cache_record_release(erec);
		/* Gone (evicted meanwhile, or damaged): made again. */
		if (rc == -ENOENT || rc == -EIO) {
			cache_drop(e->c, &ek);
			return -ENOENT;
		}
		return rc;
	}
	cache_touch(e->c, &ek, erec, clock_wall_s());
	/* Made at a lower level, by an earlier run say. */
	if ((int)erec->quality < best_for(e, coding))
		improve_push(e, key->kind, key->id, key->idlen, coding,
		    (int)erec->quality, erec->parent);
	return 0;
}

/* ---- compressing ---- */

static int
stopping(struct encode *e)
{
	return __atomic_load_n(&e->stop, __ATOMIC_RELAXED);
}

/* Read the next IN_CHUNK bytes at most of the *left still to come.
 * @return how many (0 when none are left), or -errno (-EBADMSG: the file
 *         ended early). */
static ssize_t
next_chunk(int fd, void *buf, uint64_t *left)
{
	ssize_t	n;

	if (*left == 0)
		return 0;
	n = read(fd, buf, *left < IN_CHUNK ? (size_t)*left : IN_CHUNK);
	if (n <= 0)
		return n == 0 ? -EBADMSG : -errno;
	*left -= (uint64_t)n;
	return n;
}

/* Compress fd's size bytes into b.  @return the compressed size, or
 * -errno (-EBADMSG: fd ended early). */
static int64_t
zstd_into(struct encode *e, int fd, uint64_t size, struct cache_blob *b,
    int level, int threads)
{
	ZSTD_CCtx	*z;
	ZSTD_inBuffer	 in;
	ZSTD_outBuffer	 out;
	char		*ibuf = NULL, *obuf = NULL;
	size_t		 olen = ZSTD_CStreamOutSize(), r;
	uint64_t	 left = size;
	int64_t		 total = 0;
	ssize_t		 n;
	int		 rc = 0, last;

	if ((z = ZSTD_createCCtx()) == NULL ||
	    (ibuf = malloc(IN_CHUNK)) == NULL ||
	    (obuf = malloc(olen)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 1);
	ZSTD_CCtx_setPledgedSrcSize(z, size);
	/* No-op without libzstd's multithreading. */
	if (threads > 1 && size >= (4u << 20))
		ZSTD_CCtx_setParameter(z, ZSTD_c_nbWorkers, threads);
	do {
		if (stopping(e)) {
			rc = -ECANCELED;
			goto out;
		}
		if ((n = next_chunk(fd, ibuf, &left)) < 0) {
			rc = (int)n;
			goto out;
		}
		last = left == 0;
		in.src = ibuf;
		in.size = (size_t)n;
		in.pos = 0;
		do {
			out.dst = obuf;
			out.size = olen;
			out.pos = 0;
			r = ZSTD_compressStream2(z, &out, &in, last ?
			    ZSTD_e_end : ZSTD_e_continue);
			if (ZSTD_isError(r)) {
				log_warnx("zstd: %s", ZSTD_getErrorName(r));
				rc = -EIO;
				goto out;
			}
			if (out.pos > 0 && (rc = cache_blob_write(b, obuf,
			    out.pos)) < 0)
				goto out;
			total += (int64_t)out.pos;
		} while (last ? r != 0 : in.pos < in.size);
	} while (!last);
out:
	ZSTD_freeCCtx(z);
	free(ibuf);
	free(obuf);
	return rc < 0 ? rc : total;
}

static int64_t
gzip_into(struct encode *e, int fd, uint64_t size, struct cache_blob *b,
    int level)
{
	z_stream	 z;
	unsigned char	*ibuf = NULL, *obuf = NULL;
	uint64_t	 left = size;
	int64_t		 total = 0;
	ssize_t		 n;
	int		 rc = 0, zr, flush;
	const size_t	 olen = IN_CHUNK;

	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip wrapper, not zlib's. */
	if (deflateInit2(&z, level > 9 ? 9 : level, Z_DEFLATED, 15 + 16,
	    8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	if ((ibuf = malloc(IN_CHUNK)) == NULL ||
	    (obuf = malloc(olen)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	do {
		if (stopping(e)) {
			rc = -ECANCELED;
			goto out;
		}
		if ((n = next_chunk(fd, ibuf, &left)) < 0) {
			rc = (int)n;
			goto out;
		}
		flush = left == 0 ? Z_FINISH : Z_NO_FLUSH;
		z.next_in = ibuf;
		z.avail_in = (uInt)n;
		do {
			z.next_out = obuf;
			z.avail_out = (uInt)olen;
			zr = deflate(&z, flush);
			if (zr == Z_STREAM_ERROR) {
				rc = -EIO;
				goto out;
			}
			if (olen - z.avail_out > 0 && (rc = cache_blob_write(b,
			    obuf, olen - z.avail_out)) < 0)
				goto out;
			total += (int64_t)(olen - z.avail_out);
		} while (z.avail_out == 0);
	} while (flush != Z_FINISH);
out:
	deflateEnd(&z);
	free(ibuf);
	free(obuf);
	return rc < 0 ? rc : total;
}

/* Store an improved copy only over the copy it improves on (decided in
 * the store's write transaction: a request may have replaced it). */
static int
smaller(void *ctx, const struct cache_record *old,
    const struct cache_record *rec)
{
	(void)ctx;
	return old != NULL && old->parent == rec->parent && old->size > 0 &&
	    old->size > rec->size;
}


/*
 * Make and store j's copy at level: the first one (improving 0), for
 * requests waiting, or a better one over a copy made at a lower level
 * (improving 1), in the background.  @return 0 or -errno.
 */
static int
make(struct encode *e, const struct job *j, int level, int improving)
{
	struct cache_key	 key = { j->kind, j->id, j->idlen, NULL }, ek;
	struct cache_record	 rec, erec, old;
	struct cache_blob	*b = NULL;
	char			 extra[32], hex[2 * CACHE_ID_MAX + 1];
	int64_t			 n, t0 = clock_us();
	uint64_t		 osize = 0;
	long			 cpus;
	int			 fd, rc, fresh = 0, olevel = 0, flat = 0;

	if ((rc = records_open(e->c, e->s, &key, &rec, &fd)) < 0)
		return rc;
	encoded_key(&key, j->coding, extra, sizeof(extra), &ek);
	if (cache_get(e->c, &ek, clock_wall_s(), &old) == 0) {
		fresh = old.parent == cache_fingerprint(&rec);
		olevel = (int)old.quality;
		osize = old.size;
		cache_record_release(&old);
	}
	/* Made meanwhile, for a request that came between; or, to improve,
	 * gone, stale, not worth compressing, or good already. */
	if ((!improving && fresh) || (improving && (!fresh || osize == 0 ||
	    olevel >= level))) {
		close(fd);
		cache_record_release(&rec);
		return 0;
	}
	if ((rc = cache_blob_create(e->c, &b)) < 0)
		goto out;
	/* A client waits for the first copy: every core helps.  The
	 * second runs on one, at low priority. */
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	n = j->coding == WEBAPI_ENC_ZSTD ? zstd_into(e, fd, rec.size, b,
	    level, improving ? 1 : (int)(cpus > 4 ? 4 : cpus)) :
	    gzip_into(e, fd, rec.size, b, level);
	if (n < 0) {
		rc = (int)n;
		goto out;
	}
	memset(&erec, 0, sizeof(erec));
	erec.flags = CACHE_F_DERIVED;
	erec.quality = (uint32_t)level;
	erec.parent = cache_fingerprint(&rec);
	erec.last_modified = rec.last_modified;
	erec.stored = clock_wall_s();
	erec.origin = "encode";
	hex_encode(j->id, j->idlen, hex);
	if (improving) {
		ADD(e->iusec, (uint64_t)(clock_us() - t0));
		rc = cache_put_blob_if(e->c, b, &ek, &erec, smaller, NULL, NULL);
		b = NULL;	/* consumed */
		if (rc == -ECANCELED) {
			INC(e->kept);	/* no smaller, or replaced meanwhile */
			rc = 0;
		} else if (rc == 0) {
			INC(e->improved[slot(j->coding)]);
			ADD(e->saved, osize - (uint64_t)n);
			log_debug("%s %s: %s level %d, %" PRIu64 " to %" PRId64
			    " bytes in %" PRId64 " ms", kind_name(j->kind), hex,
			    encode_name(j->coding), level, osize, n,
			    (clock_us() - t0) / 1000);
		}
		goto out;
	}
	if ((uint64_t)n * WORTH_DEN > rec.size * WORTH_NUM) {
		/* Not worth it (compressed sections, say): an empty copy
		 * says so, and costs no disk. */
		cache_blob_abort(b);
		if ((rc = cache_blob_create(e->c, &b)) < 0)
			goto out;
		INC(e->flat[slot(j->coding)]);
		flat = 1;
	} else
		INC(e->made[slot(j->coding)]);
	rc = cache_put_blob(e->c, b, &ek, &erec, NULL);
	b = NULL;	/* consumed */
	ADD(e->in_bytes, rec.size);
	ADD(e->out_bytes, (uint64_t)n);
	ADD(e->usec, (uint64_t)(clock_us() - t0));
	log_debug("%s %s: %s, %" PRIu64 " to %" PRId64 " bytes in %" PRId64
	    " ms", kind_name(j->kind), hex, encode_name(j->coding), rec.size,
	    n, (clock_us() - t0) / 1000);
	if (rc == 0 && !flat)
		improve_push(e, j->kind, j->id, j->idlen, j->coding, level,
		    erec.parent);
out:
	cache_blob_abort(b);
	close(fd);
	cache_record_release(&rec);
	return rc;
}

int
encode_adopt(struct cache *c, const struct cache_key *key, uint64_t parent,
    uint64_t size, const struct cache_record *rec, unsigned coding, int level,
    struct cache_blob *b)
{
	struct cache_key	ek;
	struct cache_record	erec;
	char			extra[32];
	int			rc;

	encoded_key(key, coding, extra, sizeof(extra), &ek);
	if (cache_blob_size(b) * WORTH_DEN > size * WORTH_NUM) {
		cache_blob_abort(b);
		if ((rc = cache_blob_create(c, &b)) < 0)
			return rc;
	}
	memset(&erec, 0, sizeof(erec));
	erec.flags = CACHE_F_DERIVED;
	erec.quality = level > 0 ? (uint32_t)level : 0;
	erec.parent = parent;
	erec.last_modified = rec->last_modified;
	erec.stored = clock_wall_s();
	erec.origin = "upstream";
	return cache_put_blob(c, b, &ek, &erec, NULL);
}

/* ---- coding as the bytes come ---- */

/* Coders made, and alive (each holds a ZSTD_CCtx): process-wide, as the
 * coders belong to no struct encode. */
static atomic_uint_fast64_t	coders_made, coders_live;

struct encode_coder {
	ZSTD_CCtx	*z;
	char		*buf;		/* [pos, len): not drained yet */
	size_t		 cap, len, pos;
};

int
encode_coder_create(unsigned coding, int level, uint64_t size,
    struct encode_coder **out)
{
	struct encode_coder *c;

	*out = NULL;
	if (coding != WEBAPI_ENC_ZSTD)
		return -ENOTSUP;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return -ENOMEM;
	if ((c->z = ZSTD_createCCtx()) == NULL) {
		free(c);
		return -ENOMEM;
	}
	ZSTD_CCtx_setParameter(c->z, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(c->z, ZSTD_c_checksumFlag, 1);
	/* The window need not pass the file: a small one costs a client
	 * little memory to decode. */
	ZSTD_CCtx_setPledgedSrcSize(c->z, size);
	INC(coders_made);
	INC(coders_live);
	*out = c;
	return 0;
}

int
encode_coder_write(struct encode_coder *c, const void *buf, size_t len,
    enum encode_flush how)
{
	ZSTD_inBuffer		in = { buf, len, 0 };
	ZSTD_outBuffer		out;
	ZSTD_EndDirective	d = how == ENCODE_END ? ZSTD_e_end :
				    how == ENCODE_FLUSH ? ZSTD_e_flush :
				    ZSTD_e_continue;
	size_t			r, want = ZSTD_CStreamOutSize();
	char			*nb;

	if (c->pos == c->len)
		c->pos = c->len = 0;
	for (;;) {
		/* Room for a block at least: what one call makes is kept
		 * whole, however much the caller drains at a time. */
		if (c->cap - c->len < want) {
			if ((nb = realloc(c->buf, c->len + want)) == NULL)
				return -ENOMEM;
			c->buf = nb;
			c->cap = c->len + want;
		}
		out.dst = c->buf + c->len;
		out.size = c->cap - c->len;
		out.pos = 0;
		r = ZSTD_compressStream2(c->z, &out, &in, d);
		if (ZSTD_isError(r))
			return -EIO;
		c->len += out.pos;
		/* continue: every byte taken; flush and end: all let out. */
		if (d == ZSTD_e_continue ? in.pos == in.size : r == 0)
			return 0;
	}
}

size_t
encode_coder_drain(struct encode_coder *c, void *buf, size_t max)
{
	size_t n = c->len - c->pos;

	if (n > max)
		n = max;
	memcpy(buf, c->buf + c->pos, n);
	c->pos += n;
	return n;
}

size_t
encode_coder_pending(const struct encode_coder *c)
{
	return c->len - c->pos;
}

void
encode_coder_free(struct encode_coder *c)
{
	if (c == NULL)
		return;
	atomic_fetch_sub_explicit(&coders_live, 1, memory_order_relaxed);
	ZSTD_freeCCtx(c->z);
	free(c->buf);
	free(c);
}

/* ---- the second pass ---- */

#define IMPROVE_MAX	4096
#define TRIED_MAX	65536	/* copies remembered as queued once */

/* The level the second pass makes coding's copies at (0: none). */
static int
best_for(const struct encode *e, unsigned coding)
{
	int best = coding == WEBAPI_ENC_ZSTD ? e->best : e->best > 9 ? 9 :
	    e->best;

	return best > e->level ? best : 0;
}

/*
 * Queue a copy made at level (of the file whose fingerprint is fp) for
 * the second pass, once per process: a copy found at a lower level after
 * a restart is queued on its first use, and one the second pass could
 * not make smaller is not tried again and again.
 */
static void
improve_push(struct encode *e, enum cache_kind kind, const unsigned char *id,
    size_t idlen, unsigned coding, int level, uint64_t fp)
{
	struct job	*n;
	char		 k[2 * CACHE_ID_MAX + 64];
	size_t		 dummy;
	int		 best = best_for(e, coding);

	if (best == 0 || level >= best)
		return;
	k[0] = (char)('0' + kind);
	k[1] = (char)('0' + coding);
	hex_encode(id, idlen, k + 2);
	snprintf(k + 2 + 2 * idlen, sizeof(k) - 2 - 2 * idlen, "-%" PRIx64,
	    fp);
	pthread_mutex_lock(&e->mu);
	if (strmap_get(&e->tried, k, &dummy)) {
		pthread_mutex_unlock(&e->mu);
		return;
	}
	if (e->tried.n >= TRIED_MAX)
		strmap_free(&e->tried);
	if (e->nimprove >= IMPROVE_MAX || e->stop ||
	    strmap_put(&e->tried, k, 0) < 0 ||
	    (n = calloc(1, sizeof(*n))) == NULL) {
		pthread_mutex_unlock(&e->mu);
		INC(e->idropped);
		return;
	}
	n->kind = kind;
	memcpy(n->id, id, idlen);
	n->idlen = idlen;
	n->coding = coding;
	*e->itail = n;
	e->itail = &n->next;
	e->nimprove++;
	pthread_cond_signal(&e->icv);
	pthread_mutex_unlock(&e->mu);
}

static void *
improver(void *arg)
{
	struct encode	*e = arg;
	struct job	*j;
	int		 rc;

	/* Behind every request: the lowest priority this thread may take. */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19);
	pthread_mutex_lock(&e->mu);
	for (;;) {
		while (e->improve == NULL && !e->stop)
			pthread_cond_wait(&e->icv, &e->mu);
		if (e->stop)
			break;
		j = e->improve;
		if ((e->improve = j->next) == NULL)
			e->itail = &e->improve;
		e->nimprove--;
		e->improving = 1;
		pthread_mutex_unlock(&e->mu);
		rc = make(e, j, best_for(e, j->coding), 1);
		if (rc < 0 && rc != -ECANCELED && rc != -ENOENT &&
		    rc != -EROFS && rc != -ENOSPC)
			log_warnx("%s: cannot compress again: %s",
			    kind_name(j->kind), strerror(-rc));
		free(j);
		pthread_mutex_lock(&e->mu);
		e->improving = 0;
	}
	/* What is left is dropped: the next start does without. */
	while ((j = e->improve) != NULL) {
		e->improve = j->next;
		free(j);
	}
	e->itail = &e->improve;
	e->nimprove = 0;
	pthread_mutex_unlock(&e->mu);
	return NULL;
}

static void *
worker(void *arg)
{
	struct encode	*e = arg;
	struct job	*j, **pp;
	struct waiter	*w, *next;
	int		 rc;

	pthread_mutex_lock(&e->mu);
	for (;;) {
		for (j = e->jobs; j != NULL && j->running; j = j->next)
			;
		if (j == NULL && !e->stop) {
			pthread_cond_wait(&e->cv, &e->mu);
			continue;
		}
		if (j == NULL || e->stop)
			break;
		j->running = 1;
		pthread_mutex_unlock(&e->mu);
		rc = make(e, j, e->level, 0);
		if (rc < 0 && rc != -ENOENT && rc != -EROFS && rc != -ENOSPC) {
			char hex[2 * CACHE_ID_MAX + 1];

			hex_encode(j->id, j->idlen, hex);
			log_warnx("%s %s: cannot compress (%s): %s",
			    kind_name(j->kind), hex, encode_name(j->coding),
			    strerror(-rc));
		}
		if (rc < 0)
			INC(e->failed);
		pthread_mutex_lock(&e->mu);
		for (pp = &e->jobs; *pp != j; pp = &(*pp)->next)
			;
		*pp = j->next;
		e->njobs--;
		pthread_mutex_unlock(&e->mu);
		for (w = j->waiters; w != NULL; w = next) {
			next = w->next;
			w->done(w->ctx, rc);
			free(w);
		}
		free(j);
		pthread_mutex_lock(&e->mu);
	}
	pthread_mutex_unlock(&e->mu);
	return NULL;
}

int
encode_request(struct encode *e, const struct cache_key *key,
    unsigned coding, encode_done_fn done, void *ctx)
{
	struct waiter	*w;
	struct job	*j, **pp;
	int		 rc = 0;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return -ENOMEM;
	w->done = done;
	w->ctx = ctx;
	pthread_mutex_lock(&e->mu);
	for (pp = &e->jobs; (j = *pp) != NULL; pp = &j->next)
		if (j->kind == key->kind && j->coding == coding &&
		    j->idlen == key->idlen &&
		    memcmp(j->id, key->id, key->idlen) == 0)
			break;
	if (e->stop)
		rc = -ECANCELED;
	else if (j == NULL && e->njobs >= ENCODE_QUEUE_MAX)
		rc = -EBUSY;
	else if (j == NULL && (j = calloc(1, sizeof(*j))) == NULL)
		rc = -ENOMEM;
	else if (*pp == NULL) {
		j->kind = key->kind;
		memcpy(j->id, key->id, key->idlen);
		j->idlen = key->idlen;
		j->coding = coding;
		*pp = j;	/* last: oldest first */
		e->njobs++;
		pthread_cond_signal(&e->cv);
	}
	if (rc == 0) {
		w->next = j->waiters;
		j->waiters = w;
	}
	pthread_mutex_unlock(&e->mu);
	if (rc < 0) {
		if (rc == -EBUSY)
			INC(e->busy);
		free(w);
	}
	return rc;
}

void
encode_count(struct encode *e, unsigned coding, uint64_t bytes)
{
	INC(e->sent[slot(coding)]);
	ADD(e->sent_bytes[slot(coding)], bytes);
}

unsigned
encode_offered(const struct encode *e)
{
	return e != NULL ? e->offered : 0;
}

int
encode_create(struct cache *c, struct scan *s, const struct config *cfg,
    struct encode **out)
{
	struct encode	*e;
	unsigned	 offered;
	int		 rc;

	*out = NULL;
	if (config_parse_codings(cfg->compress, &offered) < 0)
		return -EINVAL;
	if (offered == 0)
		return 0;
	if ((e = calloc(1, sizeof(*e))) == NULL)
		return -ENOMEM;
	e->c = c;
	e->s = s;
	e->offered = offered;
	e->level = (int)cfg->compress_level;
	e->best = cfg->compress_best > cfg->compress_level ?
	    (int)cfg->compress_best : 0;
	e->itail = &e->improve;
	pthread_mutex_init(&e->mu, NULL);
	pthread_cond_init(&e->cv, NULL);
	pthread_cond_init(&e->icv, NULL);
	if ((rc = pthread_create(&e->th, NULL, worker, e)) != 0) {
		encode_free(e);
		return -rc;
	}
	e->started = 1;
	if (e->best > 0) {
		if ((rc = pthread_create(&e->ith, NULL, improver, e)) != 0) {
			encode_free(e);
			return -rc;
		}
		e->istarted = 1;
	}
	*out = e;
	return 0;
}

void
encode_stop(struct encode *e)
{
	struct job	*j, *next;
	struct waiter	*w, *wn;

	if (e == NULL)
		return;
	pthread_mutex_lock(&e->mu);
	__atomic_store_n(&e->stop, 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&e->cv);
	pthread_cond_broadcast(&e->icv);
	pthread_mutex_unlock(&e->mu);
	if (e->started) {
		pthread_join(e->th, NULL);
		e->started = 0;
	}
	if (e->istarted) {
		pthread_join(e->ith, NULL);
		e->istarted = 0;
	}
	/* What never ran. */
	pthread_mutex_lock(&e->mu);
	j = e->jobs;
	e->jobs = NULL;
	e->njobs = 0;
	pthread_mutex_unlock(&e->mu);
	for (; j != NULL; j = next) {
		next = j->next;
		for (w = j->waiters; w != NULL; w = wn) {
			wn = w->next;
			w->done(w->ctx, -ECANCELED);
			free(w);
		}
		free(j);
	}
}

void
encode_free(struct encode *e)
{
	if (e == NULL)
		return;
	encode_stop(e);
	strmap_free(&e->tried);
	pthread_mutex_destroy(&e->mu);
	pthread_cond_destroy(&e->cv);
	pthread_cond_destroy(&e->icv);
	free(e);
}

void
encode_metrics(struct encode *e, FILE *fp)
{
	static const char *const names[3] = { "identity", "zstd", "gzip" };
	int i;

	fprintf(fp, "# HELP symhub_encode_total compressed copies made, by "
	    "coding and result (flat: saves under a tenth, sent as it is)\n"
	    "# TYPE symhub_encode_total counter\n");
	for (i = 1; i < 3; i++)
		fprintf(fp, "symhub_encode_total{coding=\"%s\",result="
		    "\"stored\"} %" PRIuFAST64 "\n"
		    "symhub_encode_total{coding=\"%s\",result=\"flat\"} %"
		    PRIuFAST64 "\n", names[i], GET(e->made[i]), names[i],
		    GET(e->flat[i]));
	fprintf(fp, "# HELP symhub_encode_improved_total copies made again "
	    "at --compress-best-level, smaller, in the background\n"
	    "# TYPE symhub_encode_improved_total counter\n");
	for (i = 1; i < 3; i++)
		fprintf(fp, "symhub_encode_improved_total{coding=\"%s\"} %"
		    PRIuFAST64 "\n", names[i], GET(e->improved[i]));
	pthread_mutex_lock(&e->mu);
	fprintf(fp, "# HELP symhub_encode_improve_queued copies waiting to "
	    "be made again\n"
	    "# TYPE symhub_encode_improve_queued gauge\n"
	    "symhub_encode_improve_queued %u\n"
	    "# TYPE symhub_encode_improving gauge\n"
	    "symhub_encode_improving %d\n", e->nimprove, e->improving);
	pthread_mutex_unlock(&e->mu);
	fprintf(fp, "# TYPE symhub_encode_improve_kept_total counter\n"
	    "symhub_encode_improve_kept_total %" PRIuFAST64 "\n"
	    "# TYPE symhub_encode_improve_dropped_total counter\n"
	    "symhub_encode_improve_dropped_total %" PRIuFAST64 "\n"
	    "# TYPE symhub_encode_improve_seconds_total counter\n"
	    "symhub_encode_improve_seconds_total %.3f\n"
	    "# TYPE symhub_encode_improve_saved_bytes_total counter\n"
	    "symhub_encode_improve_saved_bytes_total %" PRIuFAST64 "\n",
	    GET(e->kept), GET(e->idropped), (double)GET(e->iusec) / 1e6,
	    GET(e->saved));
	fprintf(fp, "# TYPE symhub_encode_failed_total counter\n"
	    "symhub_encode_failed_total %" PRIuFAST64 "\n"
	    "# HELP symhub_encode_busy_total files sent as they are: too "
	    "many waiting to be compressed\n"
	    "# TYPE symhub_encode_busy_total counter\n"
	    "symhub_encode_busy_total %" PRIuFAST64 "\n"
	    "# TYPE symhub_encode_in_bytes_total counter\n"
	    "symhub_encode_in_bytes_total %" PRIuFAST64 "\n"
	    "# TYPE symhub_encode_out_bytes_total counter\n"
	    "symhub_encode_out_bytes_total %" PRIuFAST64 "\n"
	    "# TYPE symhub_encode_seconds_total counter\n"
	    "symhub_encode_seconds_total %.3f\n"
	    "# HELP symhub_encoded_responses_total artifacts sent to clients "
	    "that accept a coding, by the coding sent\n"
	    "# TYPE symhub_encoded_responses_total counter\n",
	    GET(e->failed), GET(e->busy), GET(e->in_bytes), GET(e->out_bytes),
	    (double)GET(e->usec) / 1e6);
	for (i = 0; i < 3; i++)
		fprintf(fp, "symhub_encoded_responses_total{coding=\"%s\"} %"
		    PRIuFAST64 "\n", names[i], GET(e->sent[i]));
	fprintf(fp, "# TYPE symhub_encoded_response_bytes_total counter\n");
	for (i = 0; i < 3; i++)
		fprintf(fp, "symhub_encoded_response_bytes_total{coding=\"%s\"} "
		    "%" PRIuFAST64 "\n", names[i], GET(e->sent_bytes[i]));
	fprintf(fp, "# HELP symhub_encode_stream_coders_total zstd coders "
	    "made for cold files streamed as they arrive: one per stream, "
	    "however many clients read it\n"
	    "# TYPE symhub_encode_stream_coders_total counter\n"
	    "symhub_encode_stream_coders_total %" PRIuFAST64 "\n"
	    "# TYPE symhub_encode_stream_coders gauge\n"
	    "symhub_encode_stream_coders %" PRIuFAST64 "\n",
	    GET(coders_made), GET(coders_live));
}
