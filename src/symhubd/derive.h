/*
 * derive: the artifacts the daemon makes from what it stores, both kept
 * as derived, evictable entries (CACHE_F_DERIVED) tied to the parent
 * they came from, so that a changed parent makes them stale:
 *
 * - sections (/section/NAME), cut from the debuginfo or the executable
 *   on the caller's thread: a section is a copy of bytes, cheap enough;
 * - GSYM, converted from the debuginfo (or an unstripped executable) on
 *   a bounded pool of worker threads, one conversion per build-id however
 *   many ask; open GSYM files are kept with a cache of decoded records of
 *   hot functions, for batch symbolization.
 *
 * Parents are opened through records.h, which drops a broken one.  No
 * HTTP here: the caller maps results to answers.
 */
#ifndef SYMHUB_DERIVE_H
#define SYMHUB_DERIVE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/buf.h"
#include "cache/cache.h"
#include "gsym/gsym.h"
#include "scan.h"

struct derive;		/* opaque */
struct derive_gsym;	/* opaque: an open GSYM, shared */

/*
 * Start workers threads (at least 1), each converting one build-id at a
 * time on threads threads (gsym_dwarf_convert()'s; 0: one a CPU).
 * @param s  the scanner, to re-index a changed parent; NULL: none.
 * @return 0 or -errno.
 */
int	derive_create(struct cache *c, struct scan *s, unsigned workers,
	    unsigned threads, struct derive **out);

/*
 * Cut section key->extra of key->id from its debuginfo, or lacking it
 * there (missing or NOBITS), from its executable, and store it as a
 * derived entry (a store that refuses costs the next request another
 * cut, nothing else).  Does not look for a stored copy: the caller has.
 * @param out     the section's bytes, appended (buf_free() them).
 * @param rec     on 0, its record, whose strings point into *parent.
 * @param parent  on 0, the record it was cut from; release it.
 * @param known   set to the bits (1 << kind) of the parents that are
 *                here and lack the section.
 * @return 0; -ENOENT when no parent here has it; -ENOMEM.
 */
int	derive_section(struct derive *d, const struct cache_key *key,
	    struct buf *out, struct cache_record *rec,
	    struct cache_record *parent, unsigned *known);

/*
 * The source key->extra of key->id from the line tables of its
 * debuginfo or, lacking them there, its executable (dwsource.h: the path
 * the tables name, equal or ending in key->extra).  Its text, when the
 * table embeds it (clang -gembed-source), is stored as a derived entry
 * under key.  Never reads a file the tables name.  The names of the last
 * few files read are kept in memory (with the parent's fingerprint): a
 * miss, or a named file not embedded, costs no second read.
 * @param out     the text, appended (buf_free() it).
 * @param rec     on 0, its record, whose strings point into *parent.
 * @param parent  on 0, the record it was read from; release it.
 * @param named   on -ENODATA and -ENOTUNIQ, the path the tables name it
 *                by (one of them); free() it.
 * @return 0; -ENODATA when named but not embedded; -ENOTUNIQ when no
 *         path equals key->extra and several end in it; -ENOENT when no
 *         parent is here or none names it; -EINVAL when not named by
 *         what could be read and a line table could not be (logged);
 *         -ENOMEM.
 */
int	derive_source(struct derive *d, const struct cache_key *key,
	    struct buf *out, struct cache_record *rec,
	    struct cache_record *parent, char **named);

/* With --s3: take GSYM other replicas converted from the same debuginfo
 * from b, and give b this one's (bucket.h).  Before the first
 * conversion. */
struct bucket;
void	derive_set_bucket(struct derive *s, struct bucket *b);

/* Stop the workers (a conversion under way is cancelled: it ends within
 * a fraction of a second); waiting callers get -ECANCELED, and so does
 * every later derive_gsym_convert().  Open files stay usable.  Idempotent;
 * accepts NULL. */
void	derive_stop(struct derive *s);

/* derive_stop(), then free.  Accepts NULL. */
void	derive_free(struct derive *s);

/*
 * Called once, on a worker thread, when the conversion a caller waits for
 * ends: rc 0 (stored: look the GSYM key up again; or, when the store could
 * not take it, kept a while for derive_gsym_unstored()), -ENOENT (no debuginfo
 * or executable stored for the id), -ENODATA (nothing in it to convert),
 * -ENOEXEC (not ELF, or its DWARF is corrupt: the same answer comes at
 * once until the debuginfo changes), -ECANCELED (shutting down), or
 * another -errno.  A failure other than -ENOENT, -ENODATA and -ECANCELED
 * has been logged.
 */
typedef void (*derive_done_fn)(void *ctx, int rc);

/*
 * Convert the stored debuginfo of id (or, lacking one, its executable)
 * to GSYM and store it under (CACHE_GSYM, id), unless a fresh one is
 * there already.  Joins a conversion of id under way.
 * @param done  NULL: nobody waits: the conversion is queued ahead of need
 *              (--gsym-ahead, --gsym-on-upload) and runs after every one
 *              somebody waits for; past 65536 such at once it is dropped
 *              (done by the next backlog pass, or on its first request
 *              instead) and counted.
 * @return 0 (done will be called exactly once, later), or -errno (it
 *         will not).
 */
int	derive_gsym_convert(struct derive *s, const unsigned char *id,
	    size_t idlen, derive_done_fn done, void *ctx);

/*
 * Convert, ahead of need, everything the store holds that has no fresh
 * GSYM (imported, scanned or fetched before --gsym-ahead was on): a
 * thread walks the debuginfo records, then the executables that are the
 * only source of theirs, in key order a batch at a time with no
 * transaction held while it queues, and keeps at most a few dozen
 * conversions queued at the lowest priority (after every one somebody
 * waits for, and after those queued ahead for new files), walking on as
 * they begin.  A file with nothing to convert (no DWARF, .symtab or
 * .gopclntab) is passed over.  The pass ends early when the store
 * refuses a GSYM (read-only, full) or, budget not 0, holds 90% of
 * budget bytes: GSYM nobody asked for must not evict what was fetched.
 * Asked while a pass runs, another follows it.
 * @param budget  the store's byte budget (--cache-max); 0: none.
 * @return 0 (the pass runs on its own thread), or -errno.
 */
int	derive_gsym_backlog(struct derive *s, uint64_t budget);

/*
 * The GSYM of id converted when the store could not take it (read-only,
 * full), for a minute after, while the debuginfo it came from stays.
 * @param rec  filled with its size and times (nothing to release).
 * @param fd   with gf NULL: a descriptor of its bytes, the caller's.
 * @param gf   NULL, or the open GSYM (derive_gsym_release() it).
 * @return 0; -ENOENT when there is none; -errno.
 */
int	derive_gsym_unstored(struct derive *s, const unsigned char *id,
	    size_t idlen, struct cache_record *rec, int *fd,
	    struct derive_gsym **gf);

/*
 * The one opener of a derived entry, a section or a GSYM, for whoever
 * answers with it: key looked up; checked against what its parent is
 * now (cache_derived_fresh(); an entry that is not CACHE_F_DERIVED, a
 * section an upstream cut, has no parent here and stays fresh); its
 * bytes opened; and dropped when they are gone (records_broken()).
 * @param fd  with gf NULL: a descriptor of its bytes, the caller's.
 * @param gf  NULL, or for a GSYM the open file (derive_gsym_release()).
 * @return 0 with *rec (release it) and *fd or *gf; -ENODATA for a
 *         negative entry; -ESTALE when its parent changed (make it
 *         again: that replaces it); -ENOENT when there is none, the
 *         store could not look it up, or its bytes were gone (it is
 *         dropped); another -errno of derive_gsym_open().  On failure
 *         rec is released.
 */
int	derive_open(struct derive *s, const struct cache_key *key,
	    struct cache_record *rec, int *fd, struct derive_gsym **gf);

/*
 * The open GSYM for rec (a stored GSYM record), mapped from the store the
 * first time only.
 * @return 0 with *out (release it); -ENOENT or -ESTALE when its bytes are
 *         gone (cache_open_data); -EBADMSG, -EPROTONOSUPPORT, -errno.
 */
int	derive_gsym_open(struct derive *s, const struct cache_record *rec,
	    struct derive_gsym **out);

/* gsym_lookup() through the cache of decoded records. */
int	derive_gsym_lookup(struct derive_gsym *f, uint64_t addr,
	    struct gsym_result *res);

void	derive_gsym_release(struct derive_gsym *f);

/* Prometheus lines: conversions by outcome, seconds, queue, cache. */
void	derive_metrics(struct derive *s, FILE *fp);

#endif
