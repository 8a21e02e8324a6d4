/*
 * upstream: the registry of upstream kinds, and what every kind's answer
 * shares.  See upstream.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>

#include "upstream.h"

/* The kinds --upstream may pick, by URL scheme.  The bucket is not one:
 * it is --s3's, made by the fetch engine from the bucket it is given. */
static const struct upstream_kind *const kinds[] = {
	&upstream_debuginfod,
};

const struct upstream_kind *
upstream_kind_of(const char *url)
{
	const char *const	*s;
	size_t			 i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		for (s = kinds[i]->schemes; s != NULL && *s != NULL; s++)
			if (strncmp(url, *s, strlen(*s)) == 0)
				return kinds[i];
	return NULL;
}

int
upstream_open(struct upstream *u, const struct upstream_kind *kind,
    const struct config *cfg, const char *arg, void *ctx)
{
	u->kind = kind;
	u->tier = kind->tier;
	return kind->init != NULL ? kind->init(u, cfg, arg, ctx) : 0;
}

void
upstream_close(struct upstream *u)
{
	if (u->kind != NULL && u->kind->fini != NULL)
		u->kind->fini(u);
	config_upstream_free(&u->spec);
	u->ctx = NULL;
}

char *
upstream_header_value(const char *line, size_t n, const char *name)
{
	size_t nl = strlen(name);

	if (n <= nl || strncasecmp(line, name, nl) != 0 || line[nl] != ':')
		return NULL;
	line += nl + 1;
	n -= nl + 1;
	while (n > 0 && (*line == ' ' || *line == '\t'))
		line++, n--;
	while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == '\n' ||
	    line[n - 1] == ' '))
		n--;
	return strndup(line, n);
}

void
upstream_reply_clear(struct upstream_reply *r)
{
	free(r->xfile);
	free(r->xarchive);
	free(r->ximasig);
	free(r->origin);
	free(r->sha256);
	r->xfile = r->xarchive = r->ximasig = NULL;
	r->origin = r->sha256 = NULL;
	r->lastmod = 0;
	r->xsize = -1;
	r->encoded = 0;
	r->zstd = 0;
	r->level = 0;
}

int
upstream_reply_header(struct upstream_reply *r, const char *line,
    size_t len)
{
	char *v;

	if (len >= 5 && strncmp(line, "HTTP/", 5) == 0) {
		/* A new response (after a redirect): forget the last one's. */
		upstream_reply_clear(r);
		return 1;
	}
	if ((v = upstream_header_value(line, len, "Content-Encoding")) !=
	    NULL) {
		/* One coding, zstd, is what a hub can decode; several
		 * (or several headers) are refused as any other. */
		r->zstd = !r->encoded && strcasecmp(v, "zstd") == 0;
		r->encoded |= strcasecmp(v, "identity") != 0;
		free(v);
		return 1;
	}
	if ((v = upstream_header_value(line, len, "X-Symhub-Level")) != NULL) {
		char *end;
		long  l;

		errno = 0;
		l = strtol(v, &end, 10);
		/* A level zstd has, else not said. */
		r->level = errno == 0 && end != v && *end == '\0' && l > 0 &&
		    l <= 22 ? (int)l : 0;
		free(v);
		return 1;
	}
	if ((v = upstream_header_value(line, len, "Last-Modified")) != NULL) {
		time_t t = curl_getdate(v, NULL);

		r->lastmod = t > 0 ? (int64_t)t : 0;
		free(v);
		return 1;
	}
	return 0;
}
