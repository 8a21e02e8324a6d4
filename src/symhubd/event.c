/*
 * event: the bucket's event names.  See event.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/hex.h"
#include "event.h"

static const char *const ops[2] = { "put", "delete" };

static const char *
kind_word(enum cache_kind k)
{
	return k == CACHE_DEBUGINFO ? "debuginfo" :
	    k == CACHE_EXECUTABLE ? "executable" : NULL;
}

int
event_name(const struct event *e, char *out, size_t outsz)
{
	char	id[2 * CACHE_ID_MAX + 1], sha[65];
	int	n;

	if (e->ms < 0 || e->ms > 9999999999999LL || e->seq > 999999 ||
	    strlen(e->replica) != 16 || kind_word(e->kind) == NULL ||
	    e->idlen == 0 || e->idlen > CACHE_ID_MAX)
		return -EINVAL;
	hex_encode(e->id, e->idlen, id);
	if (e->have_sha)
		hex_encode(e->sha, sizeof(e->sha), sha);
	n = snprintf(out, outsz, EVENT_PREFIX "%013" PRId64 "-%s-%06u.%s.%s.%s"
	    "%s%s", e->ms, e->replica, e->seq, ops[e->del != 0],
	    kind_word(e->kind), id, e->have_sha ? "." : "",
	    e->have_sha ? sha : "");
	return n < 0 || (size_t)n >= outsz ? -ENAMETOOLONG : n;
}

/* n decimal digits at *p, advanced past them. */
static int
digits(const char **p, int n, int64_t *out)
{
	int64_t	v = 0;
	int	i;

	for (i = 0; i < n; i++) {
		if ((*p)[i] < '0' || (*p)[i] > '9')
			return -EINVAL;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*out = v;
	return 0;
}

/* The word at *p up to '.' or the end: one of words, advanced past it. */
static int
word(const char **p, const char *const *words, int nwords)
{
	size_t	n = strcspn(*p, ".");
	int	i;

	for (i = 0; i < nwords; i++)
		if (words[i] != NULL && strlen(words[i]) == n &&
		    memcmp(*p, words[i], n) == 0) {
			*p += n;
			return i;
		}
	return -EINVAL;
}

int
event_parse(const char *name, struct event *out)
{
	static const char *const kinds[] = { "debuginfo", "executable" };
	const char	*p = name, *dot;
	int64_t		 v;
	size_t		 n;
	int		 i;

	memset(out, 0, sizeof(*out));
	if (strnlen(name, EVENT_NAME_MAX + 1) > EVENT_NAME_MAX ||
	    strncmp(p, EVENT_PREFIX, strlen(EVENT_PREFIX)) != 0)
		return -EINVAL;
	p += strlen(EVENT_PREFIX);
	if (digits(&p, 13, &out->ms) < 0 || *p++ != '-')
		return -EINVAL;
	for (i = 0; i < 16; i++)
		if (hex_value(p[i]) < 0)
			return -EINVAL;
	memcpy(out->replica, p, 16);
	p += 16;
	if (*p++ != '-' || digits(&p, 6, &v) < 0 || *p++ != '.')
		return -EINVAL;
	out->seq = (unsigned)v;
	if ((i = word(&p, ops, 2)) < 0 || *p++ != '.')
		return -EINVAL;
	out->del = i;
	if ((i = word(&p, kinds, 2)) < 0 || *p++ != '.')
		return -EINVAL;
	out->kind = i == 0 ? CACHE_DEBUGINFO : CACHE_EXECUTABLE;
	dot = strchr(p, '.');
	n = dot != NULL ? (size_t)(dot - p) : strlen(p);
	if (n == 0 || n > 2 * CACHE_ID_MAX ||
	    hex_decode(p, n, out->id) != (int)(n / 2))
		return -EINVAL;
	out->idlen = n / 2;
	if (dot == NULL)
		return out->del ? 0 : -EINVAL;	/* a put names its bytes */
	p = dot + 1;
	if (out->del || strlen(p) != 64 || hex_decode(p, 64, out->sha) != 32)
		return -EINVAL;
	out->have_sha = 1;
	return 0;
}
