/*
 * fetch: the upstream fan-out engine (see fetch.h).
 *
 * Threads: HTTP workers only enqueue requests (fetch_request) and wake the
 * fetch thread; everything else — jobs, attempts, breakers, the curl multi
 * handle — belongs to the fetch thread and takes no lock.  Metrics that
 * /metrics reads from other threads are relaxed atomics.  A stream
 * (fetch.h) is shared with the HTTP workers that read it, under its own
 * lock.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <zstd.h>

#include "base/clock.h"
#include "base/counter.h"
#include "base/hex.h"
#include "common/elfinfo.h"
#include "common/kind.h"
#include "common/webapi.h"
#include "breaker.h"
#include "encode.h"
#include "fetch.h"
#include "log.h"
#include "upstream.h"
#include "upzstd.h"

/* This hub's mark in the User-Agent it sends upstream (ua_chain()). */
#define UA_VIA		"symhub-via/"
#define UA_MAX		2048

struct waiter {
	struct waiter	*next;
	fetch_done_fn	 done;
	void		*ctx;
	int		 want_bytes;
	int		 want_stream;
};

struct job;

enum astate { A_RUNNING, A_DONE, A_CANCELLED };

struct attempt {
	struct job		*job;
	struct upstream		*up;
	CURL			*easy;
	struct curl_slist	*hdrs;
	enum astate		 state;
	int64_t			 started;	/* ms */
	int			 got_header;
	long			 status;	/* of the last response */
	struct upstream_reply	 r;		/* what its headers said */
	int			 bad;		/* a 200 that failed a check */
	unsigned		 accept;	/* codings asked (upstream.h) */
	char			 err[CURL_ERROR_SIZE];
};

struct job {
	struct job		*next;		/* in f->jobs, or the queue */
	struct fetch		*f;
	unsigned char		*kb;		/* coalescing key */
	size_t			 klen;
	struct cache_key	 key;
	unsigned char		 id[CACHE_ID_MAX];
	char			*extra, *idhex, *raw_extra, *ua, *xff, *via;
	uint64_t		 maxsize;
	struct waiter		*waiters;
	struct attempt		*att;		/* one per upstream */
	size_t			 natt;
	struct attempt		*winner;
	struct cache_blob	*blob;
	struct upzstd		*z;		/* the winner's zstd, or NULL */
	int			 write_failed;	/* -errno from the blob */
	int			 cancel_others;	/* a winner was just chosen */
	int			 upgrade;	/* see fetch_req */
	int			 tier;		/* asked now */
	uint64_t		*marks;		/* per upstream: its mark() */
	int			 transient, toobig, unsupported;
	/* Verified and being stored by the store thread: joiners are served
	 * from sfd (a dup of the blob's) meanwhile. */
	int			 committing;
	int64_t			 committed_ms;
	int			 sfd;
	struct cache_record	 srec;		/* strings: the winner's */
	struct job		*cnext;		/* store or done queue */
	/* The winner's bytes as they arrive (fetch.h): its head is looked
	 * at once head_need bytes are in; head_done once decided. */
	struct fetch_stream	*stream;
	struct fetch_stream	*kept;		/* verified, until stored */
	uint64_t		 head_need;
	int			 head_done;
};

struct fetch {
	struct cache		*c;
	struct upstream		*up;
	struct breaker		*br;		/* one per upstream */
	size_t			 nup;
	int64_t			*ttls;
	size_t			 nttls;
	uint64_t		 fwd_hops;	/* X-Forwarded-For hops; 0: any */
	fetch_new_fn		 on_dbg;	/* NULL: none */
	void			*on_dbg_ctx;
	char			 via[33];	/* this instance's id */
	int			 keep_zstd;	/* store what comes in zstd */
	CURLM			*multi;
	pthread_t		 thread;
	int			 started;

	pthread_mutex_t		 mu;		/* guards queue, stop */
	struct job		*queue;
	int			 stop;

	struct job		*jobs;		/* fetch thread only */
	atomic_uint_fast64_t	 inflight, coalesced, started_jobs;
	atomic_uint_fast64_t	 streams, streamed, streams_cut;

	/* The store thread: fsync, rename and index off the fetch thread,
	 * so one file's ~1 ms of syncing never delays other requests. */
	pthread_t		 sthread;
	int			 have_sthread;
	pthread_mutex_t		 smu;
	pthread_cond_t		 scv;
	struct job		*squeue;	/* to store, oldest last */
	size_t			 squeue_n;	/* its length, its bytes */
	uint64_t		 squeue_bytes;
	uint64_t		 squeue_pushback; /* stored on the fetch thread */
	uint64_t		 cfg_squeue_max, cfg_squeue_bytes;
	struct job		*sdone;		/* stored, for the fetch thread */
	struct fetch_stream	*kqueue;	/* coded copies to keep */
	int			 sstop;
	_Atomic int64_t		 last_job_ms;	/* a job last started */
};

/*
 * The store thread waits for the fetches to pause this long before it
 * stores, and never longer than STORE_DELAY_MAX_MS: a burst of cold
 * requests (gdb loading a program's libraries) is answered without the
 * file system's syncing in its way, and stored right after.
 */
#define STORE_QUIET_MS		20
#define STORE_DELAY_MAX_MS	1000



/*
 * Streams (fetch.h).  The fetch thread writes, readers on the HTTP
 * threads read; mu guards what they share.  A reader preads under mu:
 * the descriptor changes when a staged blob moves to tmp/ at 8 MiB.
 */

/* The tail held back until the file is verified: at least this much,
 * and everything from the section headers on. */
#define STREAM_TAIL_MIN		(64 * 1024)
/* A head whose build-id note is not within this many bytes is not
 * looked for further: the file is stored and then forwarded. */
#define STREAM_HEAD_MAX		(256 * 1024)
/* Parked readers are woken at most once per this many bytes or ms. */
#define STREAM_WAKE_BYTES	(64 * 1024)
#define STREAM_WAKE_MS		10

enum sstate { S_HEAD, S_DONE, S_FAILED };

struct fetch_stream {
	pthread_mutex_t		 mu;
	int			 refs;
	int			 fd;		/* a dup of the blob's */
	int			 src;		/* the blob's it dups */
	enum sstate		 state;
	uint64_t		 size;		/* announced */
	uint64_t		 written;	/* into fd so far */
	uint64_t		 hold;		/* the tail's start */
	uint64_t		 woke_at;	/* ready() at the last wake */
	int64_t			 woke_ms;
	int			 pending;	/* progress not told yet */
	struct fetch_reader	*parked;
	/* A zstd body (another hub's): its coded bytes as they came, kept
	 * (upzstd.h), for readers that forward them; cfd -1: none.  chold:
	 * the coded bytes that decode to no more than hold less a block,
	 * so that no decoder gets a byte of the tail from them. */
	int			 cfd, csrc;
	uint64_t		 cwritten, chold;
	/*
	 * The one zstd coder of the readers that accept zstd
	 * (fetch_stream_zstd()), made by the first of them.  Whichever
	 * reader runs out of coded bytes codes the next bytes let out
	 * (zbusy: one at a time, without mu), spooled into zb, which each
	 * of them reads from its own offset at its own pace: one coder's
	 * memory and CPU however many read.  zin: file bytes coded; zout:
	 * coded bytes in zb; zdirty: some taken, not let out yet.
	 */
	struct cache		*c;
	struct encode_coder	*z;
	struct cache_blob	*zb;
	unsigned char		*zbuf;
	int			 zfd, zsrc;
	uint64_t		 zin, zout;
	int			 zbusy, zdirty, zended, zfailed, zlevel;
	/* The coded copy becomes the store's zstd copy (stream_keep()):
	 * zparent, the stored file's fingerprint once it is stored; kept
	 * on the store thread (f, knext: its queue). */
	struct fetch		*f;
	struct fetch_stream	*knext;
	struct cache_key	 key;
	unsigned char		 kid[CACHE_ID_MAX];
	int64_t			 last_modified;
	uint64_t		 zparent;
	int			 zstored;
};

/* A coding reader codes at most this many bytes of the file before it
 * lets the coded ones out (and the other readers at them). */
#define STREAM_ZSTEP		(128 * 1024)
#define STREAM_ZSTEP_MAX	(1024 * 1024)

/* With mu held: the bytes a reader may send, decoded or coded. */
static uint64_t
sready(const struct fetch_stream *s, int coded)
{
	uint64_t n = coded ? s->cwritten : s->written;
	uint64_t hold = coded ? s->chold : s->hold;

	if (s->state == S_DONE)
		return n;
	if (s->state == S_FAILED)
		return 0;
	return n < hold ? n : hold;
}

static void
stream_unref(struct fetch_stream *s)
{
	int last;

	pthread_mutex_lock(&s->mu);
	last = --s->refs == 0;
	pthread_mutex_unlock(&s->mu);
	if (!last)
		return;
	if (s->fd >= 0)
		close(s->fd);
	if (s->cfd >= 0)
		close(s->cfd);
	if (s->zfd >= 0)
		close(s->zfd);
	encode_coder_free(s->z);
	cache_blob_abort(s->zb);
	free(s->zbuf);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* fetch_stream_read() of the file's bytes, or of the coded ones. */
static ssize_t
sread(struct fetch_stream *s, int coded, uint64_t pos, void *buf, size_t max,
    struct fetch_reader *rd)
{
	uint64_t	avail;
	ssize_t		n;

	pthread_mutex_lock(&s->mu);
	avail = sready(s, coded);
	if (s->state == S_FAILED)
		n = -EIO;
	else if (pos < avail) {
		if (avail - pos < max)
			max = (size_t)(avail - pos);
		while ((n = pread(coded ? s->cfd : s->fd, buf, max,
		    (off_t)pos)) < 0 &&
		    errno == EINTR)
			;
		if (n <= 0)
			n = -EIO;
	} else if (s->state == S_DONE)
		n = -ENODATA;
	else if (rd == NULL)
		n = 0;		/* the caller has work before it waits */
	else {
		/* Suspended before mu is let go: a wake cannot come first. */
		rd->next = s->parked;
		s->parked = rd;
		rd->parked = 1;
		rd->suspend(rd->ctx);
		n = 0;
	}
	pthread_mutex_unlock(&s->mu);
	return n;
}

ssize_t
fetch_stream_read(struct fetch_stream *s, uint64_t pos, void *buf, size_t max,
    struct fetch_reader *rd)
{
	return sread(s, 0, pos, buf, max, rd);
}

int
fetch_stream_coded(const struct fetch_stream *s)
{
	return s->cfd >= 0;
}

ssize_t
fetch_stream_read_coded(struct fetch_stream *s, uint64_t pos, void *buf,
    size_t max, struct fetch_reader *rd)
{
	return sread(s, 1, pos, buf, max, rd);
}

void
fetch_stream_release(struct fetch_stream *s, struct fetch_reader *rd)
{
	struct fetch_reader **pp;

	if (s == NULL)
		return;
	if (rd != NULL) {
		pthread_mutex_lock(&s->mu);
		for (pp = &s->parked; rd->parked && *pp != NULL;
		    pp = &(*pp)->next)
			if (*pp == rd) {
				*pp = rd->next;
				rd->parked = 0;
				break;
			}
		pthread_mutex_unlock(&s->mu);
	}
	stream_unref(s);
}

static void	stream_wake(struct fetch_stream *, int);

int
fetch_stream_zstd(struct fetch_stream *s, int level)
{
	int rc = 0;

	pthread_mutex_lock(&s->mu);
	if (s->z != NULL || s->zended || s->zfailed)
		goto out;		/* made by another reader */
	if (s->state == S_FAILED) {
		rc = -EIO;
		goto out;
	}
	if ((s->zbuf = malloc(STREAM_ZSTEP)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = encode_coder_create(WEBAPI_ENC_ZSTD, level, s->size,
	    &s->z)) < 0)
		goto out;
	if ((rc = cache_blob_create_staged(s->c, &s->zb)) < 0)
		goto out;
	s->zsrc = cache_blob_fd(s->zb);
	if ((s->zfd = dup(s->zsrc)) < 0) {
		rc = -errno;
		goto out;
	}
	s->zlevel = level;
out:
	if (rc < 0) {
		encode_coder_free(s->z);
		s->z = NULL;
		cache_blob_abort(s->zb);
		s->zb = NULL;
		free(s->zbuf);
		s->zbuf = NULL;
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static void	stream_keep(struct fetch_stream *, int, uint64_t, int64_t);

/*
 * The next step of the one coder, for a reader that holds zbusy (mu not
 * held): the file's bytes let out since, at most STREAM_ZSTEP_MAX, into
 * the coder; flushed when there are no more for now, the frame ended
 * once the stream is done and all of it is in; what it made appended to
 * zb.  Only what sread() lets out is coded: the tail enters once the file
 * is verified, and the frame ends only then.  @return 0 or -errno.
 */
static int
zstep(struct fetch_stream *s)
{
	struct encode_coder	*z = s->z;
	struct cache_blob	*b = s->zb;
	uint64_t		 in = s->zin, took = 0;
	size_t			 k;
	ssize_t			 n;
	int			 rc = 0, end = 0, dirty = s->zdirty, nfd = -1;

	for (;;) {
		n = sread(s, 0, in, s->zbuf, STREAM_ZSTEP, NULL);
		if (n > 0) {
			rc = encode_coder_write(z, s->zbuf, (size_t)n,
			    ENCODE_MORE);
			in += (uint64_t)n;
			took += (uint64_t)n;
			dirty = 1;
		} else if (n == 0) {
			rc = encode_coder_write(z, NULL, 0, ENCODE_FLUSH);
			dirty = 0;
		} else if (n == -ENODATA) {
			rc = encode_coder_write(z, NULL, 0, ENCODE_END);
			end = 1;
		} else
			rc = (int)n;
		while (rc == 0 && (k = encode_coder_drain(z, s->zbuf,
		    STREAM_ZSTEP)) > 0)
			rc = cache_blob_write(b, s->zbuf, k);
		if (rc < 0 || n <= 0 || took >= STREAM_ZSTEP_MAX)
			break;
	}
	if (rc == 0 && cache_blob_fd(b) != s->zsrc &&
	    (nfd = dup(cache_blob_fd(b))) < 0)
		rc = -errno;
	pthread_mutex_lock(&s->mu);
	if (nfd >= 0) {
		/* The staged bytes moved to tmp/: read from there on. */
		close(s->zfd);
		s->zfd = nfd;
		s->zsrc = cache_blob_fd(b);
	}
	s->zin = in;
	s->zdirty = dirty;
	s->zout = cache_blob_size(b);
	if (rc < 0)
		s->zfailed = 1;
	else if (end) {
		s->zended = 1;
		s->z = NULL;
	}
	s->zbusy = 0;
	pthread_mutex_unlock(&s->mu);
	if (rc == 0 && end) {
		/* A whole frame: the coder's memory goes now, and the bytes
		 * may become the store's copy. */
		encode_coder_free(z);
		stream_keep(s, 0, 0, 0);
	}
	return rc;
}

ssize_t
fetch_stream_read_zstd(struct fetch_stream *s, uint64_t pos, void *buf,
    size_t max, struct fetch_reader *rd)
{
	uint64_t	avail;
	ssize_t		n;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		if (s->state == S_FAILED || s->zfailed) {
			n = -EIO;
			break;
		}
		if (pos < s->zout) {
			if (s->zout - pos < max)
				max = (size_t)(s->zout - pos);
			while ((n = pread(s->zfd, buf, max, (off_t)pos)) < 0 &&
			    errno == EINTR)
				;
			if (n <= 0)
				n = -EIO;
			break;
		}
		if (s->zended) {
			n = -ENODATA;
			break;
		}
		avail = sready(s, 0);
		if (s->zbusy || (s->zin >= avail && !s->zdirty &&
		    s->state != S_DONE)) {
			/* Woken when the coder let more out, or the stream
			 * did (stream_wake()).  Suspended before mu is let
			 * go: a wake cannot come first. */
			rd->next = s->parked;
			s->parked = rd;
			rd->parked = 1;
			rd->suspend(rd->ctx);
			n = 0;
			break;
		}
		/* This reader codes the next bytes for all. */
		s->zbusy = 1;
		pthread_mutex_unlock(&s->mu);
		(void)zstep(s);
		stream_wake(s, 1);
		pthread_mutex_lock(&s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* Keep s's coded copy now (its frame whole, its file stored). */
static void
stream_keep_now(struct fetch_stream *s, struct cache_blob *b)
{
	struct cache_record	 rec;
	int			 rc;

	memset(&rec, 0, sizeof(rec));
	rec.last_modified = s->last_modified;
	if ((rc = encode_adopt(s->c, &s->key, s->zparent, s->size, &rec,
	    WEBAPI_ENC_ZSTD, s->zlevel, b)) < 0)
		log_debug("no zstd copy of a streamed file: %s",
		    strerror(-rc));
}

/*
 * The coded copy becomes the store's zstd copy (encode_adopt(), as
 * another hub's zstd is kept) once the frame is whole and the file it
 * codes is stored (stored, by store(): the file's fingerprint and
 * Last-Modified); whichever comes last keeps it.  Made from the bytes
 * that were stored, in order, by the level the hub would make it at.
 * Kept by the store thread: a reader that ends the frame last is on an
 * HTTP thread, which must not wait for a file's fsync.
 */
static void
stream_keep(struct fetch_stream *s, int stored, uint64_t parent,
    int64_t last_modified)
{
	struct fetch		*f = s->f;
	struct cache_blob	*b = NULL;
	int			 queued = 0;

	pthread_mutex_lock(&s->mu);
	if (stored) {
		s->zstored = 1;
		s->zparent = parent;
		s->last_modified = last_modified;
	}
	if (s->zended && s->zstored && s->zb != NULL) {
		if (!stored) {
			/* Once stopping, the store thread is gone: here. */
			pthread_mutex_lock(&f->smu);
			if (f->have_sthread && !f->sstop) {
				s->refs++;	/* the store thread's */
				s->knext = f->kqueue;
				f->kqueue = s;
				pthread_cond_signal(&f->scv);
				queued = 1;
			}
			pthread_mutex_unlock(&f->smu);
		}
		if (!queued) {
			b = s->zb;
			s->zb = NULL;
		}
	}
	pthread_mutex_unlock(&s->mu);
	if (b != NULL)
		stream_keep_now(s, b);
}

/* On the store thread: keep the coded copies queued. */
static void
keep_queued(struct fetch *f)
{
	struct fetch_stream	*s, *next;
	struct cache_blob	*b;

	pthread_mutex_lock(&f->smu);
	s = f->kqueue;
	f->kqueue = NULL;
	pthread_mutex_unlock(&f->smu);
	for (; s != NULL; s = next) {
		next = s->knext;
		pthread_mutex_lock(&s->mu);
		b = s->zb;
		s->zb = NULL;
		pthread_mutex_unlock(&s->mu);
		if (b != NULL)
			stream_keep_now(s, b);
		stream_unref(s);
	}
}

/*
 * Wake the parked readers: now (force), or when enough came since the
 * last wake; else it is pending, for stream_flush().  A parked reader's
 * connection is suspended, so it stays until resumed: the list may be
 * walked after mu is let go.
 */
static void
stream_wake(struct fetch_stream *s, int force)
{
	struct fetch_reader	*rd, *next;
	int64_t			 now = clock_ms();
	uint64_t		 avail;

	pthread_mutex_lock(&s->mu);
	avail = sready(s, 0);
	if (s->parked == NULL || (!force && avail <= s->woke_at)) {
		s->pending &= s->parked != NULL;
		pthread_mutex_unlock(&s->mu);
		return;
	}
	if (!force && avail - s->woke_at < STREAM_WAKE_BYTES &&
	    now - s->woke_ms < STREAM_WAKE_MS) {
		s->pending = 1;
		pthread_mutex_unlock(&s->mu);
		return;
	}
	rd = s->parked;
	s->parked = NULL;
	s->woke_at = avail;
	s->woke_ms = now;
	s->pending = 0;
	for (next = rd; next != NULL; next = next->next)
		next->parked = 0;
	pthread_mutex_unlock(&s->mu);
	for (; rd != NULL; rd = next) {
		next = rd->next;
		rd->resume(rd->ctx);
	}
}

/* The last state of j's stream (S_DONE, S_FAILED); the job's reference
 * goes. */
static void
stream_end(struct fetch *f, struct job *j, enum sstate st)
{
	struct fetch_stream *s = j->stream;

	if (s == NULL)
		return;
	j->stream = NULL;
	pthread_mutex_lock(&s->mu);
	s->state = st;
	if (st == S_FAILED && s->refs > 1)
		INC(f->streams_cut);
	pthread_mutex_unlock(&s->mu);
	stream_wake(s, 1);
	stream_unref(s);
}

/* More bytes are in j's blob: tell the stream (fetch thread). */
static int
stream_grow(struct job *j)
{
	struct fetch_stream	*s = j->stream;
	int			 bfd = cache_blob_fd(j->blob), nfd = -1;
	int			 kfd = -1, ncfd = -1;

	if (bfd != s->src && (nfd = dup(bfd)) < 0)
		return -errno;
	if (s->cfd >= 0 && ((kfd = upzstd_kept_fd(j->z)) < 0 ||
	    (kfd != s->csrc && (ncfd = dup(kfd)) < 0))) {
		if (nfd >= 0)
			close(nfd);
		return kfd < 0 ? -EIO : -errno;
	}
	pthread_mutex_lock(&s->mu);
	if (nfd >= 0) {
		/* The staged bytes moved to tmp/: read from there on. */
		close(s->fd);
		s->fd = nfd;
		s->src = bfd;
	}
	if (ncfd >= 0) {
		close(s->cfd);
		s->cfd = ncfd;
		s->csrc = kfd;
	}
	s->written = cache_blob_size(j->blob);
	if (s->cfd >= 0) {
		s->cwritten = upzstd_coded(j->z);
		if (s->written + ZSTD_BLOCKSIZE_MAX <= s->hold)
			s->chold = s->cwritten;
	}
	pthread_mutex_unlock(&s->mu);
	stream_wake(s, 0);
	return 0;
}

/* Wake the readers whose wake was put off.  @return ms until the next
 * look is due, or -1 when nothing is pending. */
static int64_t
stream_flush(struct fetch *f)
{
	struct job	*j;
	int		 pending = 0;

	for (j = f->jobs; j != NULL; j = j->next) {
		if (j->stream == NULL)
			continue;
		stream_wake(j->stream, 0);
		pthread_mutex_lock(&j->stream->mu);
		pending |= j->stream->pending;
		pthread_mutex_unlock(&j->stream->mu);
	}
	return pending ? STREAM_WAKE_MS : -1;
}

/*
 * Attempts.
 */

static size_t	on_header(char *, size_t, size_t, void *);
static size_t	on_body(char *, size_t, size_t, void *);
static int	head_check(struct fetch *, struct job *, struct attempt *);

static size_t
on_header(char *buf, size_t size, size_t n, void *arg)
{
	struct attempt		*a = arg;
	const struct upstream	*u = a->up;
	size_t			 len = size * n;

	if (!a->got_header) {
		a->got_header = 1;
		breaker_first_byte(a->up->br,
		    (uint64_t)(clock_ms() - a->started));
	}
	if (!upstream_reply_header(&a->r, buf, len) && u->kind->header != NULL)
		(void)u->kind->header(&a->r, buf, len);
	return len;
}

/*
 * The winner's body is zstd that we asked for, of a size it announced:
 * decoded as it comes (upzstd.h), into the blob the checks read.  Any
 * other coding is written as it is and refused by verify().
 */
static int
start_decoding(struct fetch *f, struct attempt *a)
{
	struct job *j = a->job;

	if (!a->r.encoded || !a->r.zstd || !(a->accept & WEBAPI_ENC_ZSTD) ||
	    a->r.xsize < 0)
		return 0;
	return upzstd_create(f->keep_zstd ? f->c : NULL,
	    (uint64_t)a->r.xsize, &j->z);
}

/* The next bytes of a zstd body.  A stream that decodes past its
 * announced size (a bomb) or is no zstd is given up at once: the
 * checks would refuse it anyway.  @return 0 or -errno. */
static int
decode(struct attempt *a, const char *buf, size_t len)
{
	struct job	*j = a->job;
	int		 rc;

	if ((rc = upzstd_write(j->z, buf, len, j->blob)) >= 0 ||
	    (rc != -EFBIG && rc != -EBADMSG))
		return rc;
	log_limited(rc == -EFBIG ? "a zstd bomb" : "broken zstd",
	    a->up->spec.name, "upstream %s sent %s %s in zstd that %s: "
	    "dropped", a->up->spec.name, kind_name(j->key.kind), j->idhex,
	    rc == -EFBIG ? "decodes past its X-DEBUGINFOD-SIZE" :
	    "does not decode");
	breaker_count(a->up->br, BREAKER_WRONG_ID);
	a->bad = 1;
	return rc;
}

static void
cancel(struct fetch *f, struct attempt *a)
{
	if (a->state != A_RUNNING)
		return;
	curl_multi_remove_handle(f->multi, a->easy);
	a->state = A_CANCELLED;
	breaker_count(a->up->br, BREAKER_CANCELLED);
	/* A cancelled probe proved nothing; the next miss may probe. */
	breaker_no_result(a->up->br);
}

static size_t
on_body(char *buf, size_t size, size_t n, void *arg)
{
	struct attempt	*a = arg;
	struct job	*j = a->job;
	size_t		 len = size * n;
	long		 code = 0;
	int		 rc;

	curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &code);
	if (code != 200)
		return len;	/* an error page: not kept */
	if (j->winner == NULL) {
		/* The first 200 with a body wins.  The others are cancelled
		 * once curl_multi_perform() returns: libcurl forbids removing
		 * handles from inside a callback. */
		if ((rc = cache_blob_create_staged(j->f->c, &j->blob)) < 0) {
			j->write_failed = rc;
			return 0;
		}
		j->winner = a;
		j->cancel_others = 1;
		if ((rc = start_decoding(j->f, a)) < 0) {
			j->write_failed = rc;
			return 0;
		}
	}
	if (j->winner != a)
		return 0;
	if (j->z != NULL)
		rc = decode(a, buf, len);
	else
		rc = cache_blob_write(j->blob, buf, len);
	if (rc < 0) {
		j->write_failed = rc;
		return 0;
	}
	breaker_bytes(a->up->br, len);
	if (!j->head_done && cache_blob_size(j->blob) >= j->head_need &&
	    head_check(j->f, j, a) < 0)
		return 0;	/* it lied: never stored, nobody served */
	if (j->stream != NULL) {
		if (cache_blob_size(j->blob) > j->stream->size) {
			log_limited("more than announced", a->up->spec.name,
			    "upstream %s sent more of %s %s than the %llu "
			    "bytes it announced: dropped", a->up->spec.name,
			    kind_name(j->key.kind), j->idhex,
			    (unsigned long long)j->stream->size);
			breaker_count(a->up->br, BREAKER_WRONG_ID);
			a->bad = 1;
			return 0;
		}
		if ((rc = stream_grow(j)) < 0) {
			j->write_failed = rc;
			return 0;
		}
	}
	if ((j->maxsize && cache_blob_size(j->blob) > j->maxsize) ||
	    (a->up->spec.max_size &&
	    cache_blob_size(j->blob) > a->up->spec.max_size)) {
		j->toobig = 1;
		return 0;
	}
	return len;
}

/* What j asks of an upstream. */
static void
job_ask(const struct fetch *f, const struct job *j, struct upstream_ask *ask)
{
	memset(ask, 0, sizeof(*ask));
	ask->key = &j->key;
	ask->idhex = j->idhex;
	ask->raw_extra = j->raw_extra;
	ask->ua = j->ua;
	ask->xff = j->xff;
	ask->via = j->via;
	ask->hub = f->via;
	ask->maxsize = j->maxsize;
}

static int
attempt_start(struct fetch *f, struct attempt *a)
{
	struct job		*j = a->job;
	struct upstream		*u = a->up;
	struct upstream_ask	 ask;
	uint64_t		 max;
	int			 rc;

	job_ask(f, j, &ask);
	/* zstd from the upstreams configured to send it (other hubs), for
	 * the files a hub keeps copies of; see start_decoding(). */
	if (j->key.kind == CACHE_DEBUGINFO || j->key.kind == CACHE_EXECUTABLE)
		ask.accept = u->spec.accept & WEBAPI_ENC_ZSTD;
	a->accept = ask.accept;
	if ((rc = u->kind->setup(u, &ask, &a->easy, &a->hdrs)) < 0)
		return rc;
	curl_easy_setopt(a->easy, CURLOPT_PRIVATE, a);
	curl_easy_setopt(a->easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(a->easy, CURLOPT_HEADERDATA, a);
	curl_easy_setopt(a->easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(a->easy, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(a->easy, CURLOPT_ERRORBUFFER, a->err);
	/*
	 * No Accept-Encoding: with identity bodies libcurl's Content-Length
	 * check is the whole truth, where a gzip stream cut short decodes
	 * into a shorter file that nothing flags.  An encoding we did not
	 * ask for is refused in verify().
	 */
	/* A winner that trickles would hold every waiter until the total
	 * timeout: below 1 KB/s for a first-byte timeout's length it is
	 * given up, and the upstreams it beat are asked again. */
	if (u->spec.first_byte > 0) {
		curl_easy_setopt(a->easy, CURLOPT_LOW_SPEED_LIMIT, 1024L);
		curl_easy_setopt(a->easy, CURLOPT_LOW_SPEED_TIME,
		    (long)u->spec.first_byte);
	}
	max = u->spec.max_size;
	if (j->maxsize && (max == 0 || j->maxsize < max))
		max = j->maxsize;
	if (max)
		curl_easy_setopt(a->easy, CURLOPT_MAXFILESIZE_LARGE,
		    (curl_off_t)max);
	a->started = clock_ms();
	a->state = A_RUNNING;
	if (curl_multi_add_handle(f->multi, a->easy) != CURLM_OK)
		return -EIO;
	return 0;
}

static void
attempt_free(struct attempt *a)
{
	if (a->easy != NULL)
		curl_easy_cleanup(a->easy);
	curl_slist_free_all(a->hdrs);
	upstream_reply_clear(&a->r);
	a->easy = NULL;
	a->hdrs = NULL;
	a->got_header = 0;
}

/*
 * Jobs.
 */

static void
job_free(struct job *j)
{
	struct waiter	*w, *n;
	size_t		 i;

	for (i = 0; i < j->natt; i++)
		attempt_free(&j->att[i]);
	for (w = j->waiters; w != NULL; w = n) {
		n = w->next;
		free(w);
	}
	stream_end(j->f, j, S_FAILED);
	if (j->kept != NULL)
		stream_unref(j->kept);
	cache_blob_abort(j->blob);
	upzstd_free(j->z);
	if (j->sfd >= 0)
		close(j->sfd);
	free(j->att);
	free(j->marks);
	free(j->extra);
	free(j->idhex);
	free(j->raw_extra);
	free(j->ua);
	free(j->xff);
	free(j->via);
	free(j->kb);
	free(j);
}

/* End j's transfers, take it off the list and answer its waiters; the
 * caller frees it (job_release). */
static void
job_answer(struct fetch *f, struct job *j, enum fetch_result r,
    const char *from)
{
	struct job	**pp;
	struct waiter	 *w;
	size_t		  i;

	for (i = 0; i < j->natt; i++)
		if (j->att[i].state == A_RUNNING)
			curl_multi_remove_handle(f->multi, j->att[i].easy);
	for (pp = &f->jobs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	/* The one that served, the bucket included, not the origin it
	 * recorded (the upstream another replica fetched from). */
	for (w = j->waiters; w != NULL; w = w->next)
		w->done(w->ctx, r, j->winner != NULL && r == FETCH_OK ?
		    j->winner->up->spec.name : from, NULL);
}

static void
job_release(struct fetch *f, struct job *j)
{
	atomic_fetch_sub(&f->inflight, 1);
	job_free(j);
}

static void
job_finish(struct fetch *f, struct job *j, enum fetch_result r,
    const char *from)
{
	job_answer(f, j, r, from);
	job_release(f, j);
}

static int
only_new(void *ctx, const struct cache_record *old,
    const struct cache_record *rec)
{
	return old == NULL;
}

static int
only_better(void *ctx, const struct cache_record *old,
    const struct cache_record *rec)
{
	return old == NULL ||
	    elfinfo_score(rec->quality) > elfinfo_score(old->quality);
}

/* What the winner's headers say of j's file, into rec (its quality
 * and size excepted). */
static void
job_record(struct job *j, struct cache_record *rec)
{
	struct attempt	*a = j->winner;
	struct upstream	*u = a->up;

	if (j->stream != NULL) {
		/* As the stream's readers were told, so that every later hit
		 * agrees with the answer they had. */
		rec->stored = j->srec.stored;
	} else
		rec->stored = clock_wall_s();
	rec->origin = u->kind->origin != NULL ? u->kind->origin(u, &a->r) :
	    u->spec.name;
	rec->xfile = a->r.xfile;
	rec->xarchive = a->r.xarchive;
	rec->ximasig = a->r.ximasig;
	rec->last_modified = a->r.lastmod;
}

/* The winner's body is complete: check it, and fill rec as it will be
 * stored.  @return 0 or -EBADMSG (the upstream lied). */
static int
verify(struct fetch *f, struct job *j, struct cache_record *rec)
{
	struct attempt		*a = j->winner;
	struct upstream		*u = a->up;
	struct upstream_ask	 ask;
	struct elfinfo		 ei;
	int			 rc;

	memset(rec, 0, sizeof(*rec));
	if ((a->r.encoded && (j->z == NULL || upzstd_end(j->z) < 0)) ||
	    a->r.xsize == -2 || (a->r.xsize >= 0 &&
	    (uint64_t)a->r.xsize != cache_blob_size(j->blob))) {
		/* A body cut short, or one we cannot check: never stored. */
		if (j->z != NULL && upzstd_end(j->z) < 0)
			log_limited("a cut zstd stream", a->up->spec.name,
			    "upstream %s sent %s %s in zstd that ends inside "
			    "a frame: dropped", a->up->spec.name,
			    kind_name(j->key.kind), j->idhex);
		else if (a->r.encoded && j->z == NULL)
			log_limited("an unasked Content-Encoding",
			    a->up->spec.name, "upstream %s sent %s %s with a "
			    "Content-Encoding it was not asked for: dropped",
			    a->up->spec.name, kind_name(j->key.kind), j->idhex);
		else
			log_limited("a size not its X-DEBUGINFOD-SIZE",
			    a->up->spec.name, "upstream %s sent %llu bytes of "
			    "%s %s, not the %lld its X-DEBUGINFOD-SIZE says: "
			    "dropped",
			    a->up->spec.name,
			    (unsigned long long)cache_blob_size(j->blob),
			    kind_name(j->key.kind), j->idhex,
			    (long long)a->r.xsize);
		breaker_count(a->up->br, BREAKER_WRONG_ID);
		return -EBADMSG;
	}
	if (j->key.kind == CACHE_DEBUGINFO ||
	    j->key.kind == CACHE_EXECUTABLE) {
		const char *why = NULL;

		rc = elfinfo_read(cache_blob_fd(j->blob), &ei);
		if (rc < 0)
			why = "a file that is not ELF";
		else if (ei.buildid_len != j->key.idlen ||
		    memcmp(ei.buildid, j->key.id, ei.buildid_len) != 0)
			why = "a file with another build-id";
		else
			why = elfinfo_unfit(&ei,
			    j->key.kind == CACHE_DEBUGINFO);
		if (why != NULL) {
			log_limited(why, a->up->spec.name,
			    "upstream %s sent %s for %s %s: dropped",
			    a->up->spec.name, why, kind_name(j->key.kind),
			    j->idhex);
			breaker_count(a->up->br, BREAKER_WRONG_ID);
			return -EBADMSG;
		}
		rec->quality = ei.quality;
	}
	job_ask(f, j, &ask);
	if (u->kind->verify != NULL &&
	    (rc = u->kind->verify(u, &ask, &a->r, j->blob)) < 0)
		return rc;
	/* A stream's readers were told a size: the file is that long. */
	if (j->stream != NULL &&
	    j->stream->size != cache_blob_size(j->blob))
		return -EBADMSG;
	job_record(j, rec);
	rec->size = cache_blob_size(j->blob);
	return 0;
}

/* Hand j's stream to the waiters that want one; they leave the job. */
static void
serve_stream(struct fetch *f, struct job *j)
{
	struct cache_record	  rec;
	struct fetch_served	  sv;
	struct waiter		**pp = &j->waiters, *w;

	memset(&rec, 0, sizeof(rec));
	job_record(j, &rec);
	rec.size = j->stream->size;
	while ((w = *pp) != NULL) {
		if (!w->want_stream) {
			pp = &w->next;
			continue;
		}
		*pp = w->next;
		pthread_mutex_lock(&j->stream->mu);
		j->stream->refs++;		/* now the waiter's */
		pthread_mutex_unlock(&j->stream->mu);
		sv.fd = -1;
		sv.stream = j->stream;
		sv.rec = &rec;
		INC(f->streamed);
		w->done(w->ctx, FETCH_OK, j->winner->up->spec.name, &sv);
		free(w);
	}
}

/*
 * The winner's first bytes are in: does the head carry the build-id
 * asked for?  Then its bytes stream to the waiters that want them.  A
 * file whose size is not announced, or whose build-id note is not in
 * its first STREAM_HEAD_MAX bytes, is verified whole first, as any
 * other kind is.  @return 0, or -EBADMSG when the head says it is not
 * the file asked for (counted and logged).
 */
static int
head_check(struct fetch *f, struct job *j, struct attempt *a)
{
	struct fetch_stream	*st;
	struct elfinfo		 ei;
	unsigned char		*buf;
	curl_off_t		 cl = -1;
	uint64_t		 size, shoff, need, tail;
	size_t			 n;
	ssize_t			 got;
	int			 rc;

	/* A zstd body (another hub's) is looked at decoded, as it is
	 * written to the blob; any other coding is refused in verify(). */
	j->head_done = 1;	/* unless more bytes are wanted, below */
	if ((j->key.kind != CACHE_DEBUGINFO &&
	    j->key.kind != CACHE_EXECUTABLE) || j->upgrade ||
	    (a->r.encoded && j->z == NULL))
		return 0;
	if (a->r.xsize >= 0)
		size = (uint64_t)a->r.xsize;
	else if (a->r.xsize == -1 && curl_easy_getinfo(a->easy,
	    CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl) == CURLE_OK && cl >= 0)
		size = (uint64_t)cl;
	else
		return 0;
	if (size <= STREAM_TAIL_MIN)
		return 0;	/* all tail: nothing to send early */
	n = cache_blob_size(j->blob) < STREAM_HEAD_MAX ?
	    (size_t)cache_blob_size(j->blob) : STREAM_HEAD_MAX;
	if ((buf = malloc(n)) == NULL)
		return 0;
	while ((got = pread(cache_blob_fd(j->blob), buf, n, 0)) < 0 &&
	    errno == EINTR)
		;
	rc = got < 0 ? -EIO : elfinfo_head(buf, (size_t)got, &ei, &shoff,
	    &need);
	free(buf);
	if (rc == -EAGAIN && need <= STREAM_HEAD_MAX && need <= size) {
		j->head_done = 0;
		j->head_need = need;
		return 0;
	}
	if (rc == -ENOEXEC || (rc == 0 && (ei.buildid_len != j->key.idlen ||
	    memcmp(ei.buildid, j->key.id, ei.buildid_len) != 0))) {
		const char *why = rc == 0 ? "a file with another build-id" :
		    "a file that is not ELF";

		log_limited(why, a->up->spec.name,
		    "upstream %s sent %s for %s %s: dropped at its head",
		    a->up->spec.name, why, kind_name(j->key.kind), j->idhex);
		breaker_count(a->up->br, BREAKER_WRONG_ID);
		a->bad = 1;
		return -EBADMSG;
	}
	if (rc < 0)
		return 0;	/* no note in the head: store and forward */
	tail = shoff > 0 && shoff < size ? size - shoff : 0;
	if (tail < STREAM_TAIL_MIN)
		tail = STREAM_TAIL_MIN;
	if ((st = calloc(1, sizeof(*st))) == NULL)
		return 0;
	st->src = cache_blob_fd(j->blob);
	if ((st->fd = dup(st->src)) < 0) {
		free(st);
		return 0;
	}
	/* Another hub's zstd, kept: forwarded as it came to the readers
	 * that accept it (no coding again), up to chold. */
	st->cfd = -1;
	if (j->z != NULL && (st->csrc = upzstd_kept_fd(j->z)) >= 0 &&
	    (st->cfd = dup(st->csrc)) >= 0) {
		st->cwritten = upzstd_coded(j->z);
		if (cache_blob_size(j->blob) + ZSTD_BLOCKSIZE_MAX <=
		    size - tail)
			st->chold = st->cwritten;
	}
	st->zfd = -1;
	st->c = f->c;
	st->f = f;
	memcpy(st->kid, j->key.id, j->key.idlen);
	st->key = j->key;
	st->key.id = st->kid;
	st->key.extra = NULL;
	pthread_mutex_init(&st->mu, NULL);
	st->refs = 1;			/* the job's */
	st->state = S_HEAD;
	st->size = size;
	st->hold = size - tail;
	st->written = cache_blob_size(j->blob);
	st->woke_ms = clock_ms();
	j->stream = st;
	j->srec.stored = clock_wall_s();
	INC(f->streams);
	serve_stream(f, j);
	return 0;
}

/*
 * Resume the waiters that want the bytes with a descriptor of their own
 * on the verified file, before it is stored: the fsyncs that make it
 * durable need not delay them.  Nobody can join the job meanwhile (only
 * this thread takes requests in).
 */
static void
serve_early(struct fetch *f, struct job *j, int fd,
    const struct cache_record *rec)
{
	struct fetch_served	  s = { -1, NULL, rec };
	struct waiter		**pp = &j->waiters, *w;

	while ((w = *pp) != NULL) {
		if (!w->want_bytes || fd < 0 || (s.fd = dup(fd)) < 0) {
			pp = &w->next;	/* served from the store, after */
			continue;
		}
		*pp = w->next;
		w->done(w->ctx, FETCH_OK, j->winner != NULL ?
		    j->winner->up->spec.name : rec->origin, &s);
		free(w);
	}
}

static int	store(struct fetch *, struct job *, const struct cache_record *);

/* With smu held: wait until the fetches pause or j has waited long
 * enough.  @return 0 time to store j; 1 woken before (look again). */
static int
store_wait(struct fetch *f, const struct job *j)
{
	struct timespec	ts;
	int64_t		now = clock_ms(), quiet, age, wait;

	quiet = now - atomic_load(&f->last_job_ms);
	age = now - j->committed_ms;
	if (quiet >= STORE_QUIET_MS || age >= STORE_DELAY_MAX_MS)
		return 0;
	wait = STORE_QUIET_MS - quiet;
	if (STORE_DELAY_MAX_MS - age < wait)
		wait = STORE_DELAY_MAX_MS - age;
	ts = clock_deadline(wait);
	(void)pthread_cond_timedwait(&f->scv, &f->smu, &ts);
	return 1;
}

/* The store thread: stores committing jobs, hands them back. */
static void *
store_run(void *arg)
{
	struct fetch	*f = arg;
	struct job	*j, **pp;

	pthread_mutex_lock(&f->smu);
	for (;;) {
		while (f->squeue == NULL && f->kqueue == NULL && !f->sstop)
			pthread_cond_wait(&f->scv, &f->smu);
		if (f->kqueue != NULL) {
			pthread_mutex_unlock(&f->smu);
			keep_queued(f);
			pthread_mutex_lock(&f->smu);
			continue;
		}
		if (f->squeue == NULL)
			break;		/* stopping, and nothing left */
		for (pp = &f->squeue; (*pp)->cnext != NULL; pp = &(*pp)->cnext)
			;
		j = *pp;		/* oldest first */
		if (!f->sstop && store_wait(f, j) > 0)
			continue;	/* woken: look again */
		*pp = NULL;
		f->squeue_n--;
		f->squeue_bytes -= j->srec.size;
		pthread_mutex_unlock(&f->smu);
		store(f, j, &j->srec);
		pthread_mutex_lock(&f->smu);
		j->cnext = f->sdone;
		f->sdone = j;
		curl_multi_wakeup(f->multi);
	}
	pthread_mutex_unlock(&f->smu);
	return NULL;
}

/* Verified: serve who wants the bytes, and store in the background. */
static void
commit(struct fetch *f, struct job *j, const struct cache_record *rec)
{
	j->srec = *rec;
	j->sfd = dup(cache_blob_fd(j->blob));
	/* Its coded copy may be kept once the file is stored. */
	if ((j->kept = j->stream) != NULL) {
		pthread_mutex_lock(&j->kept->mu);
		j->kept->refs++;
		pthread_mutex_unlock(&j->kept->mu);
	}
	stream_end(f, j, S_DONE);	/* its readers have the tail now */
	serve_early(f, j, j->sfd, rec);
	if (!f->have_sthread) {
		store(f, j, rec);
		job_finish(f, j, FETCH_OK, rec->origin);
		return;
	}
	/*
	 * The queue holds the fetched files (in memory up to 8 MiB each)
	 * until the store thread gets to them: past its bounds, store this
	 * one here, which holds the fetches back until it is done.
	 */
	pthread_mutex_lock(&f->smu);
	if ((f->cfg_squeue_max && f->squeue_n >= f->cfg_squeue_max) ||
	    (f->cfg_squeue_bytes && f->squeue_bytes + rec->size >
	    f->cfg_squeue_bytes)) {
		f->squeue_pushback++;
		pthread_mutex_unlock(&f->smu);
		store(f, j, rec);
		job_finish(f, j, FETCH_OK, rec->origin);
		return;
	}
	j->committing = 1;
	j->committed_ms = clock_ms();
	j->cnext = f->squeue;
	f->squeue = j;
	f->squeue_n++;
	f->squeue_bytes += rec->size;
	pthread_cond_signal(&f->scv);
	pthread_mutex_unlock(&f->smu);
}

/* Stored jobs: the waiters left are served from the store now. */
static void
take_stored(struct fetch *f)
{
	struct job *j, *n;

	pthread_mutex_lock(&f->smu);
	j = f->sdone;
	f->sdone = NULL;
	pthread_mutex_unlock(&f->smu);
	for (; j != NULL; j = n) {
		n = j->cnext;
		job_finish(f, j, FETCH_OK, j->srec.origin);
	}
}

/* Has u's copy of j's key changed since j started (upstream.h)? */
static int
changed(struct fetch *f, const struct job *j, struct upstream *u)
{
	return u->kind->changed != NULL &&
	    u->kind->changed(u, &j->key, j->marks[u - f->up]);
}

/* j's record, from, is stored: every other upstream that keeps copies
 * gets one, over its own where that failed the checks in j. */
static void
write_back(struct fetch *f, const struct job *j, const struct upstream *from)
{
	struct upstream	*u;
	size_t		 i, k;
	int		 repair;

	for (i = 0; i < f->nup; i++) {
		u = &f->up[i];
		if (u == from || u->kind->write_back == NULL)
			continue;
		for (k = 0, repair = 0; k < j->natt; k++)
			repair |= j->att[k].up == u && j->att[k].bad;
		u->kind->write_back(u, &j->key, repair);
	}
}

/* The file j stored (rec, of digest) came in zstd: its coded bytes are
 * this hub's zstd copy too, for the clients that accept it. */
static void
keep_zstd(struct fetch *f, struct job *j, const struct cache_record *rec,
    const unsigned char digest[32])
{
	struct cache_record	 r = *rec;
	struct cache_blob	*b;
	int			 rc;

	if ((b = upzstd_take(j->z)) == NULL)
		return;
	memcpy(r.digest, digest, sizeof(r.digest));
	r.flags &= ~CACHE_F_EXTERNAL;
	if ((rc = encode_adopt(f->c, &j->key, cache_fingerprint(&r), rec->size,
	    rec, WEBAPI_ENC_ZSTD, j->winner->r.level, b)) < 0)
		log_debug("no zstd copy of %s: %s", j->idhex, strerror(-rc));
}

/* Index the verified file.  @return 0 or -errno (logged). */
static int
store(struct fetch *f, struct job *j, const struct cache_record *rec)
{
	struct attempt	*a = j->winner;
	unsigned char	 digest[32];
	int		 rc;

	/* An upload (or a scan) may have stored the key meanwhile: it wins,
	 * and later requests are served it. */
	rc = cache_put_blob_if(f->c, j->blob, &j->key, rec,
	    j->upgrade ? only_better : only_new, NULL, digest);
	j->blob = NULL;		/* consumed */
	if (rc == 0 && j->z != NULL)
		keep_zstd(f, j, rec, digest);
	if (j->kept != NULL) {
		if (rc == 0) {
			struct cache_record r = *rec;

			memcpy(r.digest, digest, sizeof(r.digest));
			r.flags &= ~CACHE_F_EXTERNAL;
			stream_keep(j->kept, 1, cache_fingerprint(&r),
			    rec->last_modified);
		}
		stream_unref(j->kept);
		j->kept = NULL;
	}
	if (rc == 0 && j->key.kind == CACHE_DEBUGINFO && f->on_dbg != NULL)
		f->on_dbg(f->on_dbg_ctx, &j->key);
	/* What an upstream sent goes to those that keep copies (the
	 * bucket, for every replica); what came from one is there. */
	if (rc == 0)
		write_back(f, j, a->up);
	/* A delete or a replacement through another replica, told while
	 * these bytes came: they may be the sender's old ones. */
	if (rc == 0 && changed(f, j, a->up))
		(void)cache_drop(f->c, &j->key);
	if (rc == -ECANCELED)
		rc = 0;
	if (rc < 0) {
		log_limited("cannot store", NULL,
		    "cannot store %s %s from %s: %s",
		    kind_name(j->key.kind), j->idhex, a->up->spec.name,
		    strerror(-rc));
		return rc;
	}
	breaker_count(a->up->br, BREAKER_HIT);
	return 0;
}

static size_t	start_tier(struct fetch *, struct job *, int);

/* Has any upstream's copy of j's key changed since j started? */
static int
changed_any(struct fetch *f, const struct job *j)
{
	size_t i;

	for (i = 0; i < f->nup; i++)
		if (changed(f, j, &f->up[i]))
			return 1;
	return 0;
}

/* Decide a job whose attempts have all ended without a winner. */
static void
job_settle(struct fetch *f, struct job *j)
{
	size_t	i;
	int	running = 0, cancelled = 0;

	for (i = 0; i < j->natt; i++) {
		running += j->att[i].state == A_RUNNING;
		cancelled += j->att[i].state == A_CANCELLED;
	}
	if (running > 0 || j->winner != NULL)
		return;
	if (cancelled > 0) {
		/* The winner failed after the others were cancelled: ask them
		 * again. */
		for (i = 0; i < j->natt; i++) {
			struct attempt *a = &j->att[i];

			if (a->state != A_CANCELLED)
				continue;
			attempt_free(a);
			if (attempt_start(f, a) < 0) {
				a->state = A_DONE;
				j->transient = 1;
				breaker_no_result(a->up->br);
			}
		}
		for (i = 0; i < j->natt; i++)
			if (j->att[i].state == A_RUNNING)
				return;
	}
	/* Tier 0 (the bucket) has nothing, or cannot say: tier 1. */
	if (j->tier == 0 && start_tier(f, j, 1) > 0) {
		for (i = 0; i < j->natt; i++)
			if (j->att[i].state == A_RUNNING)
				return;
	}
	if (j->toobig && !j->transient) {
		job_finish(f, j, FETCH_TOOBIG, NULL);
	} else if (j->transient) {
		job_finish(f, j, FETCH_TRANSIENT, NULL);
	} else if (j->unsupported) {
		job_finish(f, j, FETCH_UNSUPPORTED, NULL);
	} else {
		/*
		 * The 404 goes out before the negative entry's synced commit
		 * (0.5 ms here).  A request for the key meanwhile is queued
		 * to this thread, and job_start() finds the entry.
		 */
		job_answer(f, j, FETCH_NOTFOUND, NULL);
		if (cache_put_negative(f->c, &j->key, clock_wall_s(),
		    f->ttls, f->nttls) < 0)
			log_debug("no negative entry for %s", j->idhex);
		/* An upload through another replica, told while the
		 * upstreams were asked: the bucket's 404 may predate it. */
		else if (changed_any(f, j))
			(void)cache_forget_negative(f->c, &j->key);
		job_release(f, j);
	}
}

/* One attempt ended (curl finished it, or its first byte never came). */
static void
attempt_done(struct fetch *f, struct attempt *a, CURLcode res)
{
	struct job	*j = a->job;
	struct upstream	*u = a->up;
	long		 code = 0;
	int		 transport = 0;

	curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &code);
	curl_multi_remove_handle(f->multi, a->easy);
	a->state = A_DONE;

	if (j->winner == a) {
		struct cache_record rec;

		if (res == CURLE_OK && code == 200 && verify(f, j, &rec) == 0) {
			breaker_result(u->br, 0);
			/* A store that fails (a full disk) costs later requests
			 * a fetch; the waiters have their bytes already. */
			commit(f, j, &rec);
			return;
		}
		/* The winner failed: its bytes go, the others get a chance.
		 * A bucket's object that lied is replaced by what an
		 * upstream sends. */
		if (res == CURLE_OK && code == 200)
			a->bad = 1;
		/* Its readers are cut off before the tail. */
		stream_end(f, j, S_FAILED);
		j->head_done = 0;
		j->head_need = 0;
		cache_blob_abort(j->blob);
		j->blob = NULL;
		upzstd_free(j->z);
		j->z = NULL;
		j->winner = NULL;
		if (j->toobig || res == CURLE_FILESIZE_EXCEEDED) {
			breaker_count(u->br, BREAKER_TOOBIG);
			j->toobig = 1;
			breaker_result(u->br, 0);
		} else if (res == CURLE_OK || res == CURLE_WRITE_ERROR) {
			/* It lied, or our disk is full: not its health. */
			j->transient = 1;
			breaker_result(u->br, 0);
		} else {
			transport = 1;
		}
		j->write_failed = 0;
	} else if (res == CURLE_WRITE_ERROR && j->winner != NULL) {
		/* It lost to another 200 in the same round. */
		a->state = A_CANCELLED;
		breaker_count(u->br, BREAKER_CANCELLED);
	} else if (res == CURLE_WRITE_ERROR && j->write_failed) {
		/* Our store refused the bytes: not the upstream's health. */
		j->transient = 1;
		breaker_result(u->br, 0);
	} else if (res == CURLE_FILESIZE_EXCEEDED) {
		breaker_count(u->br, BREAKER_TOOBIG);
		j->toobig = 1;
		breaker_result(u->br, 0);
	} else if (res != CURLE_OK) {
		transport = 1;
	} else if (code == 404 || code == 200) {
		/* A 200 with no body is libdebuginfod's "not found" too. */
		breaker_count(u->br, BREAKER_NOTFOUND);
		breaker_result(u->br, 0);
	} else if (code == 406) {
		breaker_count(u->br, BREAKER_TOOBIG);
		j->toobig = 1;
		breaker_result(u->br, 0);
	} else if (code == 503 && j->key.kind == CACHE_SECTION) {
		/* elfutils' way of saying "fetch the file, cut it yourself". */
		breaker_count(u->br, BREAKER_HTTP_ERROR);
		j->unsupported = 1;
		breaker_result(u->br, 0);
	} else {
		breaker_count(u->br, BREAKER_HTTP_ERROR);
		j->transient = 1;
		breaker_result(u->br, 0);
		log_debug("upstream %s: HTTP %ld for %s", u->spec.name, code,
		    j->idhex);
	}
	if (transport) {
		breaker_count(u->br, res == CURLE_OPERATION_TIMEDOUT ?
		    BREAKER_TIMEOUT : BREAKER_TRANSPORT);
		j->transient = 1;
		breaker_result(u->br, 1);
		log_debug("upstream %s: %s for %s", u->spec.name,
		    a->err[0] ? a->err : curl_easy_strerror(res), j->idhex);
	}
	job_settle(f, j);
}

/* Ask every eligible upstream of tier at once (an attempt each, after
 * the job's earlier ones).  @return how many were eligible. */
static size_t
start_tier(struct fetch *f, struct job *j, int tier)
{
	int64_t	now = clock_ms();
	size_t	i, n = 0;

	j->tier = tier;
	for (i = 0; i < f->nup; i++) {
		struct upstream	*u = &f->up[i];
		struct attempt	*a = &j->att[j->natt];

		if (u->tier != tier || !(u->spec.kinds & (1u << j->key.kind)) ||
		    (u->kind->holds != NULL && !u->kind->holds(u, &j->key)))
			continue;
		n++;
		if (!breaker_allows(u->br, now)) {
			j->transient = 1;
			continue;
		}
		a->job = j;
		a->up = u;
		j->natt++;
		if (attempt_start(f, a) < 0) {
			a->state = A_DONE;
			j->transient = 1;
			breaker_no_result(u->br);
		}
	}
	return n;
}

/* Start a job: tier 0 (the bucket), or else tier 1, an attempt per
 * eligible upstream. */
static void
job_start(struct fetch *f, struct job *j)
{
	struct cache_record	rec;
	int64_t			now = clock_ms();
	size_t			i;
	int			rc;

	j->next = f->jobs;
	f->jobs = j;
	INC(f->inflight);
	/*
	 * A job for this key may have ended between the client's miss and
	 * now (the HTTP thread looked before queueing): what it stored
	 * answers this one too.
	 */
	rc = j->upgrade ? -ENOENT :
	    cache_get(f->c, &j->key, clock_wall_s(), &rec);
	if (rc == 0) {
		cache_record_release(&rec);
		job_finish(f, j, FETCH_OK, "store");
		return;
	}
	if (rc == -ENODATA) {
		job_finish(f, j, FETCH_NOTFOUND, NULL);
		return;
	}
	INC(f->started_jobs);
	atomic_store(&f->last_job_ms, now);
	for (i = 0; i < f->nup; i++)
		if (f->up[i].kind->mark != NULL)
			j->marks[i] = f->up[i].kind->mark(&f->up[i]);
	/* Tier 0 (the bucket) first; when none of it can have the key, tier
	 * 1; and only tier 1 for a better copy than the store's, which may
	 * be tier 0's. */
	if (j->upgrade || start_tier(f, j, 0) == 0)
		(void)start_tier(f, j, 1);
	/* No upstream cuts sections: let the caller fetch the file. */
	if (j->natt == 0 && j->key.kind == CACHE_SECTION && !j->transient)
		j->unsupported = 1;
	job_settle(f, j);
}

static struct job *
job_find(struct fetch *f, const struct job *like)
{
	struct job *j;

	for (j = f->jobs; j != NULL; j = j->next)
		if (j->klen == like->klen &&
		    memcmp(j->kb, like->kb, j->klen) == 0)
			return j;
	return NULL;
}

/* Take what fetch_request() queued: join running jobs or start new ones. */
static void
take_queue(struct fetch *f)
{
	struct job *q, *j, *next;

	pthread_mutex_lock(&f->mu);
	q = f->queue;
	f->queue = NULL;
	pthread_mutex_unlock(&f->mu);
	for (; q != NULL; q = next) {
		next = q->next;
		if ((j = job_find(f, q)) != NULL) {
			q->waiters->next = j->waiters;
			j->waiters = q->waiters;
			q->waiters = NULL;
			INC(f->coalesced);
			job_free(q);
			/* Being stored: the bytes are at hand already;
			 * or arriving, their head checked. */
			if (j->committing)
				serve_early(f, j, j->sfd, &j->srec);
			else if (j->stream != NULL)
				serve_stream(f, j);
			continue;
		}
		job_start(f, q);
	}
}

/* Attempts whose first byte is overdue are given up as timeouts. */
static int64_t
check_deadlines(struct fetch *f)
{
	struct job	*j, *next;
	int64_t		 now = clock_ms(), soonest = 1000, left;
	size_t		 i;

	for (j = f->jobs; j != NULL; j = next) {
		next = j->next;
		for (i = 0; i < j->natt; i++) {
			struct attempt *a = &j->att[i];

			if (a->state != A_RUNNING || a->got_header ||
			    a->up->spec.first_byte == 0)
				continue;
			left = a->started + (int64_t)a->up->spec.first_byte *
			    1000 - now;
			if (left <= 0) {
				snprintf(a->err, sizeof(a->err),
				    "no answer within %" PRIu64 " s",
				    a->up->spec.first_byte);
				attempt_done(f, a, CURLE_OPERATION_TIMEDOUT);
				break;	/* j may be gone */
			}
			if (left < soonest)
				soonest = left;
		}
	}
	return soonest;
}

static void
cancel_losers(struct fetch *f)
{
	struct job	*j;
	size_t		 i;

	for (j = f->jobs; j != NULL; j = j->next) {
		if (!j->cancel_others)
			continue;
		j->cancel_others = 0;
		for (i = 0; i < j->natt; i++)
			if (&j->att[i] != j->winner)
				cancel(f, &j->att[i]);
	}
}

static void *
run(void *arg)
{
	struct fetch	*f = arg;
	struct CURLMsg	*m;
	int		 running, left, stop;
	int64_t		 wait, sw;

	f->have_sthread = pthread_create(&f->sthread, NULL, store_run, f) == 0;
	if (!f->have_sthread)
		log_warnx("no store thread: storing on the fetch thread");
	for (;;) {
		pthread_mutex_lock(&f->mu);
		stop = f->stop;
		pthread_mutex_unlock(&f->mu);
		if (stop)
			break;
		take_stored(f);
		take_queue(f);
		curl_multi_perform(f->multi, &running);
		cancel_losers(f);
		while ((m = curl_multi_info_read(f->multi, &left)) != NULL) {
			struct attempt *a;

			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE,
			    (char **)&a);
			attempt_done(f, a, m->data.result);
		}
		wait = check_deadlines(f);
		if ((sw = stream_flush(f)) >= 0 && sw < wait)
			wait = sw;
		curl_multi_poll(f->multi, NULL, 0, (int)(wait > 0 ? wait : 1),
		    NULL);
	}
	/* Let the store thread finish what it has, then answer its waiters;
	 * whoever else still waits hears "try again". */
	if (f->have_sthread) {
		pthread_mutex_lock(&f->smu);
		f->sstop = 1;
		pthread_cond_signal(&f->scv);
		pthread_mutex_unlock(&f->smu);
		pthread_join(f->sthread, NULL);
		f->have_sthread = 0;
		take_stored(f);
	}
	while (f->jobs != NULL)
		job_finish(f, f->jobs, FETCH_TRANSIENT, NULL);
	return NULL;
}

/*
 * The API.
 */

/* X-Forwarded-For to send: what the client sent, and the client. */
static char *
chain(const char *received, const char *peer)
{
	char	*s;
	int	 n;

	if (peer == NULL)
		peer = "unknown";
	if (received != NULL && *received != '\0')
		n = asprintf(&s, "%s, %s", received, peer);
	else
		n = asprintf(&s, "%s", peer);
	return n < 0 ? NULL : s;
}

/*
 * The User-Agent upstreams see: the client's, which elfutils' debuginfod
 * also passes on when it federates, with this hub's mark appended.  It is
 * the one header that survives a hop through a server that drops
 * X-Symhub-Via, so a request that comes back through one is known as a
 * loop (fetch_loop()).  Over UA_MAX bytes the client's part is cut.
 */
static char *
ua_chain(const char *ua, const char *via)
{
	char	*s;

	if (ua == NULL || *ua == '\0')
		ua = "symhubd/" PACKAGE_VERSION;
	if (asprintf(&s, "%.*s %s%s", UA_MAX, ua, UA_VIA, via) < 0)
		return NULL;
	return s;
}

int
fetch_request(struct fetch *f, const struct fetch_req *req,
    fetch_done_fn done, void *ctx)
{
	struct job	*j;
	size_t		 el;
	int		 stop;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -ENOMEM;
	j->f = f;
	j->sfd = -1;
	j->key = req->key;
	memcpy(j->id, req->key.id, req->key.idlen);
	j->key.id = j->id;
	j->maxsize = req->maxsize;
	el = req->key.extra ? strlen(req->key.extra) : 0;
	j->upgrade = req->upgrade;
	j->klen = 3 + req->key.idlen + 8 + el;
	if ((j->kb = malloc(j->klen)) == NULL ||
	    (j->att = calloc(f->nup ? f->nup : 1, sizeof(*j->att))) == NULL ||
	    (j->marks = calloc(f->nup ? f->nup : 1, sizeof(*j->marks))) ==
	    NULL ||
	    (j->waiters = calloc(1, sizeof(*j->waiters))) == NULL ||
	    (j->idhex = strdup(req->idhex)) == NULL ||
	    (req->key.extra && (j->extra = strdup(req->key.extra)) == NULL) ||
	    (req->raw_extra &&
	    (j->raw_extra = strdup(req->raw_extra)) == NULL) ||
	    (j->ua = ua_chain(req->user_agent, f->via)) == NULL ||
	    (j->xff = chain(req->forwarded_for, req->peer)) == NULL ||
	    (req->via && (j->via = strdup(req->via)) == NULL)) {
		job_free(j);
		return -ENOMEM;
	}
	j->key.extra = j->extra;
	/* Requests with the same key and maximum size share one job. */
	j->kb[0] = (unsigned char)req->key.kind;
	j->kb[1] = (unsigned char)req->key.idlen;
	memcpy(j->kb + 2, req->key.id, req->key.idlen);
	memcpy(j->kb + 2 + req->key.idlen, &req->maxsize, 8);
	j->kb[10 + req->key.idlen] = (unsigned char)(req->upgrade != 0);
	if (el)
		memcpy(j->kb + 11 + req->key.idlen, req->key.extra, el);
	j->waiters->done = done;
	j->waiters->ctx = ctx;
	j->waiters->want_bytes = req->want_bytes;
	j->waiters->want_stream = req->want_bytes && req->want_stream;

	pthread_mutex_lock(&f->mu);
	if (!(stop = f->stop)) {
		j->next = f->queue;
		f->queue = j;
	}
	pthread_mutex_unlock(&f->mu);
	if (stop) {
		job_free(j);
		return -ECANCELED;
	}
	curl_multi_wakeup(f->multi);
	return 0;
}

int
fetch_side_handle(struct fetch *f, size_t i, const char *path,
    unsigned kinds, const struct fetch_req *req, CURL **easy,
    struct curl_slist **hdrs)
{
	struct upstream		*u;
	struct upstream_ask	 ask;
	char			*url = NULL, *ua = NULL, *xff = NULL;
	int			 rc;

	*easy = NULL;
	*hdrs = NULL;
	if (i >= f->nup)
		return -ENOENT;
	u = &f->up[i];
	/* A kind without side() answers no /metadata: the bucket is this
	 * hub's own store, which the query walks already. */
	if (!(u->spec.kinds & kinds) || u->kind->side == NULL)
		return -EPERM;
	if (breaker_state(u->br) == BREAKER_OPEN)
		return -EAGAIN;
	if (asprintf(&url, "%s%s", u->spec.url, path) < 0)
		url = NULL;
	if (url == NULL || (ua = ua_chain(req->user_agent, f->via)) == NULL ||
	    (xff = chain(req->forwarded_for, req->peer)) == NULL)
		rc = -ENOMEM;
	else {
		memset(&ask, 0, sizeof(ask));
		ask.ua = ua;
		ask.xff = xff;
		ask.via = req->via;
		ask.hub = f->via;
		rc = u->kind->side(u, url, &ask, easy, hdrs);
	}
	/* libcurl copied the strings (the headers live in *hdrs). */
	free(url);
	free(ua);
	free(xff);
	if (rc < 0) {
		curl_easy_cleanup(*easy);
		curl_slist_free_all(*hdrs);
		*easy = NULL;
		*hdrs = NULL;
	}
	return rc;
}

void
fetch_on_debuginfo(struct fetch *f, fetch_new_fn fn, void *ctx)
{
	f->on_dbg = fn;
	f->on_dbg_ctx = ctx;
}

int
fetch_may_ask(const struct fetch *f, const char *forwarded_for)
{
	const char	*p;
	uint64_t	 hops = 0;

	/* Federation chains end here, as in elfutils: each hub appends one
	 * address, and past the limit a miss is a miss. */
	if (forwarded_for != NULL && *forwarded_for != '\0')
		for (p = forwarded_for, hops = 1; *p; p++)
			hops += *p == ',';
	return f->fwd_hops == 0 || hops < f->fwd_hops;
}

int
fetch_loop(const struct fetch *f, const char *via, const char *user_agent)
{
	char mark[sizeof(UA_VIA) + sizeof(f->via)];

	snprintf(mark, sizeof(mark), "%s%s", UA_VIA, f->via);
	return (via != NULL && strstr(via, f->via) != NULL) ||
	    (user_agent != NULL && strstr(user_agent, mark) != NULL);
}

int
fetch_upgrade_possible(const struct cache_key *key,
    const struct cache_record *rec)
{
	return key->kind == CACHE_DEBUGINFO &&
	    !(rec->quality & ELFINFO_Q_DEBUG_INFO);
}

int
fetch_upgrade_due(struct fetch *f, const struct cache_key *key,
    const struct cache_record *rec)
{
	int64_t now = clock_wall_s();

	/* Asked at most once per negative-ttl: the mark is the store's. */
	return fetch_upgrade_possible(key, rec) &&
	    cache_checked(f->c, key, now) == 0 &&
	    cache_mark_checked(f->c, key, now + fetch_negative_ttl(f)) == 0;
}

int64_t
fetch_negative_ttl(const struct fetch *f)
{
	return f->ttls[0];	/* config_parse_ttls gives at least one */
}

int
fetch_create(struct cache *c, const struct config *cfg, struct bucket *b,
    struct fetch **out)
{
	struct fetch	*f;
	unsigned char	 rnd[16];
	unsigned	 codings;
	size_t		 i, k;
	int		 rc;

	*out = NULL;
	if (cfg->upstreams.n == 0 && b == NULL)
		return 0;
	if ((f = calloc(1, sizeof(*f))) == NULL)
		return -ENOMEM;
	f->c = c;
	pthread_mutex_init(&f->mu, NULL);
	pthread_mutex_init(&f->smu, NULL);
	pthread_cond_init(&f->scv, NULL);
	f->cfg_squeue_max = cfg->store_queue_max;
	f->cfg_squeue_bytes = cfg->store_queue_bytes;
	f->fwd_hops = cfg->fwd_hops;
	f->keep_zstd = config_parse_codings(cfg->compress, &codings) == 0 &&
	    (codings & WEBAPI_ENC_ZSTD);
	if ((rc = config_parse_ttls(cfg->negative_ttl, &f->ttls,
	    &f->nttls)) < 0)
		goto out;
	if ((f->up = calloc(cfg->upstreams.n + 1, sizeof(*f->up))) == NULL ||
	    (f->br = calloc(cfg->upstreams.n + 1, sizeof(*f->br))) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	/* The bucket is upstream 0; each --upstream's kind is its URL's. */
	if (b != NULL && (rc = upstream_open(&f->up[f->nup++],
	    &upstream_bucket, cfg, cfg->s3, b)) < 0)
		goto out;
	for (k = 0; k < cfg->upstreams.n; k++) {
		const char			*spec = cfg->upstreams.v[k];
		const struct upstream_kind	*kind;

		if ((kind = upstream_kind_of(spec)) == NULL)
			kind = &upstream_debuginfod;	/* it says why not */
		if ((rc = upstream_open(&f->up[f->nup++], kind, cfg, spec,
		    NULL)) < 0)
			goto out;
	}
	for (i = 0; i < f->nup; i++) {
		f->up[i].br = &f->br[i];
		breaker_init(&f->br[i], f->up[i].spec.name,
		    (unsigned)cfg->breaker_failures,
		    (int64_t)cfg->breaker_cooldown * 1000);
	}
	if (getentropy(rnd, sizeof(rnd)) != 0) {
		rc = -errno;
		goto out;
	}
	hex_encode(rnd, sizeof(rnd), f->via);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK ||
	    (f->multi = curl_multi_init()) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	curl_multi_setopt(f->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
	if ((rc = pthread_create(&f->thread, NULL, run, f)) != 0) {
		rc = -rc;
		goto out;
	}
	f->started = 1;
	*out = f;
	return 0;
out:
	fetch_free(f);
	return rc;
}

void
fetch_stop(struct fetch *f)
{
	struct job	*q, *n;

	if (f == NULL || !f->started)
		return;
	pthread_mutex_lock(&f->mu);
	f->stop = 1;
	pthread_mutex_unlock(&f->mu);
	curl_multi_wakeup(f->multi);
	pthread_join(f->thread, NULL);
	f->started = 0;
	/* Requests queued after the thread's last look; no more can come. */
	pthread_mutex_lock(&f->mu);
	q = f->queue;
	f->queue = NULL;
	pthread_mutex_unlock(&f->mu);
	for (; q != NULL; q = n) {
		n = q->next;
		q->waiters->done(q->waiters->ctx, FETCH_TRANSIENT, NULL, NULL);
		job_free(q);
	}
}

void
fetch_free(struct fetch *f)
{
	size_t i;

	if (f == NULL)
		return;
	fetch_stop(f);
	for (i = 0; i < f->nup; i++)
		upstream_close(&f->up[i]);
	if (f->multi != NULL)
		curl_multi_cleanup(f->multi);
	pthread_mutex_destroy(&f->mu);
	pthread_mutex_destroy(&f->smu);
	pthread_cond_destroy(&f->scv);
	free(f->up);
	free(f->br);
	free(f->ttls);
	free(f);
}

void
fetch_metrics(struct fetch *f, FILE *fp)
{
	fprintf(fp, "# TYPE symhub_fetch_inflight gauge\n"
	    "symhub_fetch_inflight %llu\n"
	    "# TYPE symhub_fetch_jobs_total counter\n"
	    "symhub_fetch_jobs_total %llu\n"
	    "# TYPE symhub_fetch_coalesced_total counter\n"
	    "symhub_fetch_coalesced_total %llu\n"
	    "# TYPE symhub_fetch_streams_total counter\n"
	    "symhub_fetch_streams_total %llu\n"
	    "# TYPE symhub_fetch_streamed_total counter\n"
	    "symhub_fetch_streamed_total %llu\n"
	    "# TYPE symhub_fetch_streams_cut_total counter\n"
	    "symhub_fetch_streams_cut_total %llu\n",
	    (unsigned long long)GET(f->inflight),
	    (unsigned long long)GET(f->started_jobs),
	    (unsigned long long)GET(f->coalesced),
	    (unsigned long long)GET(f->streams),
	    (unsigned long long)GET(f->streamed),
	    (unsigned long long)GET(f->streams_cut));
	pthread_mutex_lock(&f->smu);
	fprintf(fp, "# TYPE symhub_fetch_store_queue gauge\n"
	    "symhub_fetch_store_queue %zu\n"
	    "# TYPE symhub_fetch_store_queue_bytes gauge\n"
	    "symhub_fetch_store_queue_bytes %llu\n"
	    "# TYPE symhub_fetch_store_pushback_total counter\n"
	    "symhub_fetch_store_pushback_total %llu\n", f->squeue_n,
	    (unsigned long long)f->squeue_bytes,
	    (unsigned long long)f->squeue_pushback);
	pthread_mutex_unlock(&f->smu);
	breaker_metrics(f->br, f->nup, fp);
}

size_t
fetch_upstreams(const struct fetch *f)
{
	return f->nup;
}

int
fetch_upstream(struct fetch *f, size_t i, struct fetch_upstream *out)
{
	struct upstream		*u;
	struct breaker_counts	 bc;

	if (i >= f->nup)
		return -ENOENT;
	u = &f->up[i];
	breaker_read(u->br, &bc);
	memset(out, 0, sizeof(*out));
	out->name = u->spec.name;
	out->url = u->spec.url;
	out->breaker = (int)bc.state;
	out->hits = bc.hits;
	out->notfound = bc.notfound;
	out->failures = bc.failures;
	out->bytes = bc.bytes;
	out->first_byte_ms = bc.first_byte_ms;
	return 0;
}
