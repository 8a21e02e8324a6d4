/*
 * webapi: parsing and validation of debuginfod request URLs.
 *
 * Pure functions: no I/O, no logging, no allocation except where noted.
 * The HTTP front maps the results to status codes.
 */
#ifndef SYMHUB_WEBAPI_H
#define SYMHUB_WEBAPI_H

#include <stddef.h>
#include <stdint.h>

#include "base/artifact.h"

/* Longest id a client may send, in hex characters (libdebuginfod's limit). */
#define WEBAPI_ID_HEX_MAX	128

enum webapi_route {
	WEBAPI_ROOT = 1,	/* "/" */
	WEBAPI_METRICS,		/* "/metrics" */
	WEBAPI_STATUS,		/* "/status": the status page */
	WEBAPI_ARTIFACT,	/* "/buildid/ID/..." or "/fileid/FILEID/..." */
	WEBAPI_METADATA,	/* "/metadata": its query in webapi_meta */
	WEBAPI_BATCH,		/* "/symbolize": POST, many modules */
	WEBAPI_TECKEN,		/* "/symbolicate/v5": POST, Tecken's API */
	WEBAPI_SOURCE_V1,	/* "/source/v1": POST, the Firefox Profiler's */
	WEBAPI_ASM_V1,		/* "/asm/v1": POST, the Firefox Profiler's */
	WEBAPI_PPROF,		/* "/symbolize/pprof": POST, a pprof profile */
	WEBAPI_OTLP		/* "/symbolize/otlp": POST, OTLP profiles */
};

struct webapi_req {
	enum webapi_route route;
	enum cache_kind	 kind;		/* WEBAPI_ARTIFACT only */
	unsigned char	 id[WEBAPI_ID_HEX_MAX / 2];
	size_t		 idlen;		/* bytes in id */
	char		 idhex[WEBAPI_ID_HEX_MAX + 1];	/* as sent, NUL-terminated */
	int		 by_fileid;	/* /fileid/ID/...: id is a FileID */
	int		 symbolize;	/* .../symbolize (kind CACHE_GSYM) */
	/*
	 * CACHE_SOURCE: the canonical absolute path (dot segments and
	 * repeated slashes removed).  CACHE_SECTION: the section name.
	 * NULL for other kinds.  Owned by the request; webapi_req_free().
	 */
	char		*extra;
	/* The client's own spelling of the source path or section name: a
	 * pointer into the url passed to webapi_parse(), valid as long as it. */
	const char	*raw_extra;
};

/*
 * Parse a request path as libmicrohttpd hands it over (percent-decoded, no
 * query string).
 *
 * @param url  NUL-terminated path; must outlive req->raw_extra.
 * @param req  filled on success; zeroed first in every case, so
 *             webapi_req_free() is always safe on it.
 * @param why  on failure, set to a static human-readable reason.
 * @return 0 on success;
 *         -ENOENT  no such route (not under /buildid or /fileid, not /
 *                  or /metrics);
 *         -EINVAL  malformed request: bad id (empty, odd length, uppercase,
 *                  non-hex, longer than WEBAPI_ID_HEX_MAX; a FileID not
 *                  of 32 characters), unknown
 *                  artifact type, missing or malformed source path or
 *                  section name;
 *         -ENOMEM  out of memory.
 */
int	webapi_parse(const char *url, struct webapi_req *req, const char **why);

/* Release what webapi_parse() allocated.  Accepts NULL and zeroed requests. */
void	webapi_req_free(struct webapi_req *req);

/* Content codings symhubd can answer with (webapi_accept_encoding()). */
#define WEBAPI_ENC_ZSTD	0x1u
#define WEBAPI_ENC_GZIP	0x2u

/*
 * Read an Accept-Encoding header (RFC 9110 section 12.5.3): which of zstd
 * and gzip (or x-gzip) it accepts, by name or through "*", with a q-value
 * above 0.  Case-insensitive; a malformed element is passed over.
 * @param hdr  the header's value, or NULL (none: identity only).
 * @return WEBAPI_ENC_* bits.
 */
unsigned	webapi_accept_encoding(const char *hdr);

/*
 * /metadata?key=KEY&value=VALUE (doc/protocol.md, "/metadata"): which
 * indexed executables and debuginfo files a name, a glob or a build-id
 * finds.
 */
enum webapi_meta_key {
	WEBAPI_META_FILE = 1,	/* the file's name equals value */
	WEBAPI_META_GLOB,	/* fnmatch(value, name, FNM_PATHNAME) */
	WEBAPI_META_BUILDID	/* the build-id, in hex */
};

struct webapi_meta {
	enum webapi_meta_key	 key;
	const char		*keyname;	/* "file", "glob", "buildid" */
	const char		*value;		/* the caller's */
	/* WEBAPI_META_BUILDID: the id, when value is one (idlen 0: it is
	 * not lowercase hex of an even length, and finds nothing). */
	unsigned char		 id[WEBAPI_ID_HEX_MAX / 2];
	size_t			 idlen;
};

/*
 * Read the query's key and value (the decoded GET arguments, NULL when
 * absent) into out.
 * @param why  on failure, the text elfutils answers with.
 * @return 0; -EINVAL when key or value is missing; -ENOTSUP for a key
 *         other than file, glob and buildid.
 */
int	webapi_metadata(const char *key, const char *value,
	    struct webapi_meta *out, const char **why);

/* Does the indexed file name (a loose file's path, or a member's name
 * in its archive) match the query?  @return 1 or 0. */
int	webapi_meta_match(const struct webapi_meta *m, const char *name);

/*
 * Canonicalize an absolute path: remove "." and ".." segments as RFC 3986
 * section 5.2.4 does (".." never climbs above "/"), and collapse runs of
 * "/".  A trailing "/" is kept.
 *
 * @param in   absolute path (must start with '/').
 * @param out  buffer of at least strlen(in) + 1 bytes; may equal in.
 * @return 0, or -EINVAL when in is not absolute.
 */
int	webapi_canon_path(const char *in, char *out);

/*
 * A source name as elfinfo_sources() gives it, absolute or relative (a
 * relative compilation directory: "./csu/version.c"), made canonical as
 * webapi_canon_path() makes a request's, a relative one rooted at "/"
 * ("/csu/version.c"), as dwsource.h roots it: the name a request, a
 * bundle member and the store use for it.
 * @return the name (malloc'd), or NULL (errno ENOMEM, or EINVAL for "").
 */
char	*webapi_canon_source(const char *name);

/*
 * Validate a lowercase hex id and decode it.
 * @return number of bytes written to out (len / 2), or -EINVAL.
 */
int	webapi_parse_hexid(const char *hex, size_t len,
	    unsigned char out[WEBAPI_ID_HEX_MAX / 2]);

/*
 * Read a Range header (RFC 9110 section 14) against a representation of
 * size bytes: one range "bytes=FIRST-LAST", "bytes=FIRST-" or
 * "bytes=-SUFFIX".  A malformed header, another unit and a list of
 * several ranges are ignored (the whole file is sent, as the RFC allows).
 * @param hdr  the header's value, or NULL.
 * @return 1 with *off and *len set (len >= 1); 0: send it whole;
 *         -ENODATA: no byte of it is in the file (416).
 */
int	webapi_range(const char *hdr, uint64_t size, uint64_t *off,
	    uint64_t *len);

/*
 * Does a list of entity tags (If-None-Match, If-Range) name etag (with its
 * quotes, as sent in ETag)?  "*" names any; a weak tag W/"x" matches "x"
 * (the weak comparison of RFC 9110 section 8.8.3.2, which If-None-Match
 * uses).  @return 1 or 0.
 */
int	webapi_etag_match(const char *list, const char *etag);

#endif
