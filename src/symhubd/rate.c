/*
 * rate: token buckets in a fixed table (rate.h).
 *
 * A key hashes to a group of RATE_WAYS slots; it is found there or takes
 * the group's least recently seen slot.  Levels are kept in thousandths
 * of a request, so a rate of a few requests a second refills smoothly.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "rate.h"

#define RATE_WAYS	8
#define RATE_KEY_MAX	64	/* longer keys are kept as their hash */

struct slot {
	unsigned char	 key[RATE_KEY_MAX];
	size_t		 len;		/* 0: free */
	int64_t		 seen;		/* ms, the last take */
	uint64_t	 level;		/* thousandths of a request */
};

struct rate {
	pthread_mutex_t	 mu;
	struct slot	*s;
	size_t		 ngroups;
	uint64_t	 per_s, burst;
	uint64_t	 evictions;
};

int
rate_new(size_t slots, uint64_t per_s, uint64_t burst, struct rate **out)
{
	struct rate *rt;

	*out = NULL;
	if (slots == 0 || per_s == 0 || burst == 0)
		return -EINVAL;
	if ((rt = calloc(1, sizeof(*rt))) == NULL)
		return -ENOMEM;
	rt->ngroups = (slots + RATE_WAYS - 1) / RATE_WAYS;
	if ((rt->s = calloc(rt->ngroups * RATE_WAYS, sizeof(*rt->s))) ==
	    NULL) {
		free(rt);
		return -ENOMEM;
	}
	pthread_mutex_init(&rt->mu, NULL);
	rt->per_s = per_s;
	rt->burst = burst;
	*out = rt;
	return 0;
}

void
rate_free(struct rate *rt)
{
	if (rt == NULL)
		return;
	pthread_mutex_destroy(&rt->mu);
	free(rt->s);
	free(rt);
}

/* FNV-1a: the table's own, not a defence (the slots are few anyway). */
static uint64_t
hash(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n-- > 0)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

unsigned
rate_take(struct rate *rt, const void *key, size_t len, int64_t now_ms)
{
	unsigned char	 k[RATE_KEY_MAX];
	struct slot	*g, *s = NULL, *old;
	uint64_t	 full, add;
	unsigned	 wait = 0;
	size_t		 i;

	if (len > RATE_KEY_MAX) {
		SHA256(key, len, k);
		len = SHA256_DIGEST_LENGTH;
	} else
		memcpy(k, key, len);
	full = rt->burst * 1000;
	pthread_mutex_lock(&rt->mu);
	g = &rt->s[(hash(k, len) % rt->ngroups) * RATE_WAYS];
	old = &g[0];
	for (i = 0; i < RATE_WAYS; i++) {
		if (g[i].len == len && memcmp(g[i].key, k, len) == 0) {
			s = &g[i];
			break;
		}
		if (g[i].len == 0 || (old->len != 0 && g[i].seen < old->seen))
			old = &g[i];
	}
	if (s == NULL) {
		if (old->len != 0)
			rt->evictions++;
		s = old;
		memcpy(s->key, k, len);
		s->len = len;
		s->level = full;
	} else if (now_ms > s->seen) {
		add = (uint64_t)(now_ms - s->seen) * rt->per_s;
		s->level = add >= full - s->level ? full : s->level + add;
	}
	s->seen = now_ms;
	if (s->level >= 1000)
		s->level -= 1000;
	else
		wait = (unsigned)((1000 - s->level + rt->per_s * 1000 - 1) /
		    (rt->per_s * 1000));
	pthread_mutex_unlock(&rt->mu);
	return wait;
}

uint64_t
rate_evictions(struct rate *rt)
{
	uint64_t n;

	pthread_mutex_lock(&rt->mu);
	n = rt->evictions;
	pthread_mutex_unlock(&rt->mu);
	return n;
}
