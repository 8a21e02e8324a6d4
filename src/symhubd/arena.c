/*
 * arena: a profile's allocator and the pool of large buffers (arena.h).
 *
 * A decoded profile is millions of small pieces freed together: they
 * come from blocks, each twice the last, freed at once.  A large piece
 * is a buffer of its own, so that protobuf-c's scratch, which it frees
 * as soon as it is done, goes back at once.
 */
#include <sys/mman.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

/* Under ASan each piece is poisoned but for the bytes asked, with a
 * red zone after it, so that the fuzzer still sees an overrun. */
#if defined(__SANITIZE_ADDRESS__)
#define ARENA_ASAN	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ARENA_ASAN	1
#endif
#endif
#ifdef ARENA_ASAN
#include <sanitizer/asan_interface.h>
#define REDZONE		sizeof(max_align_t)
#else
#define REDZONE		0
#define ASAN_POISON_MEMORY_REGION(p, n)		((void)(p), (void)(n))
#define ASAN_UNPOISON_MEMORY_REGION(p, n)	((void)(p), (void)(n))
#endif

/* One block of an arena: its bytes, and this at their start. */
struct arena_chunk {
	struct arena_chunk	*next;
	size_t			 cap, used;	/* cap: all its bytes */
	max_align_t		 data[];
};

/* The blocks: the first this large, each next one twice the last, up
 * to CHUNK_MAX; a piece of BIG_MIN or more its own.  Powers of two: a
 * block is a large buffer, and those are. */
#define CHUNK_MIN	(16u << 10)
#define CHUNK_MAX	(32u << 20)
#define BIG_MIN		(256u << 10)

/* Huge pages for the large buffers: a fault a 2 MiB page instead of one
 * a 4 KiB page, which costs more than the copying in them. */
#define HUGE_MIN	(2u << 20)

/* How far back a free looks for a large piece. */
#define BIG_LOOK	64

/*
 * The large buffers freed, kept mapped for the next profile (up to
 * keep_max bytes, KEEP_SLOTS of them): a fresh page costs a fault and
 * the kernel's zeroing, more than anything done with the bytes in it.
 * A large buffer is a power of two (an untouched page costs nothing),
 * so a buffer of the same size fits the next request of its size.
 */
#define KEEP_SLOTS	32

static pthread_mutex_t	 keep_mu = PTHREAD_MUTEX_INITIALIZER;
static struct arena_big	 kept_bufs[KEEP_SLOTS];
static size_t		 nkept, kept_bytes, keep_max;
static int		 pool_used;	/* since the last arena_big_trim() */

/*
 * The bytes every profile holds at once (large buffers and blocks, by
 * the bytes asked: a page never touched costs nothing), and the most
 * they may while a profile is read (arena_pool_begin()): a pool of
 * large buffers kept for the next one does not make that bound moot.
 * A thread reading a profile counts what it took (pool_mine): a
 * profile alone is never refused for the pool, only by its own budget,
 * so that "busy, try again" is true.
 */
static size_t		 pool_max, pool_held;
static uint64_t		 pool_refused;
static _Thread_local int	 pool_strict, pool_said;
static _Thread_local size_t	 pool_mine;

/*
 * Take n bytes from the pool (keep_mu held).  Past its max while this
 * thread reads a profile: the kept buffers are let go first (moved to
 * *drop, unmapped by the caller), then, if others hold the rest,
 * refused.
 * @return 0, or -1 refused.
 */
static int
pool_take(size_t n, struct arena_big *drop, size_t *ndrop)
{
	if (pool_strict && pool_max > 0 && (pool_held > pool_max ||
	    n > pool_max - pool_held - (kept_bytes < pool_max - pool_held ?
	    kept_bytes : pool_max - pool_held))) {
		memcpy(drop, kept_bufs, nkept * sizeof(*drop));
		*ndrop = nkept;
		nkept = kept_bytes = 0;
		if (pool_held > pool_mine && (pool_held > pool_max ||
		    n > pool_max - pool_held)) {
			pool_refused++;
			pool_said = 1;
			return -1;
		}
	}
	pool_held += n;
	if (pool_strict)
		pool_mine += n;
	return 0;
}

static void
pool_give(size_t n)
{
	pool_held -= n < pool_held ? n : pool_held;
	if (pool_strict)
		pool_mine -= n < pool_mine ? n : pool_mine;
}

/* The kept buffers dropped for the pool, unmapped out of the lock. */
static void
unmap_all(struct arena_big *drop, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		(void)munmap(drop[i].v, drop[i].n);
}

/* The size a large buffer of n bytes is mapped with. */
static size_t
big_size(size_t n)
{
	size_t r = HUGE_MIN;

	while (r < n && r <= SIZE_MAX / 2)
		r *= 2;
	return r;
}

void *
arena_big_alloc(size_t n)
{
	struct arena_big	 drop[KEEP_SLOTS];
	void			*v = NULL;
	size_t			 i, asked = n, ndrop = 0;
	int			 rc;

	pthread_mutex_lock(&keep_mu);
	rc = pool_take(asked, drop, &ndrop);
	pthread_mutex_unlock(&keep_mu);
	unmap_all(drop, ndrop);
	if (rc != 0)
		return NULL;
	if (n < HUGE_MIN) {
		if ((v = malloc(n)) == NULL)
			goto fail;
		return v;
	}
	n = big_size(n);
	pthread_mutex_lock(&keep_mu);
	pool_used = 1;
	for (i = 0; i < nkept; i++)
		if (kept_bufs[i].n == n) {
			v = kept_bufs[i].v;
			kept_bufs[i] = kept_bufs[--nkept];
			kept_bytes -= n;
			break;
		}
	pthread_mutex_unlock(&keep_mu);
	if (v != NULL)
		return v;
	if ((v = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE |
	    MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
		goto fail;
#ifdef MADV_HUGEPAGE
	(void)madvise(v, n, MADV_HUGEPAGE);
#endif
	return v;
fail:
	pthread_mutex_lock(&keep_mu);
	pool_give(asked);
	pthread_mutex_unlock(&keep_mu);
	return NULL;
}

void
arena_big_free(void *v, size_t n)
{
	if (v == NULL)
		return;
	pthread_mutex_lock(&keep_mu);
	pool_give(n);
	pthread_mutex_unlock(&keep_mu);
	if (n < HUGE_MIN) {
		free(v);
		return;
	}
	n = big_size(n);
	pthread_mutex_lock(&keep_mu);
	pool_used = 1;
	/* Kept only while the pool's max leaves room for them. */
	if (nkept < KEEP_SLOTS && kept_bytes <= keep_max &&
	    n <= keep_max - kept_bytes && (pool_max == 0 ||
	    (pool_held <= pool_max && kept_bytes + n <= pool_max -
	    pool_held))) {
		kept_bufs[nkept].v = v;
		kept_bufs[nkept++].n = n;
		kept_bytes += n;
		v = NULL;
	}
	pthread_mutex_unlock(&keep_mu);
	if (v != NULL)
		(void)munmap(v, n);
}

void
arena_big_keep(size_t max)
{
	pthread_mutex_lock(&keep_mu);
	keep_max = max;
	pthread_mutex_unlock(&keep_mu);
}

size_t
arena_big_trim(void)
{
	struct arena_big	 gone[KEEP_SLOTS];
	size_t			 i, n = 0, bytes = 0;

	pthread_mutex_lock(&keep_mu);
	if (!pool_used) {
		n = nkept;
		memcpy(gone, kept_bufs, n * sizeof(gone[0]));
		bytes = kept_bytes;
		nkept = kept_bytes = 0;
	}
	pool_used = 0;
	pthread_mutex_unlock(&keep_mu);
	for (i = 0; i < n; i++)
		(void)munmap(gone[i].v, gone[i].n);
	return bytes;
}

void
arena_pool_max(size_t max)
{
	pthread_mutex_lock(&keep_mu);
	pool_max = max;
	pthread_mutex_unlock(&keep_mu);
}

void
arena_pool_begin(size_t own)
{
	pool_strict = 1;
	pool_said = 0;
	pool_mine = own;
}

int
arena_pool_end(void)
{
	pool_strict = 0;
	pool_mine = 0;
	return pool_said;
}

void
arena_pool_stats(size_t *held, uint64_t *refused)
{
	pthread_mutex_lock(&keep_mu);
	*held = pool_held;
	*refused = pool_refused;
	pthread_mutex_unlock(&keep_mu);
}

size_t
arena_big_kept(void)
{
	size_t n;

	pthread_mutex_lock(&keep_mu);
	n = kept_bytes;
	pthread_mutex_unlock(&keep_mu);
	return n;
}

/* A large piece or a block, given back: its bytes all unpoisoned first,
 * as the next owner of a kept buffer expects them. */
static void
piece_free(void *v, size_t n)
{
	ASAN_UNPOISON_MEMORY_REGION(v, n < HUGE_MIN ? n : big_size(n));
	arena_big_free(v, n);
}

void *
arena_alloc(struct arena *ar, size_t n)
{
	struct arena_chunk	*c = ar->head;
	struct arena_big	*nb;
	size_t			 cap, want = n;
	void			*v;

	if (n > SIZE_MAX / 2)
		return NULL;
	n = (n + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	/* The budget counts what a build without ASan would take: the
	 * same profiles are refused under ASan (the tests, the fuzzer). */
	if (n > ar->left) {
		ar->over = 1;
		return NULL;
	}
	if (ar->left != SIZE_MAX)
		ar->left -= n;
	n += REDZONE;
	if (n >= BIG_MIN) {
		if (ar->nbig == ar->bigcap) {
			cap = ar->bigcap ? 2 * ar->bigcap : 64;
			if ((nb = reallocarray(ar->big, cap,
			    sizeof(*nb))) == NULL)
				return NULL;
			ar->big = nb;
			ar->bigcap = cap;
		}
		if ((v = arena_big_alloc(n)) == NULL)
			return NULL;
		ASAN_POISON_MEMORY_REGION((char *)v + want,
		    (n < HUGE_MIN ? n : big_size(n)) - want);
		ar->big[ar->nbig].v = v;
		ar->big[ar->nbig++].n = n;
		return v;
	}
	if (c == NULL || c->cap - c->used < n) {
		cap = c == NULL ? CHUNK_MIN : c->cap >= CHUNK_MAX ?
		    CHUNK_MAX : 2 * c->cap;
		if ((c = arena_big_alloc(cap)) == NULL)
			return NULL;
		c->next = ar->head;
		c->cap = cap;
		c->used = sizeof(*c);
		ar->head = c;
		ASAN_POISON_MEMORY_REGION(c->data, cap - sizeof(*c));
	}
	v = (char *)c + c->used;
	c->used += n;
	ASAN_UNPOISON_MEMORY_REGION(v, want);
	return v;
}

/*
 * protobuf-c's free: only a recent large piece goes at once (its
 * scratch, which it frees as soon as it is done); the rest stays until
 * the arena goes.  The look is bounded: protobuf-c frees every piece of
 * a message it refuses, a million of them in a hostile one.
 */
static void
pb_free(void *ctx, void *p)
{
	struct arena	*ar = ctx;
	size_t		 i;

	if (p == NULL)
		return;
	for (i = ar->nbig; i > 0 && ar->nbig - i < BIG_LOOK; i--)
		if (ar->big[i - 1].v == p)
			break;
	if (i == 0 || ar->nbig - i >= BIG_LOOK)
		return;
	i--;
	piece_free(ar->big[i].v, ar->big[i].n);
	if (ar->left != SIZE_MAX)
		ar->left += ar->big[i].n - REDZONE;
	memmove(&ar->big[i], &ar->big[i + 1], (ar->nbig - i - 1) *
	    sizeof(*ar->big));
	ar->nbig--;
}

static void *
pb_alloc(void *ctx, size_t n)
{
	return arena_alloc(ctx, n);
}

void
arena_init(struct arena *ar, size_t budget)
{
	memset(ar, 0, sizeof(*ar));
	ar->a.alloc = pb_alloc;
	ar->a.free = pb_free;
	ar->a.allocator_data = ar;
	ar->left = budget;
}

void *
arena_calloc(struct arena *ar, size_t n, size_t size)
{
	void *p;

	if (size != 0 && n > SIZE_MAX / size)
		return NULL;
	if ((p = arena_alloc(ar, n * size)) != NULL)
		memset(p, 0, n * size);
	return p;
}

char *
arena_strndup(struct arena *ar, const char *s, size_t n)
{
	char *d;

	if (n == SIZE_MAX || (d = arena_alloc(ar, n + 1)) == NULL)
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

void
arena_free(struct arena *ar)
{
	struct arena_chunk	*c, *next;
	size_t			 i;

	for (c = ar->head; c != NULL; c = next) {
		next = c->next;
		piece_free(c, c->cap);
	}
	for (i = 0; i < ar->nbig; i++)
		piece_free(ar->big[i].v, ar->big[i].n);
	free(ar->big);
	ar->head = NULL;
	ar->big = NULL;
	ar->nbig = ar->bigcap = 0;
}
