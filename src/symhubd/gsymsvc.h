/*
 * gsymsvc: GSYM for the daemon.  Converts stored debuginfo to GSYM on a
 * bounded pool of worker threads (one conversion per build-id however
 * many ask), stores the result as a derived, evictable cache entry, and
 * keeps stored GSYM files open with a cache of decoded records of hot
 * functions, for batch symbolization.
 *
 * No HTTP here: the caller maps results to answers.
 */
#ifndef SYMHUB_GSYMSVC_H
#define SYMHUB_GSYMSVC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cache/cache.h"
#include "gsym/gsym.h"

struct gsymsvc;		/* opaque */
struct gsymsvc_file;	/* opaque: an open GSYM, shared */

/*
 * Start workers threads (at least 1), each converting one build-id at a
 * time on threads threads (gsym_dwarf_convert()'s; 0: one a CPU).
 * @return 0 or -errno.
 */
int	gsymsvc_create(struct cache *c, unsigned workers, unsigned threads,
	    struct gsymsvc **out);

/* Stop the workers (a conversion under way is cancelled: it ends within
 * a fraction of a second); waiting callers get -ECANCELED, and so does
 * every later gsymsvc_convert().  Open files stay usable.  Idempotent;
 * accepts NULL. */
void	gsymsvc_stop(struct gsymsvc *s);

/* gsymsvc_stop(), then free.  Accepts NULL. */
void	gsymsvc_free(struct gsymsvc *s);

/*
 * Called once, on a worker thread, when the conversion a caller waits for
 * ends: rc 0 (stored: look the GSYM key up again; or, when the store could
 * not take it, kept a while for gsymsvc_unstored()), -ENOENT (no debuginfo
 * or executable stored for the id), -ENODATA (nothing in it to convert),
 * -ENOEXEC (not ELF, or its DWARF is corrupt: the same answer comes at
 * once until the debuginfo changes), -ECANCELED (shutting down), or
 * another -errno.  A failure other than -ENOENT, -ENODATA and -ECANCELED
 * has been logged.
 */
typedef void (*gsymsvc_done_fn)(void *ctx, int rc);

/*
 * Convert the stored debuginfo of id (or, lacking one, its executable)
 * to GSYM and store it under (CACHE_GSYM, id), unless a fresh one is
 * there already.  Joins a conversion of id under way.
 * @param done  NULL: nobody waits (eager conversion after an upload).
 * @return 0 (done will be called exactly once, later), or -errno (it
 *         will not).
 */
int	gsymsvc_convert(struct gsymsvc *s, const unsigned char *id,
	    size_t idlen, gsymsvc_done_fn done, void *ctx);

/*
 * The GSYM of id converted when the store could not take it (read-only,
 * full), for a minute after, while the debuginfo it came from stays.
 * @param rec  filled with its size and times (nothing to release).
 * @param fd   with gf NULL: a descriptor of its bytes, the caller's.
 * @param gf   NULL, or the open GSYM (gsymsvc_release() it).
 * @return 0; -ENOENT when there is none; -errno.
 */
int	gsymsvc_unstored(struct gsymsvc *s, const unsigned char *id,
	    size_t idlen, struct cache_record *rec, int *fd,
	    struct gsymsvc_file **gf);

/*
 * The open GSYM for rec (a stored GSYM record), mapped from the store the
 * first time only.
 * @return 0 with *out (release it); -ENOENT or -ESTALE when its bytes are
 *         gone (cache_open_data); -EBADMSG, -EPROTONOSUPPORT, -errno.
 */
int	gsymsvc_open(struct gsymsvc *s, const struct cache_record *rec,
	    struct gsymsvc_file **out);

/* gsym_lookup() through the cache of decoded records. */
int	gsymsvc_lookup(struct gsymsvc_file *f, uint64_t addr,
	    struct gsym_result *res);

void	gsymsvc_release(struct gsymsvc_file *f);

/* Prometheus lines: conversions by outcome, seconds, queue, cache. */
void	gsymsvc_metrics(struct gsymsvc *s, FILE *fp);

#endif
