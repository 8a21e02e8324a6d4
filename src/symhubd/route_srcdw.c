/*
 * route_srcdw: a source the store does not hold under the path asked,
 * from the debuginfo itself (derive_source()): the text its line table
 * embeds (clang -gembed-source), or the file it names by a longer path
 * (a relative request: "libio/ioputs.c"), as the store holds that.
 * Nothing is read that the store did not index: no path from the DWARF
 * reaches the file system.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundle.h"
#include "derive.h"
#include "records.h"
#include "route.h"

/* The store's file under the path the DWARF names (a source root's, an
 * upload's, one fetched before). */
static int
serve_named(struct http *h, struct req *r, const struct cache_key *key,
    const char *named, enum MHD_Result *ret)
{
	struct cache_record	rec;
	struct cache_key	nk = *key;
	int			fd, rc;

	if (strcmp(named, key->extra) == 0)
		return 0;	/* looked up already */
	nk.extra = named;
	/* In the store, or in the bundle uploaded with the build. */
	rc = records_open(h->c, h->s, &nk, &rec, &fd);
	if (rc == -ENOENT && bundle_expand(h->c, nk.id, nk.idlen, named) == 0)
		rc = records_open(h->c, h->s, &nk, &rec, &fd);
	if (rc < 0)
		return 0;
	*ret = reply_fd(h, r, &nk, &rec, fd);
	cache_record_release(&rec);
	return 1;
}

int
route_source_dwarf(struct http *h, struct req *r, const struct cache_key *key,
    enum MHD_Result *ret)
{
	struct MHD_Response	*resp;
	struct cache_record	 rec, parent;
	struct buf		 m = { 0 };
	char			*named = NULL;
	int			 rc, done = 1;

	if (h->dv == NULL)
		return 0;
	rc = derive_source(h->dv, key, &m, &rec, &parent, &named);
	switch (rc) {
	case 0:
		if (reply_refused(r, m.len, ret))
			break;
		if ((resp = reply_buffer(m.p, m.len, NULL)) != NULL)
			reply_artifact_headers(resp, &rec);
		m.p = NULL;	/* now the response's */
		*ret = reply_response(r, REPLY_ARTIFACT, resp, m.len,
		    "embedded");
		break;
	case -ENODATA:
		done = serve_named(h, r, key, named, ret);
		break;
	case -ENOTUNIQ:
		/* A guess could serve the wrong file: the client asks again
		 * with more of the path. */
		*ret = reply_textf(r, REPLY_CONFLICT, "ambiguous",
		    "ambiguous source path: the DWARF names more than one "
		    "file ending in it (one is %s)", named);
		break;
	case -EINVAL:
		/* An upstream may have a copy that reads. */
		if (h->f != NULL) {
			done = 0;
			break;
		}
		*ret = reply_text(r, REPLY_UNPROCESSABLE,
		    "the debuginfo's line tables cannot be read", "corrupt");
		break;
	case -ENOMEM:
		*ret = MHD_NO;
		break;
	default:
		done = 0;
		break;
	}
	if (rc == 0)
		cache_record_release(&parent);
	buf_free(&m);
	free(named);
	return done;
}
