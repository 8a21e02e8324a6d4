/*
 * arena: the allocator of a decoded profile (pprof.c, otlp.c), and the
 * pool of large buffers it and they draw from.  No HTTP, no logging.
 *
 * An arena hands protobuf-c (through ar->a) and its owner memory that
 * is let go at once by arena_free(); it refuses past a budget and says
 * so in ar->over.  Under ASan every piece is poisoned but for the bytes
 * asked, so an overrun inside the arena is still seen.
 *
 * A large buffer (arena_big_alloc(), from 2 MiB a power of two mapped
 * on its own) is kept mapped when freed, for the next profile, up to
 * the bytes arena_big_keep() allows; arena_big_trim(), called now and
 * then by the daemon, gives them back once no profile uses the pool.
 */
#ifndef SYMHUBD_ARENA_H
#define SYMHUBD_ARENA_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

struct arena_chunk;

struct arena_big {
	void	*v;
	size_t	 n;
};

struct arena {
	ProtobufCAllocator	 a;	/* for protobuf-c's unpack */
	struct arena_chunk	*head;	/* the blocks, the newest first */
	struct arena_big	*big;	/* large pieces, the oldest first */
	size_t			 nbig, bigcap;
	size_t			 left;	/* bytes it may still give */
	int			 over;	/* refused past the budget */
};

/* Make ar empty, to give at most budget bytes (SIZE_MAX: no limit). */
void	 arena_init(struct arena *ar, size_t budget);

/* n bytes, aligned for any type, valid until arena_free(); NULL when
 * out of memory or past the budget (then ar->over is set). */
void	*arena_alloc(struct arena *ar, size_t n);
void	*arena_calloc(struct arena *ar, size_t n, size_t size);
/* A copy of the n bytes at s and a NUL. */
char	*arena_strndup(struct arena *ar, const char *s, size_t n);

/* Let go of all ar gave; ar may be arena_init()'d again.  A zeroed or
 * never-used arena is fine. */
void	 arena_free(struct arena *ar);

/* A buffer of n bytes: malloc'd below 2 MiB, else mapped (or a kept
 * one).  Give it back with arena_big_free() and the same n. */
void	*arena_big_alloc(size_t n);
void	 arena_big_free(void *v, size_t n);

/* Keep at most max bytes of freed large buffers mapped. */
void	 arena_big_keep(size_t max);

/* Unmap the kept buffers if no large buffer was asked for or freed
 * since the last call: called every few seconds, an idle pool is let
 * go after one to two periods.
 * @return the bytes unmapped. */
size_t	 arena_big_trim(void);

/* The bytes of freed large buffers kept mapped now. */
size_t	 arena_big_kept(void);

/*
 * One budget for every profile at once: the large buffers and arena
 * blocks all profiles hold (by the bytes asked), at most max while one
 * is read (0: no limit; the kept buffers are let go first).  Between
 * arena_pool_begin() and arena_pool_end() on a thread, a buffer or
 * block past it is refused (NULL) while other profiles hold some of
 * it: alone, a profile is bounded only by its own arena's budget, so
 * a refusal is worth trying again.  own: the pool's bytes the profile
 * holds already (its request's body, taken before), its own and not
 * others'.  arena_pool_end() says whether this thread was refused since
 * arena_pool_begin().
 */
void	 arena_pool_max(size_t max);
void	 arena_pool_begin(size_t own);
int	 arena_pool_end(void);
/* The bytes all profiles hold now, and the buffers refused so far. */
void	 arena_pool_stats(size_t *held, uint64_t *refused);

#endif
