/*
 * bucket: the S3 tier's writes and events.  See bucket.h.
 *
 * Threads: --s3-writers writers take jobs from one queue (uploads and
 * deletes first, then write-backs whose time has come); one poller lists
 * events/ every POLL_MS.  The queue's lock guards the queue and the stop
 * flag only; counters are atomics.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1	/* memfd_create */
#endif

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/counter.h"
#include "base/hex.h"
#include "base/strmap.h"
#include "common/elfinfo.h"
#include "common/kind.h"
#include "common/webapi.h"
#include "s3/s3.h"
#include "s3/s3conf.h"
#include "bucket.h"
#include "event.h"
#include "log.h"

#define EVENT_KEEP_S	(7 * 86400)	/* events older are removed */
#define POLL_MS		1000		/* between two looks at events/ */
#define RECENT_S	30		/* events listed at each look */
#define EVENT_WINDOW_S	900		/* ... and at a look every WIDE_S */
#define WIDE_S		60
#define NSLOTS		256		/* bucket_changed_since()'s */
#define RETRIES		5		/* write-back tries, 1 s apart, then
					 * 2, 4, 8 */
#define OBJ_MAX		(S3_KEY_MAX + 1)

enum bjob_type { J_UPLOAD, J_DELETE, J_WRITEBACK };

struct bjob {
	struct bjob		*next;
	enum bjob_type		 type;
	struct cache_key	 key;
	unsigned char		 id[CACHE_ID_MAX];
	char			*extra;
	bucket_done_fn		 done;
	void			*ctx;
	int			 tries;
	int64_t			 due_ms;	/* not before */
	int			 mode;		/* put_record()'s */
	/* An upload's bytes, opened when it was queued: what the client
	 * sent, whatever the store does with the key meanwhile. */
	int			 have_rec;
	struct cache_record	 rec;
	int			 fd;
	char			 parent[65];	/* GSYM: its debuginfo's SHA-256 */
};

enum { C_PUT, C_SKIPPED, C_PUT_FAILED, C_WB_QUEUED, C_WB_DROPPED,
	C_WB_FAILED, C_DELETED, C_DELETE_FAILED, C_EVENTS_WRITTEN,
	C_EVENTS_APPLIED, C_POLL_FAILED, C_STAGING_DELETED, C_N };

static const char *cnames[C_N] = {
	"symhub_bucket_puts_total", "symhub_bucket_puts_skipped_total",
	"symhub_bucket_put_failures_total",
	"symhub_bucket_writebacks_queued_total",
	"symhub_bucket_writebacks_dropped_total",
	"symhub_bucket_writeback_failures_total",
	"symhub_bucket_deletes_total", "symhub_bucket_delete_failures_total",
	"symhub_bucket_events_written_total",
	"symhub_bucket_events_applied_total",
	"symhub_bucket_poll_failures_total",
	"symhub_bucket_staging_deleted_total",
};

struct bucket {
	struct cache		*c;
	struct s3		*s3;
	char			*url;		/* --s3, for the log */
	char			 replica[17];	/* hex, for event names */
	atomic_uint		 seq;
	uint64_t		 queue_max;
	atomic_int		 no_cond;	/* the server refused
						 * If-None-Match once */

	pthread_mutex_t		 mu;
	pthread_cond_t		 cv;		/* writers: a job, or stop */
	pthread_cond_t		 pcv;		/* the poller: stop */
	struct bjob		*urgent;	/* uploads, deletes: FIFO */
	struct bjob		**urgent_tail;
	struct bjob		*backlog;	/* write-backs: FIFO */
	struct bjob		**backlog_tail;
	size_t			 nbacklog;
	int			 stop;
	pthread_t		*writers;
	size_t			 nwriters;
	pthread_t		 poller;
	int			 have_poller;

	struct strmap		 seen;		/* events applied; poller */
	int			 caught_up;	/* poller: a full listing
						 * was applied */
	int64_t			 full_ms;	/* poller: last full listing */
	int64_t			 wide_ms;	/* poller: last EVENT_WINDOW_S */
	/* Events applied, and the number of the last one applied to each
	 * slot of keys: written by the poller before it forgets a miss,
	 * read by the fetch engine after it remembers one. */
	atomic_uint_fast64_t	 applied;
	atomic_uint_fast64_t	 slot[NSLOTS];
	int64_t			 staging_keep_s; /* 0: staging/ kept */
	int64_t			 staging_ms;	/* poller: last look at it */

	atomic_int		 healthy;
	atomic_uint_fast64_t	 count[C_N];
};


/* Note how the bucket answered: a definite answer (found, not found, there
 * already, cannot do that) is health; anything else is not. */
static int
heard(struct bucket *b, int rc)
{
	int ok = rc == 0 || rc == -ENOENT || rc == -EEXIST || rc == -ENOTSUP;

	if (atomic_exchange(&b->healthy, ok) != ok) {
		if (ok)
			log_info("bucket: reachable again");
		else
			log_warnx("bucket: %s (HTTP %ld %s)", strerror(-rc),
			    s3_last()->http, s3_last()->code);
	}
	return rc;
}

int
bucket_object(const struct cache_key *key, char *out, size_t outsz)
{
	char	hex[2 * CACHE_ID_MAX + 1];
	int	n;

	if (key->idlen == 0 || key->idlen > CACHE_ID_MAX)
		return -EINVAL;
	if (key->kind != CACHE_DEBUGINFO && key->kind != CACHE_EXECUTABLE &&
	    key->kind != CACHE_SOURCE && key->kind != CACHE_GSYM &&
	    key->kind != CACHE_BUNDLE)
		return -EINVAL;
	if (key->kind == CACHE_SOURCE && (key->extra == NULL ||
	    key->extra[0] != '/'))
		return -EINVAL;
	hex_encode(key->id, key->idlen, hex);
	n = snprintf(out, outsz, "buildid/%s/%s%s", hex, kind_name(key->kind),
	    key->kind == CACHE_SOURCE ? key->extra : "");
	if (n < 0 || (size_t)n >= outsz || n > S3_KEY_MAX)
		return -ENAMETOOLONG;
	/* A name S3 cannot hold (not UTF-8, a control character): the
	 * bucket cannot have it, which is not the bucket's failure. */
	return s3_key_check(out) < 0 ? -EINVAL : n;
}

int
bucket_can_hold(const struct cache_key *key)
{
	char obj[OBJ_MAX];

	return bucket_object(key, obj, sizeof(obj)) >= 0;
}

int
bucket_get_setup(struct bucket *b, const struct cache_key *key, CURL *easy,
    struct curl_slist **hdrs)
{
	char	obj[OBJ_MAX];
	int	rc;

	if ((rc = bucket_object(key, obj, sizeof(obj))) < 0)
		return rc;
	return s3_get_setup(b->s3, obj, easy, hdrs);
}

/*
 * The queue.
 */

static void
job_free(struct bjob *j)
{
	if (j == NULL)
		return;
	if (j->fd >= 0)
		close(j->fd);
	if (j->have_rec)
		cache_record_release(&j->rec);
	free(j->extra);
	free(j);
}

static struct bjob *
job_new(enum bjob_type type, const struct cache_key *key,
    bucket_done_fn done, void *ctx)
{
	struct bjob	*j;

	if (key->idlen == 0 || key->idlen > CACHE_ID_MAX ||
	    (j = calloc(1, sizeof(*j))) == NULL)
		return NULL;
	j->type = type;
	j->key = *key;
	memcpy(j->id, key->id, key->idlen);
	j->key.id = j->id;
	if (key->extra != NULL && (j->extra = strdup(key->extra)) == NULL) {
		free(j);
		return NULL;
	}
	j->key.extra = j->extra;
	j->done = done;
	j->ctx = ctx;
	j->fd = -1;
	return j;
}

/* Append j to the write-backs.  Called with b->mu held. */
static void
backlog_push(struct bucket *b, struct bjob *j)
{
	*b->backlog_tail = j;
	b->backlog_tail = &j->next;
	b->nbacklog++;
	pthread_cond_signal(&b->cv);
}

static int
enqueue(struct bucket *b, struct bjob *j)
{
	pthread_mutex_lock(&b->mu);
	if (b->stop) {
		pthread_mutex_unlock(&b->mu);
		return -ECANCELED;
	}
	if (j->type == J_WRITEBACK) {
		if (b->nbacklog >= b->queue_max) {
			pthread_mutex_unlock(&b->mu);
			INC(b->count[C_WB_DROPPED]);
			return -ENOSPC;
		}
		backlog_push(b, j);
	} else {
		*b->urgent_tail = j;
		b->urgent_tail = &j->next;
	}
	pthread_cond_signal(&b->cv);
	pthread_mutex_unlock(&b->mu);
	return 0;
}

/* The next job for a writer: an urgent one, else the first write-back
 * that is due; NULL once stopped.  Called with b->mu held. */
static struct bjob *
take(struct bucket *b)
{
	struct bjob	**pp, *j;
	struct timespec	  until;
	int64_t		  now, next;

	for (;;) {
		if (b->stop)
			return NULL;
		if ((j = b->urgent) != NULL) {
			if ((b->urgent = j->next) == NULL)
				b->urgent_tail = &b->urgent;
			j->next = NULL;
			return j;
		}
		now = clock_ms();
		next = INT64_MAX;
		for (pp = &b->backlog; (j = *pp) != NULL; pp = &j->next) {
			if (j->due_ms <= now) {
				if ((*pp = j->next) == NULL)
					b->backlog_tail = pp;
				j->next = NULL;
				b->nbacklog--;
				return j;
			}
			if (j->due_ms < next)
				next = j->due_ms;
		}
		if (next == INT64_MAX) {
			pthread_cond_wait(&b->cv, &b->mu);
		} else {
			until = clock_deadline(next - now);
			pthread_cond_timedwait(&b->cv, &b->mu, &until);
		}
	}
}

/*
 * Writing.
 */

/* A metadata value S3 takes: printable ASCII, no space at either end,
 * not too long.  Anything else is left out (the header is optional). */
static int
meta_ok(const char *v)
{
	size_t	n, i;

	if (v == NULL || (n = strlen(v)) == 0 || n > 1024 || v[0] == ' ' ||
	    v[n - 1] == ' ')
		return 0;
	for (i = 0; i < n; i++)
		if (v[i] < 0x20 || v[i] > 0x7e)
			return 0;
	return 1;
}

/* Does the object's x-amz-meta-sha256 say these bytes? */
static int
same_bytes(const struct s3_info *info, const char *hex)
{
	const char *v = s3_info_meta(info, "sha256");

	return v != NULL && strcmp(v, hex) == 0;
}

/* put_record() modes. */
#define PUT_BACK	0	/* a write-back: never over an object as good */
#define PUT_REPAIR	1	/* a write-back over an object that failed its
				 * check: replaces it */
#define PUT_UPLOAD	2	/* an upload: over a worse object */
#define PUT_FORCE	3	/* an upload the uploader insists on */

/* The rank of the object's copy (x-amz-meta-quality), or -1 unknown. */
static long
object_rank(const struct s3_info *info)
{
	const char	*v = s3_info_meta(info, "quality");
	char		*end;
	unsigned long	 q;

	if (v == NULL)
		return -1;
	q = strtoul(v, &end, 10);
	if (*end != '\0' || q > UINT32_MAX)
		return -1;
	return (long)elfinfo_score((uint32_t)q);
}

/*
 * Where the server takes no conditional writes: the bytes go first to a
 * name of their own, staging/SHA256 (two writers of the same bytes
 * write the same object; of different bytes, different objects), then
 * the server copies that to the name in one step, and the staging object
 * goes.  A writer that finds the staging object gone (another, with the
 * same bytes, was quicker) checks the name holds them.
 */
static int
put_staged(struct bucket *b, const char *obj, int fd,
    const struct cache_record *rec, const char *hex, const char **meta)
{
	struct s3_info	info;
	char		stage[80];
	int		rc, tries;

	snprintf(stage, sizeof(stage), "staging/%s", hex);
	for (tries = 0; tries < 2; tries++) {
		if ((rc = heard(b, s3_put_fd(b->s3, stage, fd, rec->size,
		    rec->digest, 0, meta))) < 0)
			return rc;
		rc = heard(b, s3_copy(b->s3, stage, obj));
		(void)heard(b, s3_delete(b->s3, stage));
		if (rc != -ENOENT)
			return rc;
		if (heard(b, s3_head(b->s3, obj, &info)) == 0 &&
		    same_bytes(&info, hex))
			return 0;
	}
	return rc;
}

/*
 * Put a record into the bucket: rec with its bytes at fd.
 * @return 0 (stored, or there already: the same bytes, or as good a copy
 *         for a write-back); 1 for a write-back that replaced another
 *         copy; -EEXIST for an upload when the bucket's copy is as good
 *         or better (the uploader may force); -errno.
 */
static int
put_record(struct bucket *b, const struct cache_key *key,
    const struct cache_record *rec, int fd, int mode, const char *parent,
    char obj[OBJ_MAX], char hex[65])
{
	struct s3_info	 info;
	const char	*meta[14];
	char		 q[16];
	size_t		 nm = 0;
	long		 ours, theirs;
	int		 rc, replaced;

	if ((rc = bucket_object(key, obj, OBJ_MAX)) < 0)
		return rc;
	if (rec->flags & CACHE_F_EXTERNAL) {
		/* A file in place has no digest in its record. */
		hex[0] = '\0';
	} else {
		hex_encode(rec->digest, 32, hex);
		meta[nm++] = "sha256";
		meta[nm++] = hex;
	}
	if (key->kind == CACHE_DEBUGINFO || key->kind == CACHE_EXECUTABLE) {
		snprintf(q, sizeof(q), "%" PRIu32, rec->quality);
		meta[nm++] = "quality";
		meta[nm++] = q;
	}
	if (meta_ok(rec->origin)) {
		meta[nm++] = "origin";
		meta[nm++] = rec->origin;
	}
	if (meta_ok(rec->xfile)) {
		meta[nm++] = "debuginfod-file";
		meta[nm++] = rec->xfile;
	}
	if (meta_ok(rec->xarchive)) {
		meta[nm++] = "debuginfod-archive";
		meta[nm++] = rec->xarchive;
	}
	if (parent != NULL && parent[0] != '\0') {
		meta[nm++] = "parent-sha256";
		meta[nm++] = parent;
	}
	meta[nm] = NULL;
	ours = key->kind == CACHE_DEBUGINFO || key->kind == CACHE_EXECUTABLE ?
	    (long)elfinfo_score(rec->quality) : -1;

	/* A write-back where the server takes conditions: one request. */
	if (mode == PUT_BACK && !GET(b->no_cond)) {
		rc = heard(b, s3_put_fd(b->s3, obj, fd, rec->size,
		    hex[0] ? rec->digest : NULL, S3_PUT_IF_ABSENT, meta));
		if (rc == -ENOTSUP) {
			atomic_store(&b->no_cond, 1);
			log_info("bucket: no conditional writes; a HEAD "
			    "before each write, and writes staged");
		} else if (rc != -EEXIST) {
			if (rc == 0)
				INC(b->count[C_PUT]);
			goto out;
		}
	}
	rc = heard(b, s3_head(b->s3, obj, &info));
	if (rc != 0 && rc != -ENOENT)
		goto out;
	replaced = rc == 0;
	if (rc == 0) {
		theirs = object_rank(&info);
		/* There with these bytes already (a replica raced us, or
		 * the same file again): nothing to send. */
		if (hex[0] && same_bytes(&info, hex)) {
			INC(b->count[C_SKIPPED]);
			goto out;
		}
		/* Another copy of the build-id: a write-back replaces it
		 * only when strictly better (a GSYM: made from another
		 * debuginfo), an upload when better unless forced; a copy
		 * that failed its check always. */
		if (parent != NULL && parent[0] != '\0') {
			const char *v = s3_info_meta(&info, "parent-sha256");

			if (v == NULL || strcmp(v, parent) != 0)
				ours = theirs + 1;
		}
		if ((mode == PUT_BACK || mode == PUT_UPLOAD) && ours <= theirs) {
			INC(b->count[C_SKIPPED]);
			rc = mode == PUT_UPLOAD ? -EEXIST : 0;
			goto out;
		}
	}
	if (GET(b->no_cond) && hex[0])
		rc = put_staged(b, obj, fd, rec, hex, meta);
	else
		rc = heard(b, s3_put_fd(b->s3, obj, fd, rec->size,
		    hex[0] ? rec->digest : NULL, 0, meta));
	if (rc == 0) {
		INC(b->count[C_PUT]);
		/* Over another copy: the replicas holding it drop theirs
		 * (an upload's caller tells them in every case). */
		if (replaced && mode != PUT_UPLOAD && mode != PUT_FORCE &&
		    hex[0])
			rc = 1;
	}
out:
	if (rc < 0 && rc != -EEXIST)
		INC(b->count[C_PUT_FAILED]);
	return rc;
}

/* put_record() of what the store holds for key now (a write-back). */
static int
put_stored(struct bucket *b, const struct cache_key *key, int mode,
    const char *parent, char obj[OBJ_MAX], char hex[65])
{
	struct cache_record	rec;
	int			fd = -1, rc;

	if ((rc = cache_get(b->c, key, clock_wall_s(), &rec)) < 0)
		return rc == -ENODATA ? -ENOENT : rc;
	/* Bytes of a package member are not the record's to send. */
	if (rec.flags & CACHE_F_MEMBER)
		rc = -EMEDIUMTYPE;
	else if ((rc = cache_open_data(b->c, &rec, &fd)) == 0)
		rc = put_record(b, key, &rec, fd, mode, parent, obj, hex);
	if (fd >= 0)
		close(fd);
	cache_record_release(&rec);
	return rc;
}

/*
 * Tell the other replicas: an empty object whose name says it all,
 * events/MS-REPLICA-SEQ.OP.KIND.ID[.SHA256], so that one listing tells
 * a replica every event.  Best effort: a miss is also seen within the
 * negative TTL; a delete is not, so its failure is logged.
 */
static int
write_event(struct bucket *b, int del, const struct cache_key *key,
    const unsigned char *sha)
{
	struct event	e;
	char		name[EVENT_NAME_MAX + 1];
	int		fd, rc, tries;

	memset(&e, 0, sizeof(e));
	e.ms = (int64_t)(clock_wall_s() * 1000);
	memcpy(e.replica, b->replica, sizeof(e.replica));
	e.seq = atomic_fetch_add(&b->seq, 1) % 1000000;
	e.del = del;
	e.kind = key->kind;
	memcpy(e.id, key->id, key->idlen);
	e.idlen = key->idlen;
	if (sha != NULL) {
		e.have_sha = 1;
		memcpy(e.sha, sha, sizeof(e.sha));
	}
	if ((rc = event_name(&e, name, sizeof(name))) < 0)
		return rc;
	if ((fd = memfd_create("symhub-event", MFD_CLOEXEC)) < 0)
		return -errno;
	/* Three tries, a second apart: a lost delete event leaves other
	 * replicas serving a deleted copy. */
	for (tries = 0; ; tries++) {
		rc = heard(b, s3_put_fd(b->s3, name, fd, 0, NULL, 0, NULL));
		if (rc == 0 || tries >= 2 || b->stop)
			break;
		sleep(1);
	}
	close(fd);
	if (rc == 0)
		INC(b->count[C_EVENTS_WRITTEN]);
	else
		log_warnx("bucket: cannot tell the other replicas of %s: %s",
		    name, strerror(-rc));
	return rc;
}

static int
do_delete(struct bucket *b, const struct cache_key *key)
{
	char	obj[OBJ_MAX];
	int	rc, had;

	if ((rc = bucket_object(key, obj, sizeof(obj))) < 0)
		return rc;
	rc = heard(b, s3_head(b->s3, obj, NULL));
	if (rc < 0 && rc != -ENOENT)
		goto fail;
	had = rc == 0;
	if (had && (rc = heard(b, s3_delete(b->s3, obj))) < 0)
		goto fail;
	INC(b->count[C_DELETED]);
	/* Told even when this bucket had none: a replica may hold a copy
	 * from before. */
	(void)write_event(b, 1, key, NULL);
	return had ? 0 : -ENOENT;
fail:
	INC(b->count[C_DELETE_FAILED]);
	return rc;
}

static void
run_job(struct bucket *b, struct bjob *j)
{
	unsigned char	sha[32];
	char		obj[OBJ_MAX], hex[65];
	int		rc;

	switch (j->type) {
	case J_UPLOAD:
		rc = put_record(b, &j->key, &j->rec, j->fd, j->mode, NULL, obj,
		    hex);
		if (rc == 0)
			(void)write_event(b, 0, &j->key, j->rec.digest);
		j->done(j->ctx, rc);
		break;
	case J_DELETE:
		j->done(j->ctx, do_delete(b, &j->key));
		break;
	case J_WRITEBACK:
		rc = put_stored(b, &j->key, j->mode, j->parent, obj, hex);
		/* Over another copy (1): the replicas holding it drop it. */
		if (rc == 1 && hex_decode(hex, 64, sha) == 32)
			(void)write_event(b, 0, &j->key, sha);
		if (rc >= 0 || rc == -ENOENT || rc == -EMEDIUMTYPE ||
		    rc == -EINVAL || rc == -ENAMETOOLONG)
			break;
		if (++j->tries < RETRIES) {
			j->due_ms = clock_ms() + (1000LL << (j->tries - 1));
			/* Past --s3-queue-max if need be: it was counted in. */
			pthread_mutex_lock(&b->mu);
			if (!b->stop) {
				backlog_push(b, j);
				j = NULL;
			}
			pthread_mutex_unlock(&b->mu);
			if (j == NULL)
				return;
		}
		INC(b->count[C_WB_FAILED]);
		log_warnx("bucket: could not write %s back: %s", obj,
		    strerror(-rc));
		break;
	}
	job_free(j);
}

static void *
writer(void *arg)
{
	struct bucket	*b = arg;
	struct bjob	*j;

	for (;;) {
		pthread_mutex_lock(&b->mu);
		j = take(b);
		pthread_mutex_unlock(&b->mu);
		if (j == NULL)
			return NULL;
		run_job(b, j);
	}
}

static void
queue_writeback(struct bucket *b, struct bjob *j)
{
	if (enqueue(b, j) < 0)
		job_free(j);
	else
		INC(b->count[C_WB_QUEUED]);
}

void
bucket_writeback(struct bucket *b, const struct cache_key *key, int repair)
{
	struct bjob	*j;
	char		 obj[OBJ_MAX];

	if (b == NULL || bucket_object(key, obj, sizeof(obj)) < 0)
		return;
	if ((j = job_new(J_WRITEBACK, key, NULL, NULL)) == NULL) {
		INC(b->count[C_WB_DROPPED]);
		return;
	}
	j->mode = repair ? PUT_REPAIR : PUT_BACK;
	queue_writeback(b, j);
}

void
bucket_gsym_put(struct bucket *b, const unsigned char *id, size_t idlen,
    const unsigned char parent[32])
{
	struct cache_key	 key = { CACHE_GSYM, id, idlen, NULL };
	struct bjob		*j;

	if (b == NULL || (j = job_new(J_WRITEBACK, &key, NULL, NULL)) ==
	    NULL)
		return;
	j->mode = PUT_BACK;
	hex_encode(parent, 32, j->parent);
	queue_writeback(b, j);
}

static int
blob_sink(void *ctx, const void *p, size_t n)
{
	return cache_blob_write(ctx, p, n);
}

int
bucket_gsym_get(struct bucket *b, const unsigned char *id, size_t idlen,
    const unsigned char parent[32], struct cache_blob *blob)
{
	struct cache_key	 key = { CACHE_GSYM, id, idlen, NULL };
	struct s3_info		 info;
	const char		*v;
	char			 obj[OBJ_MAX], want[65], got[65];
	int			 rc;

	if ((rc = bucket_object(&key, obj, sizeof(obj))) < 0)
		return rc;
	hex_encode(parent, 32, want);
	/* Made from this very debuginfo, or not ours to take. */
	if ((rc = heard(b, s3_head(b->s3, obj, &info))) < 0)
		return rc;
	if ((v = s3_info_meta(&info, "parent-sha256")) == NULL ||
	    strcmp(v, want) != 0)
		return -ENOENT;
	if ((rc = heard(b, s3_get(b->s3, obj, blob_sink, blob, &info))) < 0)
		return rc;
	hex_encode(info.sha256, 32, got);
	if ((v = s3_info_meta(&info, "sha256")) == NULL ||
	    strcmp(v, got) != 0 ||
	    (v = s3_info_meta(&info, "parent-sha256")) == NULL ||
	    strcmp(v, want) != 0)
		return -EBADMSG;
	return 0;
}

int
bucket_put(struct bucket *b, const struct cache_key *key, int force,
    bucket_done_fn done, void *ctx)
{
	struct bjob	*j;
	int		 rc;

	if ((j = job_new(J_UPLOAD, key, done, ctx)) == NULL)
		return -ENOMEM;
	j->mode = force ? PUT_FORCE : PUT_UPLOAD;
	/* The bytes the client sent, now: an eviction, another upload or
	 * another replica's event may change the key before a writer is
	 * free. */
	if ((rc = cache_get(b->c, key, clock_wall_s(), &j->rec)) < 0) {
		job_free(j);
		return rc == -ENODATA ? -ENOENT : rc;
	}
	j->have_rec = 1;
	if ((rc = cache_open_data(b->c, &j->rec, &j->fd)) < 0 ||
	    (rc = enqueue(b, j)) < 0)
		job_free(j);
	return rc;
}

int
bucket_delete(struct bucket *b, const struct cache_key *key,
    bucket_done_fn done, void *ctx)
{
	struct bjob	*j;
	int		 rc;

	if ((j = job_new(J_DELETE, key, done, ctx)) == NULL)
		return -ENOMEM;
	if ((rc = enqueue(b, j)) < 0)
		job_free(j);
	return rc;
}

/*
 * Events of the other replicas.
 */

struct names {
	char	**v;
	size_t	  n, cap;
};

static int
list_fn(void *ctx, const char *key, uint64_t size)
{
	struct names	*l = ctx;

	(void)size;
	if (array_grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v)) != 0 ||
	    (l->v[l->n] = strdup(key)) == NULL)
		return -ENOMEM;
	l->n++;
	return 0;
}

/* The slot of key's kind and build-id (FNV-1a); a source's path is left
 * out: events name debuginfo and executables only. */
static size_t
slot_of(const struct cache_key *key)
{
	uint32_t	h = 2166136261u;
	size_t		i;

	h = (h ^ (uint32_t)key->kind) * 16777619u;
	for (i = 0; i < key->idlen; i++)
		h = (h ^ key->id[i]) * 16777619u;
	return h % NSLOTS;
}

uint64_t
bucket_events_mark(struct bucket *b)
{
	return b == NULL ? 0 : atomic_load(&b->applied);
}

int
bucket_changed_since(struct bucket *b, const struct cache_key *key,
    uint64_t mark)
{
	if (b == NULL || key->idlen == 0)
		return 0;
	return atomic_load(&b->slot[slot_of(key)]) > mark;
}

/*
 * Apply an event of another replica: drop what this one holds of the
 * object (a delete; a put of other bytes), and any negative entry of it.
 * Dropping is all an event ever does, so one applied twice, or late,
 * costs a fetch from the bucket at most.
 */
static void
apply(struct bucket *b, const struct event *e)
{
	struct cache_record	rec;
	struct cache_key	key = { e->kind, e->id, e->idlen, NULL };
	uint64_t		n;
	int			drop = e->del;

	/* Numbered before the miss is forgotten: a fetch that remembers a
	 * miss after this forgets it again (bucket_changed_since()). */
	n = atomic_fetch_add(&b->applied, 1) + 1;
	atomic_store(&b->slot[slot_of(&key)], n);
	if (cache_get(b->c, &key, clock_wall_s(), &rec) == 0) {
		/* A file scanned in place is this replica's own: no other
		 * replica's upload or delete is its business. */
		if (rec.flags & CACHE_F_EXTERNAL)
			drop = 0;
		else if (!drop)
			drop = memcmp(rec.digest, e->sha, 32) != 0;
		cache_record_release(&rec);
	}
	if (drop && cache_drop(b->c, &key) == 0)
		log_info("bucket: %s of %s through another replica: dropped "
		    "here", e->del ? "delete" : "put", kind_name(e->kind));
	/* A put is served from the bucket at once, a delete missed. */
	(void)cache_forget_negative(b->c, &key);
	INC(b->count[C_EVENTS_APPLIED]);
}

/*
 * A look at events/.  Until one has been applied whole, every look lists
 * them all (what happened while this replica was stopped, 7 days at
 * most); then each look, every POLL_MS, only those of the last RECENT_S
 * seconds (start-after: the names sort by time), so that an upload or a
 * delete through another replica is seen here within about a second
 * for the price of a short listing; every WIDE_S those of the last
 * EVENT_WINDOW_S, for replicas whose clocks differ more, or a server
 * whose listings lag its writes; every hour, all of them again, to
 * remove the expired ones.  A name that is not an event is left alone.
 */
static void
poll_events(struct bucket *b)
{
	struct names	 l = { NULL, 0, 0 };
	struct strmap	 seen = { 0 }, *into;
	struct event	 e;
	char		 after[64];
	int64_t		 now = (int64_t)(clock_wall_s() * 1000);
	int64_t		 old = now - (int64_t)EVENT_KEEP_S * 1000;
	int64_t		 window;
	size_t		 i, dummy;
	int		 rc, full, wide;

	full = !b->caught_up || now - b->full_ms >= 3600 * 1000;
	wide = full || now - b->wide_ms >= (int64_t)WIDE_S * 1000;
	window = now - (int64_t)(wide ? EVENT_WINDOW_S : RECENT_S) * 1000;
	snprintf(after, sizeof(after), EVENT_PREFIX "%013" PRId64, window);
	if ((rc = heard(b, s3_list_after(b->s3, EVENT_PREFIX, full ? NULL :
	    after, list_fn, &l))) < 0) {
		INC(b->count[C_POLL_FAILED]);
		goto out;
	}
	if (full)
		b->full_ms = now;
	if (wide)
		b->wide_ms = now;
	/* A wide look rebuilds the set of names applied (those of its
	 * window: the set stays small); a short one adds to it. */
	into = wide ? &seen : &b->seen;
	for (i = 0; i < l.n; i++) {
		if (event_parse(l.v[i], &e) < 0)
			continue;
		if (e.ms < old) {
			(void)heard(b, s3_delete(b->s3, l.v[i]));
			continue;
		}
		/* Once caught up, one older than the window was seen when
		 * it was in it. */
		if (b->caught_up && e.ms < window)
			continue;
		if (!strmap_get(&b->seen, l.v[i], &dummy) &&
		    strcmp(e.replica, b->replica) != 0)
			apply(b, &e);
		if (strmap_put(into, l.v[i], 1) < 0)
			break;
	}
	if (i == l.n && wide) {
		strmap_free(&b->seen);
		b->seen = seen;
		memset(&seen, 0, sizeof(seen));
		/* Only a full listing applied whole catches up: one that
		 * failed part way is done again. */
		b->caught_up |= full;
	} else if (i < l.n && wide) {
		/* Done again at the next look. */
		b->wide_ms = 0;
		if (full)
			b->full_ms = 0;
	}
out:
	strmap_free(&seen);
	for (i = 0; i < l.n; i++)
		free(l.v[i]);
	free(l.v);
}

/*
 * A writer that crashed between its put to staging/ and the copy (or the
 * delete after it) leaves the object there for good: once an hour, those
 * older than the grace time go.  A write under way is seconds old, and
 * one of the same bytes puts the object again (a new Last-Modified).
 */
static void
collect_staging(struct bucket *b)
{
	struct names	 l = { NULL, 0, 0 };
	struct s3_info	 info;
	int64_t		 now = (int64_t)clock_wall_s();
	size_t		 i, n = 0;

	if (b->staging_keep_s <= 0 ||
	    now * 1000 - b->staging_ms < 3600 * 1000)
		return;
	b->staging_ms = now * 1000;
	if (heard(b, s3_list(b->s3, "staging/", list_fn, &l)) < 0)
		b->staging_ms = 0;	/* again at the next look */
	for (i = 0; i < l.n; i++) {
		if (heard(b, s3_head(b->s3, l.v[i], &info)) == 0 &&
		    info.mtime > 0 && now - info.mtime > b->staging_keep_s &&
		    heard(b, s3_delete(b->s3, l.v[i])) == 0) {
			INC(b->count[C_STAGING_DELETED]);
			n++;
		}
		free(l.v[i]);
	}
	free(l.v);
	if (n > 0)
		log_info("bucket: deleted %zu object(s) of staging/ older than "
		    "%lld s (writes cut short)", n, (long long)b->staging_keep_s);
}

static void *
poller(void *arg)
{
	struct bucket	*b = arg;
	struct timespec	 until;
	int		 stop, rc;

	/* A first word with the bucket, for the log and the health gauge,
	 * here: a bucket down or hanging at start is no reason not to
	 * serve, nor to start late. */
	if ((rc = heard(b, s3_head(b->s3, "symhub-probe", NULL))) < 0 &&
	    rc != -ENOENT)
		log_warnx("bucket %s: not reachable now (%s); serving from "
		    "the store and the upstreams meanwhile", b->url,
		    strerror(-rc));
	else
		log_info("bucket %s: reachable", b->url);
	for (;;) {
		poll_events(b);
		collect_staging(b);
		pthread_mutex_lock(&b->mu);
		until = clock_deadline(POLL_MS);
		while (!b->stop && pthread_cond_timedwait(&b->pcv, &b->mu,
		    &until) != ETIMEDOUT)
			;
		stop = b->stop;
		pthread_mutex_unlock(&b->mu);
		if (stop)
			return NULL;
	}
}

/*
 * Life.
 */

static int
config_of(const struct config *cfg, struct s3_config *sc)
{
	const char	*why = NULL;
	char		 cause[512];
	int		 rc;

	/* symhubd made the same check before it opened the store. */
	if ((rc = config_s3(cfg, sc, cause, sizeof(cause))) < 0) {
		log_warnx("bucket %s: %s", cfg->s3, cause);
		return rc;
	}
	/* A write that makes no progress for 30 s (or the first-byte
	 * timeout, if longer) is given up: an upload is then 503.  Not
	 * less: a server may take seconds to answer after a large body's
	 * last byte (it hashes and syncs). */
	sc->connect_ms = (long)cfg->up_connect * 1000;
	sc->stall_s = cfg->up_first_byte > 30 ? (long)cfg->up_first_byte : 30;
	if ((rc = s3conf_check(sc, &why)) < 0) {
		log_warnx("--s3 %s: %s", cfg->s3, why);
		return rc;
	}
	return 0;
}

int
bucket_create(struct cache *c, const struct config *cfg,
    struct bucket **out)
{
	struct s3_config	 sc;
	struct bucket		*b;
	unsigned char		 r[8];
	size_t			 i;
	int			 rc;

	*out = NULL;
	if (cfg->s3 == NULL)
		return 0;
	if ((rc = config_of(cfg, &sc)) < 0)
		return rc;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return -ENOMEM;
	b->c = c;
	b->staging_keep_s = cfg->s3_staging_keep > INT64_MAX / 1000 ? 0 :
	    (int64_t)cfg->s3_staging_keep;
	b->queue_max = cfg->s3_queue_max;
	b->urgent_tail = &b->urgent;
	b->backlog_tail = &b->backlog;
	atomic_store(&b->healthy, 1);
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	pthread_cond_init(&b->pcv, NULL);
	if (RAND_bytes(r, sizeof(r)) != 1) {
		rc = -EIO;
		goto fail;
	}
	hex_encode(r, sizeof(r), b->replica);
	rc = s3_create(&sc, &b->s3);
	explicit_bzero(&sc, sizeof(sc));
	if (rc < 0)
		goto fail;
	if ((b->url = strdup(cfg->s3)) == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	b->nwriters = cfg->s3_writers > 0 ? cfg->s3_writers : 1;
	if ((b->writers = calloc(b->nwriters, sizeof(*b->writers))) == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < b->nwriters; i++)
		if ((rc = pthread_create(&b->writers[i], NULL, writer, b)) !=
		    0) {
			b->nwriters = i;
			rc = -rc;
			goto fail;
		}
	if ((rc = pthread_create(&b->poller, NULL, poller, b)) != 0) {
		rc = -rc;
		goto fail;
	}
	b->have_poller = 1;
	*out = b;
	return 0;
fail:
	bucket_free(b);
	return rc;
}

void
bucket_stop(struct bucket *b)
{
	struct bjob	*j, *n;
	size_t		 i;

	if (b == NULL)
		return;
	pthread_mutex_lock(&b->mu);
	b->stop = 1;
	pthread_cond_broadcast(&b->cv);
	pthread_cond_broadcast(&b->pcv);
	pthread_mutex_unlock(&b->mu);
	for (i = 0; i < b->nwriters; i++)
		pthread_join(b->writers[i], NULL);
	b->nwriters = 0;
	if (b->have_poller)
		pthread_join(b->poller, NULL);
	b->have_poller = 0;
	/* No writer is left: the queues are this thread's. */
	for (j = b->urgent; j != NULL; j = n) {
		n = j->next;
		j->done(j->ctx, -ECANCELED);
		job_free(j);
	}
	for (j = b->backlog; j != NULL; j = n) {
		n = j->next;
		job_free(j);
	}
	b->urgent = b->backlog = NULL;
	b->urgent_tail = &b->urgent;
	b->backlog_tail = &b->backlog;
	b->nbacklog = 0;
}

void
bucket_free(struct bucket *b)
{
	if (b == NULL)
		return;
	bucket_stop(b);
	s3_free(b->s3);
	free(b->url);
	strmap_free(&b->seen);
	free(b->writers);
	pthread_cond_destroy(&b->cv);
	pthread_cond_destroy(&b->pcv);
	pthread_mutex_destroy(&b->mu);
	free(b);
}

void
bucket_metrics(struct bucket *b, FILE *fp)
{
	struct s3_stats	st;
	size_t		i, queued;

	if (b == NULL)
		return;
	pthread_mutex_lock(&b->mu);
	queued = b->nbacklog;
	pthread_mutex_unlock(&b->mu);
	s3_stats(b->s3, &st);
	fprintf(fp, "# TYPE symhub_bucket_up gauge\nsymhub_bucket_up %d\n"
	    "# TYPE symhub_bucket_writeback_queue gauge\n"
	    "symhub_bucket_writeback_queue %zu\n"
	    "# TYPE symhub_bucket_requests_total counter\n"
	    "symhub_bucket_requests_total %" PRIu64 "\n"
	    "# TYPE symhub_bucket_request_failures_total counter\n"
	    "symhub_bucket_request_failures_total %" PRIu64 "\n"
	    "# TYPE symhub_bucket_bytes_up_total counter\n"
	    "symhub_bucket_bytes_up_total %" PRIu64 "\n"
	    "# TYPE symhub_bucket_bytes_down_total counter\n"
	    "symhub_bucket_bytes_down_total %" PRIu64 "\n",
	    atomic_load(&b->healthy), queued, st.requests, st.failures,
	    st.bytes_up, st.bytes_down);
	for (i = 0; i < C_N; i++)
		fprintf(fp, "# TYPE %s counter\n%s %" PRIu64 "\n", cnames[i],
		    cnames[i], (uint64_t)GET(b->count[i]));
}
