/*
 * upstream_http: the debuginfod row (upstream.h).  An --upstream URL is a
 * debuginfod server: GET URL/buildid/ID/KIND[/EXTRA], with the lines of
 * its header-file, its TLS settings and timeouts, and the federation
 * headers (fetch.h): the client's User-Agent with this hub's mark, the
 * X-Forwarded-For chain, the X-Symhub-Via chain with this hub last.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <curl/curl.h>

#include "common/kind.h"
#include "common/webapi.h"
#include "log.h"
#include "upstream.h"

/* What the row keeps of one upstream (u->ctx). */
struct http_up {
	struct curl_slist	*headers;	/* from header-file */
	int			 ca_is_dir;	/* ca-path names a directory */
};

/* One "Name: value" line of an upstream's header file, for libcurl. */
static int
header_line(void *ctx, const char *line)
{
	struct http_up		*h = ctx;
	struct curl_slist	*l;

	if ((l = curl_slist_append(h->headers, line)) == NULL)
		return -ENOMEM;
	h->headers = l;
	return 0;
}

static int
load_headers(struct upstream *u, struct http_up *h)
{
	char	why[128];
	int	rc;

	if (u->spec.header_file == NULL)
		return 0;
	if ((rc = config_header_file(u->spec.header_file, header_line, h, why,
	    sizeof(why))) < 0)
		log_warnx("upstream %s: header file %s: %s", u->spec.name,
		    u->spec.header_file, why);
	return rc;
}

static int
http_init(struct upstream *u, const struct config *cfg, const char *arg,
    void *ctx)
{
	struct http_up	*h;
	const char	*why;
	struct stat	 st;
	int		 rc;

	(void)ctx;
	if ((rc = config_parse_upstream(cfg, arg, &u->spec, &why)) < 0) {
		log_warnx("upstream '%s': %s", arg, why);
		return rc;
	}
	if ((h = calloc(1, sizeof(*h))) == NULL)
		return -ENOMEM;
	u->ctx = h;
	if ((rc = load_headers(u, h)) < 0)
		return rc;
	if (u->spec.ca_path != NULL)
		h->ca_is_dir = stat(u->spec.ca_path, &st) == 0 &&
		    S_ISDIR(st.st_mode);
	return 0;
}

static void
http_fini(struct upstream *u)
{
	struct http_up *h = u->ctx;

	if (h == NULL)
		return;
	curl_slist_free_all(h->headers);
	free(h);
}

/* Percent-encode what may not stand in a URL path as it is. */
static int
append_path(char *buf, size_t cap, size_t *len, const char *s)
{
	static const char hx[] = "0123456789ABCDEF";
	unsigned char ch;

	for (; *s; s++) {
		ch = (unsigned char)*s;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || strchr("/-._~+,=@:", ch)) {
			if (*len + 1 >= cap)
				return -ENAMETOOLONG;
			buf[(*len)++] = (char)ch;
		} else {
			if (*len + 3 >= cap)
				return -ENAMETOOLONG;
			buf[(*len)++] = '%';
			buf[(*len)++] = hx[ch >> 4];
			buf[(*len)++] = hx[ch & 15];
		}
	}
	buf[*len] = '\0';
	return 0;
}

/* Append "Name: value" to *l.  @return 0 or -ENOMEM. */
static int
add_header(struct curl_slist **l, const char *name, const char *value)
{
	struct curl_slist	*n;
	char			 hdr[4200];

	/* A value over 4 KB is cut, as a client's X-Forwarded-For that long
	 * always was (what it would say is garbage anyway). */
	if ((size_t)snprintf(hdr, sizeof(hdr), "%s: %s", name, value) >=
	    sizeof(hdr))
		log_debug("%s header cut to %zu bytes", name, sizeof(hdr));
	if ((n = curl_slist_append(*l, hdr)) == NULL)
		return -ENOMEM;
	*l = n;
	return 0;
}

/*
 * A handle for GET url from u, with what every request to it carries: its
 * header-file lines, the federation headers (the User-Agent, the
 * X-Forwarded-For, the chain of hubs with ours last), its TLS settings
 * and timeouts.  @return 0 or -errno; on failure *easy and *hdrs may be
 * set: the caller frees them in every case.
 */
static int
http_side(const struct upstream *u, const char *url,
    const struct upstream_ask *ask, CURL **easy, struct curl_slist **hdrs)
{
	const struct http_up	*h = u->ctx;
	struct curl_slist	*l, *n;
	char			 chain[4200];
	int			 rc;

	*hdrs = NULL;
	if ((*easy = curl_easy_init()) == NULL)
		return -ENOMEM;
	for (l = h->headers; l != NULL; l = l->next) {
		if ((n = curl_slist_append(*hdrs, l->data)) == NULL)
			return -ENOMEM;
		*hdrs = n;
	}
	if (ask->xff != NULL &&
	    (rc = add_header(hdrs, "X-Forwarded-For", ask->xff)) < 0)
		return rc;
	/* The chain of hubs this request went through, ours last: a hub
	 * that finds itself in it answers 404 at once (see http.c). */
	snprintf(chain, sizeof(chain), "%s%s%s", ask->via ? ask->via : "",
	    ask->via ? ", " : "", ask->hub);
	if ((rc = add_header(hdrs, "X-Symhub-Via", chain)) < 0)
		return rc;
	curl_easy_setopt(*easy, CURLOPT_URL, url);
	curl_easy_setopt(*easy, CURLOPT_HTTPHEADER, *hdrs);
	curl_easy_setopt(*easy, CURLOPT_USERAGENT, ask->ua);
	curl_easy_setopt(*easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(*easy, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(*easy, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(*easy, CURLOPT_HTTP_VERSION,
	    (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(*easy, CURLOPT_CONNECTTIMEOUT_MS,
	    (long)(u->spec.connect * 1000));
	curl_easy_setopt(*easy, CURLOPT_TIMEOUT_MS,
	    (long)(u->spec.timeout * 1000));
	curl_easy_setopt(*easy, CURLOPT_SSL_VERIFYPEER,
	    (long)u->spec.tls_verify);
	curl_easy_setopt(*easy, CURLOPT_SSL_VERIFYHOST,
	    u->spec.tls_verify ? 2L : 0L);
	if (u->spec.ca_path != NULL)
		curl_easy_setopt(*easy, h->ca_is_dir ? CURLOPT_CAPATH :
		    CURLOPT_CAINFO, u->spec.ca_path);
	/* Never follow an https upstream down to plain http. */
	curl_easy_setopt(*easy, CURLOPT_REDIR_PROTOCOLS_STR,
	    strncmp(u->spec.url, "https:", 6) == 0 ? "https" : "http,https");
	return 0;
}

static int
http_setup(const struct upstream *u, const struct upstream_ask *ask,
    CURL **easy, struct curl_slist **hdrs)
{
	const struct cache_key	*key = ask->key;
	char			 url[8192], n[32];
	size_t			 len;
	int			 rc;

	len = (size_t)snprintf(url, sizeof(url), "%s/buildid/%s/%s",
	    u->spec.url, ask->idhex, kind_name(key->kind));
	if (len >= sizeof(url))
		return -ENAMETOOLONG;
	if (ask->raw_extra != NULL) {
		if (key->kind == CACHE_SECTION)
			url[len++] = '/';
		if (append_path(url, sizeof(url), &len, ask->raw_extra) < 0)
			return -ENAMETOOLONG;
	}
	if ((rc = http_side(u, url, ask, easy, hdrs)) < 0)
		return rc;
	if (ask->maxsize) {
		snprintf(n, sizeof(n), "%" PRIu64, ask->maxsize);
		if (add_header(hdrs, "X-DEBUGINFOD-MAXSIZE", n) < 0)
			return -ENOMEM;
	}
	/* Asked by hand, not with CURLOPT_ACCEPT_ENCODING: libcurl would
	 * decode, and the engine keeps the coded bytes as they came. */
	if ((ask->accept & WEBAPI_ENC_ZSTD) &&
	    add_header(hdrs, "Accept-Encoding", "zstd") < 0)
		return -ENOMEM;
	curl_easy_setopt(*easy, CURLOPT_HTTPHEADER, *hdrs);
	return 0;
}

/* X-DEBUGINFOD-SIZE, -FILE, -ARCHIVE, -IMASIGNATURE. */
static int
http_header(struct upstream_reply *r, const char *line, size_t len)
{
	char *v;

	if ((v = upstream_header_value(line, len, "X-DEBUGINFOD-SIZE")) !=
	    NULL) {
		char			*end;
		unsigned long long	 sz;

		errno = 0;
		sz = strtoull(v, &end, 10);
		r->xsize = errno == 0 && end != v && *end == '\0' &&
		    sz <= INT64_MAX ? (int64_t)sz : -2;	/* -2: garbage */
		free(v);
	} else if ((v = upstream_header_value(line, len,
	    "X-DEBUGINFOD-FILE")) != NULL) {
		free(r->xfile);
		r->xfile = v;
	} else if ((v = upstream_header_value(line, len,
	    "X-DEBUGINFOD-ARCHIVE")) != NULL) {
		free(r->xarchive);
		r->xarchive = v;
	} else if ((v = upstream_header_value(line, len,
	    "X-DEBUGINFOD-IMASIGNATURE")) != NULL) {
		free(r->ximasig);
		r->ximasig = v;
	} else {
		return 0;
	}
	return 1;
}

static const char *const http_schemes[] = { "http://", "https://", NULL };

const struct upstream_kind upstream_debuginfod = {
	.name = "debuginfod",
	.schemes = http_schemes,
	.tier = 1,
	.init = http_init,
	.fini = http_fini,
	.setup = http_setup,
	.header = http_header,
	.side = http_side,
};
