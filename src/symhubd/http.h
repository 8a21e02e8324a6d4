/*
 * http: the libmicrohttpd front.  Parses requests with webapi, answers from
 * the cache, and is the one place that chooses HTTP status codes (see
 * symhubd(8), "WEB API").
 */
#ifndef SYMHUB_HTTP_H
#define SYMHUB_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"
#include "common/auth.h"
#include "config.h"
#include "fetch.h"
#include "derive.h"
#include "encode.h"
#include "hot.h"
#include "meta.h"
#include "scan.h"

struct http;

/* What the front serves from; each must outlive the server.  s (no
 * scanning), f (no upstreams), auth (uploads refused), dv (no derived
 * artifacts), enc (nothing compressed) and hot (nothing kept in memory)
 * may be NULL. */
struct http_parts {
	struct cache	*c;
	struct scan	*s;
	struct fetch	*f;
	struct auth	*auth;		/* the server's from http_start() */
	struct derive	*dv;
	struct meta	*meta;
	struct encode	*enc;
	struct hot	*hot;
	struct bucket	*bucket;	/* NULL: no S3 tier */
};

/*
 * Open a TCP socket bound to spec ("ADDR:PORT", "[ADDR6]:PORT", ":PORT"
 * for every address), not listening yet: a client is refused, not kept
 * waiting, until http_start().  Nothing is logged.
 * @param why  on failure, the cause in words ("the address is not on
 *             this machine", "no port: ...").
 * @return 0 and *fd (the caller's to close or pass on); -EINVAL for a
 *         malformed or unresolvable spec; -errno of socket() or bind().
 */
int	http_bind(const char *spec, int *fd, char *why, size_t whylen);

/*
 * Start listening on fd (from http_bind()) and serving from p (copied);
 * cfg must outlive the server.  fd is owned by the server from the call
 * on, closed on failure too.
 * @return 0 and *out, or -errno with the cause in why.
 */
int	http_start(const struct config *cfg, const struct http_parts *p,
	    int fd, struct http **out, char *why, size_t whylen);

/* The port actually bound (useful with port 0). */
uint16_t http_port(const struct http *h);

/*
 * Tokens read again (SIGHUP): requests from now on are checked against
 * a, which the server owns from now on; those under way keep what they
 * were granted (a download goes on).  NULL a keeps the old ones.
 */
void	http_set_auth(struct http *h, struct auth *a);

/* Stop accepting, finish or drop connections, free.  Accepts NULL. */
void	http_stop(struct http *h);

#endif
