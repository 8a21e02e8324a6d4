/*
 * hot: the bytes of the small artifacts asked most, kept in memory.
 *
 * A debuginfo, executable or source file up to --hot-file-max bytes is,
 * once served, kept whole, so that later requests for it are answered
 * from memory: no open, read or close, and header and body leave in one
 * write.  An entry is tied to what the store said of the file
 * (cache_fingerprint()): the caller looks the record up for every request
 * and asks for the entry of that fingerprint, so a changed or dropped
 * record is never answered from here.  Least recently used entries go
 * past --hot-cache bytes; bytes still being sent stay until they are
 * sent (a reference each).  No HTTP here.
 */
#ifndef SYMHUB_HOT_H
#define SYMHUB_HOT_H

#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"

struct hot;		/* opaque */
struct hot_bytes;	/* opaque: one file's bytes, shared */

/* @return 0 with *out (NULL when budget is 0: nothing kept), -ENOMEM. */
int	hot_create(uint64_t budget, uint64_t file_max, struct hot **out);
void	hot_free(struct hot *t);

/* The largest file kept; 0 for NULL. */
uint64_t hot_file_max(const struct hot *t);

/*
 * The bytes kept for key, read from the file whose fingerprint is fp.
 * @return them, with a reference (hot_release()); NULL when there are
 *         none (an entry of another fingerprint is dropped).
 */
struct hot_bytes *hot_get(struct hot *t, const struct cache_key *key,
	    uint64_t fp);

/*
 * Keep the size bytes at buf (malloc'd: taken in every case) for key and
 * fp, replacing an entry of key.
 * @return them with a reference for the caller (hot_release()); NULL
 *         when no memory (buf freed).
 */
struct hot_bytes *hot_put(struct hot *t, const struct cache_key *key,
	    uint64_t fp, void *buf, size_t size);

/*
 * The rule of what is kept lives here, for both halves: a debuginfo,
 * executable or source file up to hot_file_max() bytes, of a known
 * identity (a blob's digest, or a file in place).  Whether a request
 * may be answered from memory at all (whole, as it is, unconditional)
 * is the HTTP front's to say.
 */

/*
 * The bytes kept for rec (key's, just looked up), when it is a file of
 * the rule and, in place, still the one indexed.
 * @return them with a reference (hot_release()), or NULL.  t may be NULL.
 */
struct hot_bytes *hot_find(struct hot *t, const struct cache_key *key,
	    const struct cache_record *rec);

/*
 * Keep rec (key's) whole, read from fd, when it is a file of the rule.
 * @return its bytes with a reference (hot_release()), fd then closed;
 *         or NULL, fd still open (the caller's).  t may be NULL.
 */
struct hot_bytes *hot_keep(struct hot *t, const struct cache_key *key,
	    const struct cache_record *rec, int fd);

const void *hot_data(const struct hot_bytes *b);
size_t	hot_size(const struct hot_bytes *b);

/* Drop a reference; the bytes go with the last.  Accepts NULL.  Takes
 * void * so that it serves as libmicrohttpd's free callback. */
void	hot_release(void *b);

/* Entries, bytes, hits and misses, for /metrics. */
void	hot_stats(struct hot *t, uint64_t *entries, uint64_t *bytes,
	    uint64_t *hits, uint64_t *misses);

#endif
