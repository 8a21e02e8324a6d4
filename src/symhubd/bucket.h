/*
 * bucket: the S3 tier (--s3).  An S3-compatible bucket is the durable
 * store that replicas share; the local store is its hot cache.
 *
 * Layout (doc/store.md, "The bucket"): the debuginfod tree,
 *   buildid/ID/debuginfo, buildid/ID/executable,
 *   buildid/ID/source/ABSOLUTE/PATH,
 * each object carrying its SHA-256 and provenance as user metadata
 * (x-amz-meta-sha256, -origin, -debuginfod-file, -debuginfod-archive),
 * so the bucket served as static files is a read-only debuginfod server
 * and has the shape of `symhub export`'s tree; and
 *   events/MS-REPLICA-SEQ.OP.KIND.ID[.SHA256]
 * one empty object per upload or delete through a replica, which the
 * others list (every second) to drop what they hold of it and forget a
 * miss of it.
 *
 * Reads are the fetch engine's: the bucket is the first tier it asks,
 * as the bucket row of the upstream kinds (upstream.h,
 * upstream_bucket.c), which uses bucket_get_setup(), bucket_can_hold(),
 * bucket_writeback() and the events' mark below.  This module writes:
 * an upload while its client waits (the 201 only once it is durable),
 * what upstreams sent in the background (a bounded queue; a write lost
 * there costs a later fetch, never data), deletes; on its own threads,
 * so no HTTP thread waits on S3.
 *
 * Two replicas may write one key at once.  An S3 PUT is atomic (an
 * object is one writer's whole bytes), so they cannot tear it; where the
 * server does conditional writes (If-None-Match), a write-back never
 * replaces an object; where it does not (Swift), a HEAD first skips
 * what is there with the same SHA-256 and writes are staged under their
 * content's name, then copied to theirs by the server; readers check
 * every object's bytes against its x-amz-meta-sha256.
 */
#ifndef SYMHUB_BUCKET_H
#define SYMHUB_BUCKET_H

#include <stdint.h>
#include <stdio.h>

#include <curl/curl.h>

#include "cache/cache.h"
#include "config.h"

struct bucket;

/*
 * From cfg->s3 (and cfg->s3_credentials, or AWS_ACCESS_KEY_ID and
 * AWS_SECRET_ACCESS_KEY).  Starts the writer threads and the event
 * poller (every second).  A bucket that cannot be reached now is not an
 * error: it is reported unhealthy until it can.
 * @return 0 and *out (NULL when no --s3 was given); -EINVAL with the
 *         reason logged; -errno.
 */
int	bucket_create(struct cache *c, const struct config *cfg,
	    struct bucket **out);

/* Stop the threads: a write under way ends first (its done runs); an
 * upload or delete still queued gets -ECANCELED, a write-back is
 * dropped.  Call it before the HTTP front stops, so no connection stays
 * suspended.  Idempotent; accepts NULL. */
void	bucket_stop(struct bucket *b);

/* bucket_stop(), then free.  Accepts NULL. */
void	bucket_free(struct bucket *b);

/* The object name of key ("buildid/ID/KIND[/PATH]").
 * @return its length, or -ENAMETOOLONG / -EINVAL. */
int	bucket_object(const struct cache_key *key, char *out, size_t outsz);

/*
 * For the bucket row (read side): a GET of key's object, on a handle of its own:
 * the URL, the signature (libcurl's SigV4) and the headers S3 needs.
 * @return 0 (*hdrs the caller's to free), or -errno.
 */
int	bucket_get_setup(struct bucket *b, const struct cache_key *key,
	    CURL *easy, struct curl_slist **hdrs);

/* Write key's record (fetched from an upstream) to the bucket, later:
 * where the bucket has a copy, only over a worse one, or with repair
 * over any (the bucket's failed its check).  Never blocks; when the
 * queue is full it is dropped and counted.  A key the bucket cannot
 * name is passed over. */
void	bucket_writeback(struct bucket *b, const struct cache_key *key,
	    int repair);

/* Called on a writer thread once an upload's or a delete's bucket
 * write is done: 0, or -errno (-EAGAIN, -ETIMEDOUT, -EACCES...). */
typedef void (*bucket_done_fn)(void *ctx, int rc);

/*
 * Make key's record durable in the bucket (an upload), ahead of the
 * write-backs; done runs once, on a writer thread, never before this
 * returns, with 0, -EEXIST when the bucket's copy is as good or better
 * (unless force: the uploader insists), or -errno.  The record's bytes
 * are opened now, so what is written is what the store holds now.
 * @return 0, or -errno (done is then never called).
 */
int	bucket_put(struct bucket *b, const struct cache_key *key, int force,
	    bucket_done_fn done, void *ctx);

/* Can the bucket hold key (a kind it keeps, a name S3 takes)?
 * @return 1 or 0. */
int	bucket_can_hold(const struct cache_key *key);

/* Remove key's object, and tell the other replicas.  done gets 0 when it
 * was there, -ENOENT when it was not, or -errno. */
int	bucket_delete(struct bucket *b, const struct cache_key *key,
	    bucket_done_fn done, void *ctx);

/*
 * GSYM: buildid/ID/gsym, converted from the debuginfo whose SHA-256 its
 * x-amz-meta-parent-sha256 names, so that one replica's conversion
 * serves every replica with the same debuginfo.
 */
/* Write the stored GSYM of id, converted from the debuginfo of SHA-256
 * parent, to the bucket, later (a write-back). */
void	bucket_gsym_put(struct bucket *b, const unsigned char *id,
	    size_t idlen, const unsigned char parent[32]);

/*
 * Read the bucket's GSYM of id into blob (being written, the caller's)
 * when it was made from the debuginfo of SHA-256 parent, and its bytes
 * are its x-amz-meta-sha256.  Blocks: for a worker thread.
 * @return 0; -ENOENT none (or from another debuginfo); -EBADMSG bytes
 *         that are not what the object says; -errno.
 */
int	bucket_gsym_get(struct bucket *b, const unsigned char *id,
	    size_t idlen, const unsigned char parent[32],
	    struct cache_blob *blob);

/*
 * A miss the bucket answered, or bytes it sent, may be older than an
 * upload, delete or replacement through another replica whose event is
 * applied while the fetch is under way (the upstreams still asked, the
 * bytes still being stored): the event then comes before what it should
 * end.  So: take a mark before asking the bucket; once the miss or the
 * bytes are stored, bucket_changed_since() says whether an event of the
 * key (or of one that shares its slot, of 256) was applied since, and
 * they are to be dropped.  The poller numbers an event before it drops
 * anything, so one of the two always does.  Any thread; 0 for a NULL b.
 */
uint64_t bucket_events_mark(struct bucket *b);
int	bucket_changed_since(struct bucket *b, const struct cache_key *key,
	    uint64_t mark);

/* Append the bucket's metrics in Prometheus text: health, requests by
 * outcome, the write-back queue, events applied. */
void	bucket_metrics(struct bucket *b, FILE *fp);

#endif
