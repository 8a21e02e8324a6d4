/*
 * pprof: the profiles of POST /symbolize/pprof (symhubd(8), "Profiles").
 * A pprof Profile (google/pprof's proto/profile.proto, read and written
 * by protobuf-c's code generated from it), gzip-compressed or not, is
 * checked whole; the locations of its mappings are then filled in from
 * their modules' GSYMs, and the profile is written back gzip-compressed.
 * No I/O, no HTTP: a failure is an errno and a static message.
 */
#ifndef SYMHUB_PPROF_H
#define SYMHUB_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "base/artifact.h"
#include "gsym/gsym.h"

struct pprof;		/* opaque: one profile read */

struct pprof_limits {
	size_t	max_bytes;	/* of the profile, inflated; the large
				 * buffers kept for the next profile are at
				 * most 8 times that, the last given */
	size_t	max_locations;
	size_t	reuse_min;	/* pprof_write() copies a gzip'd input's
				 * blocks that hold at least this many of
				 * the answer's first bytes (0: 64 KiB) */
	size_t	own;		/* bytes of the profile's pool (arena.h)
				 * its caller holds already (its request's
				 * body): the profile's own, not others' */
};

/* A module the mappings name: one a distinct build_id. */
struct pprof_module {
	unsigned char	id[CACHE_ID_MAX];
	size_t		idlen;
	int		maybe_fileid;	/* 16 bytes: a build-id, or an OTel
					 * FileID (the same hex either way) */
};

/*
 * Read and check a profile: len bytes at body, gzip-compressed (by their
 * magic, one member or more) or not; body must stay as it is until
 * pprof_free() (and pprof_answer()'s answer is sent).  The samples are
 * not decoded: they pass through as they came.  Refused: a corrupt protobuf
 * or gzip stream; an empty
 * string table or one whose first string is not ""; a string index out
 * of the table; an id 0 or twice; a location, mapping or function id
 * that names nothing; a mapping ending before it starts, or overlapping
 * another; a location address outside its mapping (or, without one,
 * inside none of them while there are some); a build_id that is not a
 * hex build-id or FileID (on a mapping to symbolize).
 * @param why  on failure, a static message for the client.
 * @return 0 (out set: pprof_free() it); -EINVAL refused; -E2BIG over a
 *         limit (inflated bytes, locations, or the memory decoding would
 *         take, a multiple of the bytes); -ENOMEM.
 */
int	pprof_read(const void *body, size_t len, const struct pprof_limits *lim,
	    struct pprof **out, const char **why);

/* The modules of p's mappings to symbolize (those without
 * has_functions); valid until pprof_free(). */
size_t	pprof_modules(const struct pprof *p, const struct pprof_module **mods);

/* Locations p has, and mappings. */
size_t	pprof_nlocations(const struct pprof *p);

/*
 * Look up ELF file offset off in module mod (an index of pprof_modules()).
 * @return 0 with res; -ENOENT nothing there (the location stays raw);
 *         -ENODEV the module cannot be used (none of its locations are
 *         asked again); another -errno: the location stays raw.
 */
typedef int	(*pprof_lookup_fn)(void *ctx, size_t mod, uint64_t off,
		    struct gsym_result *res);

struct pprof_stats {
	size_t	mappings;	/* resolved */
	size_t	locations;	/* filled in */
	size_t	functions;	/* added */
};

/*
 * Fill in the locations of every mapping to symbolize: a Line a frame,
 * innermost first; Function entries with the demangled name, the
 * linkage name as system_name and the file; the mapping's has_* flags.
 * A file offset is the address less memory_start plus file_offset.
 * @return 0; -ENOMEM (p then half done: only pprof_free() it).
 */
int	pprof_symbolize(struct pprof *p, pprof_lookup_fn fn, void *ctx,
	    struct pprof_stats *st);

/*
 * p's answer, a gzip-compressed Profile, in parts to send one after
 * another.  Its first bytes, as far as they are the input's leading
 * sample types and samples, are the input's compressed blocks as they
 * came (a gzip input of one member): part[1] points into the body given
 * to pprof_read(), which must stay until the answer is sent (but p need
 * not); the rest is compressed anew.
 */
#define PPROF_PARTS	3
struct pprof_answer {
	struct {
		const void	*p;
		size_t		 len;	/* may be 0 */
	}	part[PPROF_PARTS];
	size_t	len;	/* all the parts' */
	void	*own;	/* what the parts own: free() it */
};

/* @return 0 with a; -E2BIG larger than max bytes; -ENOMEM. */
int	pprof_answer(const struct pprof *p, size_t max, struct pprof_answer *a);

/* The same in one buffer, *out malloc'd (the caller's to free). */
int	pprof_write(const struct pprof *p, size_t max, void **out,
	    size_t *outlen);

/* Accepts NULL. */
void	pprof_free(struct pprof *p);

/*
 * What the OTLP profiles (otlp.h) share with pprof's.  pprof_inflate():
 * a gzip stream of len bytes (members one after another) inflated into
 * at most max bytes (*out the caller's, *outcap bytes of it, given back
 * with pprof_inflate_free()); -EINVAL corrupt, -E2BIG past max, with
 * why.  pprof_parse_id(): a build-id or FileID in hex, either case, into
 * m; -EINVAL when it is neither.
 */
int	pprof_inflate(const void *in, size_t len, size_t max,
	    unsigned char **out, size_t *outlen, size_t *outcap,
	    const char **why);
void	pprof_inflate_free(unsigned char *out, size_t cap);
int	pprof_parse_id(const char *s, struct pprof_module *m);

#endif
