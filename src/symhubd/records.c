/*
 * records: see records.h.
 */
#include <errno.h>
#include <string.h>

#include "base/clock.h"
#include "common/auth.h"
#include "bundle.h"
#include "log.h"
#include "records.h"

int
records_have(struct cache *c, enum cache_kind kind, const unsigned char *id,
    size_t idlen)
{
	struct cache_record	rec;
	struct cache_key	k = { kind, id, idlen, NULL };

	if (cache_get(c, &k, clock_wall_s(), &rec) != 0)
		return 0;
	cache_record_release(&rec);
	return 1;
}

int
records_broken(struct cache *c, const struct cache_key *key,
    const struct cache_record *rec, int rc)
{
	if (rc != -ENOENT && rc != -EIO && rc != -ESTALE)
		return rc;
	log_warnx("dropping %s record: %s", rec->path != NULL ? rec->path :
	    "blob", rc == -ESTALE ? "the file changed or vanished" :
	    strerror(-rc));
	cache_drop(c, key);
	return -ENOENT;
}

int
records_open_got(struct cache *c, struct scan *s, const struct cache_key *key,
    struct cache_record *rec, int *fd)
{
	int rc, tries;

	for (tries = 0; ; tries++) {
		rc = !(rec->flags & CACHE_F_MEMBER) ?
		    cache_open_data(c, rec, fd) : s != NULL ?
		    scan_member_open(s, key, rec, fd) : -ENOENT;
		if (rc == 0 && key->kind == CACHE_SOURCE &&
		    rec->origin != NULL && strcmp(rec->origin, "bundle") == 0)
			rec->last_modified = bundle_served_time(c, key, rec);
		if (rc == 0)
			return 0;
		/* A scanned file that changed: read it again, once. */
		if (rc == -ESTALE && s != NULL && tries == 0 &&
		    scan_refresh(s, key, rec) == 0) {
			cache_record_release(rec);
			if ((rc = cache_get(c, key, clock_wall_s(), rec)) < 0)
				return rc;
			continue;
		}
		rc = records_broken(c, key, rec, rc);
		cache_record_release(rec);
		return rc;
	}
}

int
records_open(struct cache *c, struct scan *s, const struct cache_key *key,
    struct cache_record *rec, int *fd)
{
	int rc;

	if ((rc = cache_get(c, key, clock_wall_s(), rec)) < 0)
		return rc;
	return records_open_got(c, s, key, rec, fd);
}

int
records_may_read_record(const struct cache_record *rec, const char *reader)
{
	const char	*owner;
	size_t		 n;

	if (!(rec->flags & CACHE_F_PRIVATE))
		return 1;
	/* "upload:TENANT/NAME": what upload_finish() recorded. */
	if (reader == NULL || *reader == '\0' || rec->origin == NULL ||
	    strncmp(rec->origin, "upload:", 7) != 0)
		return 0;
	owner = rec->origin + 7;
	n = auth_tenant_len(owner);
	return n == auth_tenant_len(reader) && strncmp(owner, reader, n) == 0;
}

int
records_may_read(struct cache *c, const unsigned char *id, size_t idlen,
    const char *reader)
{
	static const enum cache_kind kinds[] = { CACHE_DEBUGINFO,
	    CACHE_EXECUTABLE };
	struct cache_record	 rec;
	struct cache_key	 k;
	size_t			 i;
	int			 ok = 1;

	for (i = 0; ok && i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		k.kind = kinds[i];
		k.id = id;
		k.idlen = idlen;
		k.extra = NULL;
		if (cache_get(c, &k, clock_wall_s(), &rec) != 0)
			continue;
		ok = records_may_read_record(&rec, reader);
		cache_record_release(&rec);
	}
	return ok;
}
