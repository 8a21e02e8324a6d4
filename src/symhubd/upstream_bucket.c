/*
 * upstream_bucket: the bucket row (upstream.h), the S3 tier's read side.
 * The bucket (bucket.h) is asked first and alone; its GET is signed by
 * libcurl and carries no federation headers (it is this hub's own
 * store); its objects say in x-amz-meta-* what an upstream's
 * X-DEBUGINFOD-* say, where the record came from and the SHA-256 their
 * bytes must hash to; what any other upstream sends is written back to
 * it; the other replicas' events (an upload, a delete) may change a key
 * while a job asks for it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "base/hex.h"
#include "common/kind.h"
#include "breaker.h"
#include "bucket.h"
#include "log.h"
#include "upstream.h"

/* Its spec: --s3's URL, named "bucket", the upstream-* settings. */
static int
row_init(struct upstream *u, const struct config *cfg, const char *arg,
    void *ctx)
{
	memset(&u->spec, 0, sizeof(u->spec));
	if ((u->spec.url = strdup(arg)) == NULL ||
	    (u->spec.name = strdup("bucket")) == NULL)
		return -ENOMEM;
	u->spec.connect = cfg->up_connect;
	u->spec.first_byte = cfg->up_first_byte;
	u->spec.timeout = cfg->up_timeout;
	u->spec.max_size = cfg->up_max_size;
	u->spec.tls_verify = 1;
	u->spec.kinds = 1u << CACHE_DEBUGINFO | 1u << CACHE_EXECUTABLE |
	    1u << CACHE_SOURCE;
	u->ctx = ctx;
	return 0;
}

static int
row_holds(const struct upstream *u, const struct cache_key *key)
{
	(void)u;
	return bucket_can_hold(key);
}

static int
row_setup(const struct upstream *u, const struct upstream_ask *ask,
    CURL **easy, struct curl_slist **hdrs)
{
	int rc;

	/* Signed by libcurl; no federation headers: the bucket is this
	 * hub's own store. */
	if ((*easy = curl_easy_init()) == NULL)
		return -ENOMEM;
	if ((rc = bucket_get_setup(u->ctx, ask->key, *easy, hdrs)) < 0)
		return rc;
	curl_easy_setopt(*easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(*easy, CURLOPT_CONNECTTIMEOUT_MS,
	    (long)(u->spec.connect * 1000));
	curl_easy_setopt(*easy, CURLOPT_TIMEOUT_MS,
	    (long)(u->spec.timeout * 1000));
	return 0;
}

/* The bucket's x-amz-meta-* headers (bucket.h): what an upstream's
 * X-DEBUGINFOD-* say, the record's origin and the bytes' SHA-256; and
 * X-DEBUGINFOD-* themselves, as from any debuginfod server. */
static int
row_header(struct upstream_reply *r, const char *line, size_t len)
{
	static const char	*names[] = { "x-amz-meta-debuginfod-file",
				    "x-amz-meta-debuginfod-archive",
				    "x-amz-meta-origin", "x-amz-meta-sha256" };
	char			**to[] = { &r->xfile, &r->xarchive,
				    &r->origin, &r->sha256 };
	char			*v;
	size_t			 i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if ((v = upstream_header_value(line, len, names[i])) == NULL)
			continue;
		free(*to[i]);
		*to[i] = v;
		return 1;
	}
	return upstream_debuginfod.header(r, line, len);
}

/* What the writer said it wrote: another's bytes under the name, or
 * rot, is not served. */
static int
row_verify(struct upstream *u, const struct upstream_ask *ask,
    const struct upstream_reply *r, struct cache_blob *blob)
{
	unsigned char	d[32];
	char		hex[65];

	if (r->sha256 == NULL)
		return 0;
	if (cache_blob_digest(blob, d) < 0)
		return -EBADMSG;
	hex_encode(d, sizeof(d), hex);
	if (strcmp(hex, r->sha256) != 0) {
		log_limited("bucket: not its sha256", NULL,
		    "bucket: %s %s does not hash to its "
		    "x-amz-meta-sha256: dropped",
		    kind_name(ask->key->kind), ask->idhex);
		breaker_count(u->br, BREAKER_WRONG_ID);
		return -EBADMSG;
	}
	return 0;
}

/* The upstream another replica fetched it from, which it recorded. */
static const char *
row_origin(const struct upstream *u, const struct upstream_reply *r)
{
	return r->origin != NULL ? r->origin : u->spec.name;
}

static void
row_write_back(struct upstream *u, const struct cache_key *key,
    int repair)
{
	bucket_writeback(u->ctx, key, repair);
}

static uint64_t
row_mark(struct upstream *u)
{
	return bucket_events_mark(u->ctx);
}

static int
row_changed(struct upstream *u, const struct cache_key *key,
    uint64_t mark)
{
	return bucket_changed_since(u->ctx, key, mark);
}

const struct upstream_kind upstream_bucket = {
	.name = "bucket",
	.tier = 0,
	.init = row_init,
	.holds = row_holds,
	.setup = row_setup,
	.header = row_header,
	.verify = row_verify,
	.origin = row_origin,
	.write_back = row_write_back,
	.mark = row_mark,
	.changed = row_changed,
};
