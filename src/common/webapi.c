/*
 * webapi: parsing and validation of debuginfod request URLs.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/hex.h"
#include "kind.h"
#include "webapi.h"

/* Longest section name we accept; ELF itself has no limit. */
#define SECTION_NAME_MAX	255

/*
 * The checks of webapi_parse_hexid(), with a reason for the client.  The
 * length is checked before any byte is written, so out never overflows.
 */
static int
hexid(const char *hex, size_t len, unsigned char *out, const char **why)
{
	size_t	i;

	if (len == 0) {
		*why = "empty build-id";
		return -EINVAL;
	}
	if (len > WEBAPI_ID_HEX_MAX) {
		*why = "build-id longer than 128 hex characters";
		return -EINVAL;
	}
	if (len % 2 != 0) {
		*why = "build-id has an odd number of hex characters";
		return -EINVAL;
	}
	if (hex_decode(hex, len, out) < 0) {
		*why = "build-id has a non-hex character";
		for (i = 0; i < len; i++)
			if (hex[i] >= 'A' && hex[i] <= 'F')
				*why = "build-id must be lowercase hex";
		return -EINVAL;
	}
	return (int)(len / 2);
}

int
webapi_parse_hexid(const char *hex, size_t len,
    unsigned char out[WEBAPI_ID_HEX_MAX / 2])
{
	const char *why;

	return hexid(hex, len, out, &why);
}

/*
 * out ends in '/' while segments are read, and never gets ahead of in
 * (w <= r + 1 at the top of the loop, in[r] being a '/'), which is what
 * makes out == in safe: a segment is moved back over bytes already read,
 * and the '/' after it lands on the '/' that follows it in in.  A last
 * segment gets no '/', so out is never longer than in.
 */
int
webapi_canon_path(const char *in, char *out)
{
	size_t	r = 0, w = 0, n;
	int	end;

	if (in[0] != '/')
		return -EINVAL;
	out[w++] = '/';
	for (;;) {
		while (in[r] == '/')
			r++;
		if (in[r] == '\0')
			break;
		n = strcspn(in + r, "/");
		end = in[r + n] == '\0';
		if (n == 2 && in[r] == '.' && in[r + 1] == '.') {
			if (w > 1) {
				w--;
				while (out[w - 1] != '/')
					w--;
			}
		} else if (n != 1 || in[r] != '.') {
			memmove(out + w, in + r, n);
			w += n;
			if (!end)
				out[w++] = '/';
		}
		if (end)
			break;
		r += n;
	}
	out[w] = '\0';
	return 0;
}

char *
webapi_canon_source(const char *name)
{
	size_t	 n = strlen(name);
	char	*c;

	if (n == 0) {
		errno = EINVAL;
		return NULL;
	}
	if ((c = malloc(n + 2)) == NULL)
		return NULL;
	c[0] = '/';
	memcpy(c + (name[0] != '/'), name, n + 1);
	(void)webapi_canon_path(c, c);	/* absolute: cannot fail */
	return c;
}

static int
source(const char *path, struct webapi_req *req, const char **why)
{
	int rc;

	req->raw_extra = path;
	if ((req->extra = malloc(strlen(path) + 1)) == NULL) {
		*why = "out of memory";
		return -ENOMEM;
	}
	if ((rc = webapi_canon_path(path, req->extra)) != 0) {
		*why = "source path is not absolute";
		return rc;
	}
	if (strcmp(req->extra, "/") == 0) {
		*why = "missing source path";
		return -EINVAL;
	}
	return 0;
}

static int
section(const char *name, struct webapi_req *req, const char **why)
{
	size_t len;

	len = strlen(name);
	if (len == 0) {
		*why = "empty section name";
		return -EINVAL;
	}
	if (strchr(name, '/') != NULL) {
		*why = "section name contains '/'";
		return -EINVAL;
	}
	if (len > SECTION_NAME_MAX) {
		*why = "section name longer than 255 bytes";
		return -EINVAL;
	}
	req->raw_extra = name;
	if ((req->extra = strdup(name)) == NULL) {
		*why = "out of memory";
		return -ENOMEM;
	}
	return 0;
}

int
webapi_parse(const char *url, struct webapi_req *req, const char **why)
{
	static const char prefix[] = "/buildid/", fprefix[] = "/fileid/";
	const char	*dummy, *id, *type, *rest;
	size_t		 idlen, tlen;
	int		 rc, by_fileid;

	if (why == NULL)
		why = &dummy;
	*why = NULL;
	memset(req, 0, sizeof(*req));

	if (strcmp(url, "/") == 0) {
		req->route = WEBAPI_ROOT;
		return 0;
	}
	if (strcmp(url, "/metrics") == 0) {
		req->route = WEBAPI_METRICS;
		return 0;
	}
	if (strcmp(url, "/status") == 0) {
		req->route = WEBAPI_STATUS;
		return 0;
	}
	if (strcmp(url, "/metadata") == 0) {
		req->route = WEBAPI_METADATA;
		return 0;
	}
	if (strcmp(url, "/symbolize") == 0) {
		req->route = WEBAPI_BATCH;
		return 0;
	}
	if (strcmp(url, "/symbolize/pprof") == 0) {
		req->route = WEBAPI_PPROF;
		return 0;
	}
	if (strcmp(url, "/symbolize/otlp") == 0) {
		req->route = WEBAPI_OTLP;
		return 0;
	}
	if (strcmp(url, "/symbolicate/v5") == 0) {
		req->route = WEBAPI_TECKEN;
		return 0;
	}
	if (strcmp(url, "/source/v1") == 0) {
		req->route = WEBAPI_SOURCE_V1;
		return 0;
	}
	if (strcmp(url, "/asm/v1") == 0) {
		req->route = WEBAPI_ASM_V1;
		return 0;
	}
	by_fileid = strncmp(url, fprefix, sizeof(fprefix) - 1) == 0;
	if (!by_fileid && strncmp(url, prefix, sizeof(prefix) - 1) != 0) {
		*why = "no such route";
		return -ENOENT;
	}

	id = url + (by_fileid ? sizeof(fprefix) : sizeof(prefix)) - 1;
	idlen = strcspn(id, "/");
	if ((rc = hexid(id, idlen, req->id, why)) < 0)
		goto out;
	if (by_fileid && rc != CACHE_FILEID_LEN) {
		*why = "a FileID is 32 hex characters";
		rc = -EINVAL;
		goto out;
	}
	req->by_fileid = by_fileid;
	req->idlen = (size_t)rc;
	memcpy(req->idhex, id, idlen);
	req->idhex[idlen] = '\0';
	rc = 0;

	if (id[idlen] == '\0') {
		*why = "unknown artifact type (none given)";
		rc = -EINVAL;
		goto out;
	}
	type = id + idlen + 1;
	tlen = strcspn(type, "/");
	rest = type + tlen;	/* "" or "/..." */

	if (tlen == sizeof("symbolize") - 1 &&
	    memcmp(type, "symbolize", tlen) == 0) {
		req->kind = CACHE_GSYM;
		req->symbolize = 1;
	} else if (kind_parse(type, tlen, &req->kind) < 0) {
		*why = "unknown artifact type";
		rc = -EINVAL;
		goto out;
	}
	switch (req->kind) {
	case CACHE_SOURCE:
		if (*rest == '\0') {
			*why = "missing source path";
			rc = -EINVAL;
		} else
			rc = source(rest, req, why);
		break;
	case CACHE_SECTION:
		if (*rest == '\0') {
			*why = "missing section name";
			rc = -EINVAL;
		} else
			rc = section(rest + 1, req, why);
		break;
	default:
		if (*rest != '\0') {
			*why = "unexpected characters after artifact type";
			rc = -EINVAL;
		}
		break;
	}

out:
	if (rc != 0) {
		webapi_req_free(req);
		memset(req, 0, sizeof(*req));
		return rc;
	}
	req->route = WEBAPI_ARTIFACT;
	return 0;
}

void
webapi_req_free(struct webapi_req *req)
{
	if (req == NULL)
		return;
	free(req->extra);
	req->extra = NULL;
	req->raw_extra = NULL;
}

/* A decimal number of at most 19 digits at *p.  @return 0 and moves *p,
 * or -EINVAL. */
static int
range_num(const char **p, uint64_t *v)
{
	const char	*s = *p;
	int		 n = 0;

	*v = 0;
	while (*s >= '0' && *s <= '9' && n < 19) {
		*v = *v * 10 + (uint64_t)(*s - '0');
		s++;
		n++;
	}
	if (n == 0 || (*s >= '0' && *s <= '9'))
		return -EINVAL;
	*p = s;
	return 0;
}

int
webapi_range(const char *hdr, uint64_t size, uint64_t *off, uint64_t *len)
{
	const char	*p = hdr;
	uint64_t	 first, last;

	if (p == NULL)
		return 0;
	p += strspn(p, " \t");
	if (strncasecmp(p, "bytes", 5) != 0)
		return 0;
	p += 5;
	p += strspn(p, " \t");
	if (*p++ != '=')
		return 0;
	p += strspn(p, " \t");
	if (*p == '-') {
		/* The last SUFFIX bytes. */
		p++;
		if (range_num(&p, &last) != 0)
			return 0;
		p += strspn(p, " \t");
		if (*p != '\0')
			return 0;	/* a list: sent whole */
		if (last == 0 || size == 0)
			return -ENODATA;
		*len = last < size ? last : size;
		*off = size - *len;
		return 1;
	}
	if (range_num(&p, &first) != 0 || *p++ != '-')
		return 0;
	if (*p >= '0' && *p <= '9') {
		if (range_num(&p, &last) != 0 || last < first)
			return 0;
	} else
		last = UINT64_MAX;
	p += strspn(p, " \t");
	if (*p != '\0')
		return 0;
	if (first >= size)
		return -ENODATA;
	if (last >= size)
		last = size - 1;
	*off = first;
	*len = last - first + 1;
	return 1;
}

int
webapi_etag_match(const char *list, const char *etag)
{
	const char	*p = list, *tag;
	size_t		 n, elen;

	if (list == NULL || etag == NULL)
		return 0;
	if (etag[0] == 'W' && etag[1] == '/')
		etag += 2;
	elen = strlen(etag);
	while (*p != '\0') {
		p += strspn(p, " \t,");
		if (*p == '\0')
			break;
		if (*p == '*')
			return 1;
		tag = p;
		if (tag[0] == 'W' && tag[1] == '/')
			tag += 2;
		if (*tag != '"')
			return 0;	/* malformed: matches nothing */
		n = 1 + strcspn(tag + 1, "\"");
		if (tag[n] != '"')
			return 0;
		n++;
		if (n == elen && memcmp(tag, etag, n) == 0)
			return 1;
		p = tag + n;
	}
	return 0;
}

int
webapi_metadata(const char *key, const char *value, struct webapi_meta *out,
    const char **why)
{
	static const struct {
		const char		*name;
		enum webapi_meta_key	 key;
	} keys[] = {
		{ "file", WEBAPI_META_FILE },
		{ "glob", WEBAPI_META_GLOB },
		{ "buildid", WEBAPI_META_BUILDID }
	};
	const char	*dummy;
	size_t		 i;
	int		 n;

	if (why == NULL)
		why = &dummy;
	memset(out, 0, sizeof(*out));
	if (key == NULL || value == NULL) {
		*why = "/metadata webapi error, need key and value";
		return -EINVAL;
	}
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(key, keys[i].name) == 0)
			break;
	if (i == sizeof(keys) / sizeof(keys[0])) {
		*why = "/metadata webapi error, unsupported key";
		return -ENOTSUP;
	}
	out->key = keys[i].key;
	out->keyname = keys[i].name;
	out->value = value;
	if (out->key == WEBAPI_META_BUILDID &&
	    (n = webapi_parse_hexid(value, strlen(value), out->id)) > 0)
		out->idlen = (size_t)n;
	return 0;
}

int
webapi_meta_match(const struct webapi_meta *m, const char *name)
{
	switch (m->key) {
	case WEBAPI_META_FILE:
		return strcmp(m->value, name) == 0;
	case WEBAPI_META_GLOB:
		return fnmatch(m->value, name, FNM_PATHNAME) == 0;
	default:
		return 0;
	}
}

/* The q-value of an element's parameters (from after its name): 1 when
 * none is given, 0 for q=0 (or 0.0, 0.000), and 0 for one malformed. */
static int
q_nonzero(const char *p, const char *end)
{
	while (p < end) {
		p += strspn(p, " \t;");
		if (end - p >= 2 && (p[0] == 'q' || p[0] == 'Q') &&
		    p[1] == '=') {
			p += 2;
			if (p < end && *p == '1')
				return 1;
			if (p >= end || *p != '0')
				return 0;
			for (p++; p < end && (*p == '.' || *p == '0'); p++)
				;
			return p < end && *p >= '1' && *p <= '9';
		}
		while (p < end && *p != ';')
			p++;
	}
	return 1;
}

unsigned
webapi_accept_encoding(const char *hdr)
{
	static const struct {
		const char	*name;
		unsigned	 bit;
	} codings[] = {
		{ "zstd", WEBAPI_ENC_ZSTD },
		{ "gzip", WEBAPI_ENC_GZIP },
		{ "x-gzip", WEBAPI_ENC_GZIP },
		{ "*", WEBAPI_ENC_ZSTD | WEBAPI_ENC_GZIP }
	};
	unsigned	 yes = 0, no = 0, bits;
	const char	*p = hdr, *end, *name;
	size_t		 n, i;

	if (hdr == NULL)
		return 0;
	while (*p != '\0') {
		p += strspn(p, " \t,");
		end = p + strcspn(p, ",");
		name = p;
		n = strcspn(p, " \t;,");
		bits = 0;
		for (i = 0; i < sizeof(codings) / sizeof(codings[0]); i++)
			if (strlen(codings[i].name) == n &&
			    strncasecmp(name, codings[i].name, n) == 0)
				bits = codings[i].bit;
		/* A coding named with q=0 is refused even if "*" allows it. */
		if (bits != 0 && q_nonzero(name + n, end))
			yes |= bits;
		else if (bits != 0 && n != 1)
			no |= bits;
		p = end;
	}
	return yes & ~no;
}
