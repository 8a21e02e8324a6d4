/*
 * hot: small artifacts kept in memory (see hot.h).
 *
 * A chained hash table of entries on a least-recently-used list, under
 * one mutex held for a few pointer moves; the bytes are reference
 * counted with atomics, so that an entry dropped while a response still
 * sends its bytes frees them after the last one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hot.h"

#define NBUCKETS	4096	/* a power of 2 */

struct hot_bytes {
	unsigned long	 refs;		/* atomic */
	size_t		 size;
	void		*data;
};

struct entry {
	struct entry	*next;		/* in its bucket */
	struct entry	*newer, *older;	/* the LRU list */
	uint64_t	 hash, fp;
	struct hot_bytes *b;
	size_t		 klen;
	unsigned char	 k[];		/* kind, id, extra */
};

struct hot {
	pthread_mutex_t	 mu;
	struct entry	*buckets[NBUCKETS];
	struct entry	*newest, *oldest;
	uint64_t	 budget, file_max, bytes, entries;
	uint64_t	 hits, misses;
};

/* The key as bytes (kind, id length, id, extra) in buf; its length, or 0
 * when it does not fit. */
static size_t
keybytes(const struct cache_key *key, unsigned char *buf, size_t len)
{
	size_t el = key->extra != NULL ? strlen(key->extra) : 0;

	if (2 + key->idlen + el > len)
		return 0;
	buf[0] = (unsigned char)key->kind;
	buf[1] = (unsigned char)key->idlen;
	memcpy(buf + 2, key->id, key->idlen);
	if (el > 0)
		memcpy(buf + 2 + key->idlen, key->extra, el);
	return 2 + key->idlen + el;
}

static uint64_t
fnv(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n-- > 0)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

int
hot_create(uint64_t budget, uint64_t file_max, struct hot **out)
{
	struct hot *t;

	*out = NULL;
	if (budget == 0 || file_max == 0)
		return 0;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return -ENOMEM;
	pthread_mutex_init(&t->mu, NULL);
	t->budget = budget;
	t->file_max = file_max < budget ? file_max : budget;
	*out = t;
	return 0;
}

uint64_t
hot_file_max(const struct hot *t)
{
	return t != NULL ? t->file_max : 0;
}

static void
unlink_lru(struct hot *t, struct entry *e)
{
	if (e->newer != NULL)
		e->newer->older = e->older;
	else
		t->newest = e->older;
	if (e->older != NULL)
		e->older->newer = e->newer;
	else
		t->oldest = e->newer;
	e->newer = e->older = NULL;
}

static void
push_newest(struct hot *t, struct entry *e)
{
	e->older = t->newest;
	e->newer = NULL;
	if (t->newest != NULL)
		t->newest->newer = e;
	t->newest = e;
	if (t->oldest == NULL)
		t->oldest = e;
}

/* Take e out of everything; the caller releases e->b and frees e. */
static void
remove_entry(struct hot *t, struct entry *e)
{
	struct entry **pp;

	for (pp = &t->buckets[e->hash & (NBUCKETS - 1)]; *pp != e;
	    pp = &(*pp)->next)
		;
	*pp = e->next;
	unlink_lru(t, e);
	t->bytes -= e->b->size;
	t->entries--;
}

static struct entry *
find(struct hot *t, uint64_t hash, const unsigned char *k, size_t klen)
{
	struct entry *e;

	for (e = t->buckets[hash & (NBUCKETS - 1)]; e != NULL; e = e->next)
		if (e->hash == hash && e->klen == klen &&
		    memcmp(e->k, k, klen) == 0)
			return e;
	return NULL;
}

struct hot_bytes *
hot_get(struct hot *t, const struct cache_key *key, uint64_t fp)
{
	unsigned char	 k[2 + CACHE_ID_MAX + 4096];
	struct entry	*e, *gone = NULL;
	struct hot_bytes *b = NULL;
	size_t		 klen;
	uint64_t	 h;

	if ((klen = keybytes(key, k, sizeof(k))) == 0)
		return NULL;
	h = fnv(k, klen);
	pthread_mutex_lock(&t->mu);
	if ((e = find(t, h, k, klen)) != NULL && e->fp == fp) {
		b = e->b;
		__atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED);
		unlink_lru(t, e);
		push_newest(t, e);
		t->hits++;
	} else {
		if (e != NULL) {	/* of bytes that changed */
			remove_entry(t, e);
			gone = e;
		}
		t->misses++;
	}
	pthread_mutex_unlock(&t->mu);
	if (gone != NULL) {
		hot_release(gone->b);
		free(gone);
	}
	return b;
}

struct hot_bytes *
hot_put(struct hot *t, const struct cache_key *key, uint64_t fp, void *buf,
    size_t size)
{
	unsigned char	 k[2 + CACHE_ID_MAX + 4096];
	struct entry	*e, *old, *gone = NULL, *next;
	struct hot_bytes *b;
	size_t		 klen;

	if ((b = malloc(sizeof(*b))) == NULL) {
		free(buf);
		return NULL;
	}
	b->refs = 1;	/* the caller's */
	b->size = size;
	b->data = buf;
	if (size > t->file_max || (klen = keybytes(key, k, sizeof(k))) == 0 ||
	    (e = malloc(sizeof(*e) + klen)) == NULL)
		return b;	/* served, not kept */
	e->hash = fnv(k, klen);
	e->fp = fp;
	e->b = b;
	e->klen = klen;
	memcpy(e->k, k, klen);
	b->refs = 2;	/* and the entry's */
	pthread_mutex_lock(&t->mu);
	if ((old = find(t, e->hash, k, klen)) != NULL) {
		remove_entry(t, old);
		old->next = gone;
		gone = old;
	}
	while (t->oldest != NULL && t->bytes + size > t->budget) {
		old = t->oldest;
		remove_entry(t, old);
		old->next = gone;
		gone = old;
	}
	e->next = t->buckets[e->hash & (NBUCKETS - 1)];
	t->buckets[e->hash & (NBUCKETS - 1)] = e;
	push_newest(t, e);
	t->bytes += size;
	t->entries++;
	pthread_mutex_unlock(&t->mu);
	for (; gone != NULL; gone = next) {
		next = gone->next;
		hot_release(gone->b);
		free(gone);
	}
	return b;
}

/*
 * The rule of what is kept, read by both halves (hot_find(), hot_keep()):
 * a debuginfo, executable or source file of 1 to file_max bytes whose
 * identity is known, a blob's digest or a file in place (its
 * fingerprint changes with the file).
 */
static int
fits(const struct hot *t, const struct cache_key *key,
    const struct cache_record *rec)
{
	static const unsigned char zero[32];

	return t != NULL && rec->size != 0 && rec->size <= t->file_max &&
	    (key->kind == CACHE_DEBUGINFO || key->kind == CACHE_EXECUTABLE ||
	    key->kind == CACHE_SOURCE) && ((rec->flags & CACHE_F_EXTERNAL) ||
	    memcmp(rec->digest, zero, sizeof(zero)) != 0);
}

struct hot_bytes *
hot_find(struct hot *t, const struct cache_key *key,
    const struct cache_record *rec)
{
	/* A file in place must still be the one indexed. */
	if (!fits(t, key, rec) || ((rec->flags & CACHE_F_EXTERNAL) &&
	    !cache_external_same(rec, -1)))
		return NULL;
	return hot_get(t, key, cache_fingerprint(rec));
}

struct hot_bytes *
hot_keep(struct hot *t, const struct cache_key *key,
    const struct cache_record *rec, int fd)
{
	void	*buf;
	ssize_t	 n;

	if (!fits(t, key, rec) || (buf = malloc(rec->size)) == NULL)
		return NULL;
	if ((n = pread(fd, buf, rec->size, 0)) != (ssize_t)rec->size) {
		free(buf);
		return NULL;
	}
	close(fd);
	return hot_put(t, key, cache_fingerprint(rec), buf, rec->size);
}

const void *
hot_data(const struct hot_bytes *b)
{
	return b->data;
}

size_t
hot_size(const struct hot_bytes *b)
{
	return b->size;
}

void
hot_release(void *arg)
{
	struct hot_bytes *b = arg;

	if (b == NULL || __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	free(b->data);
	free(b);
}

void
hot_stats(struct hot *t, uint64_t *entries, uint64_t *bytes, uint64_t *hits,
    uint64_t *misses)
{
	pthread_mutex_lock(&t->mu);
	*entries = t->entries;
	*bytes = t->bytes;
	*hits = t->hits;
	*misses = t->misses;
	pthread_mutex_unlock(&t->mu);
}

void
hot_free(struct hot *t)
{
	struct entry	*e, *older;

	if (t == NULL)
		return;
	for (e = t->newest; e != NULL; e = older) {
		older = e->older;
		hot_release(e->b);
		free(e);
	}
	pthread_mutex_destroy(&t->mu);
	free(t);
}
