/*
 * Unit tests of records_open(): the Last-Modified a source record made
 * from a bundle is served with.  A store written before bundle members
 * kept their tar's mtime holds such records with the bundle's upload
 * time; they must be served no later than the build-id's debuginfo and
 * executable, as a record made today would be (gdb warns "Source file
 * is more recent than executable" otherwise).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/cache.h"
#include "symhubd/records.h"
#include "tap.h"
#include "testlib.h"

static const unsigned char ID[20] = { 0xb0, 0x11, 0xde, 0xad };
static const unsigned char ID2[20] = { 0xb0, 0x11, 0xde, 0xae };

/* Store len bytes of "x" under k, with last_modified lm and origin. */
static int
put(struct cache *c, const struct cache_key *k, int64_t lm,
    const char *origin)
{
	struct cache_record	 r;
	struct cache_blob	*b;
	int			 rc;

	memset(&r, 0, sizeof(r));
	r.origin = origin;
	r.xfile = k->extra;
	r.last_modified = lm;
	r.stored = 1700000000;
	if ((rc = cache_blob_create(c, &b)) < 0)
		return rc;
	if ((rc = cache_blob_write(b, "int x;\n", 7)) < 0) {
		cache_blob_abort(b);
		return rc;
	}
	return cache_put_blob(c, b, k, &r, NULL);
}

/* The Last-Modified records_open() gives k; -1 when it fails. */
static int64_t
served(struct cache *c, const struct cache_key *k)
{
	struct cache_record	rec;
	int64_t			t;
	int			fd;

	if (records_open(c, NULL, k, &rec, &fd) != 0)
		return -1;
	t = rec.last_modified;
	close(fd);
	cache_record_release(&rec);
	return t;
}

int
main(void)
{
	struct cache_key	 dbg = { CACHE_DEBUGINFO, ID, sizeof(ID), NULL };
	struct cache_key	 exe = { CACHE_EXECUTABLE, ID, sizeof(ID), NULL };
	struct cache_key	 old = { CACHE_SOURCE, ID, sizeof(ID), "/src/a.c" };
	struct cache_key	 early = { CACHE_SOURCE, ID, sizeof(ID),
				    "/src/b.c" };
	struct cache_key	 up = { CACHE_SOURCE, ID, sizeof(ID), "/src/c.c" };
	struct cache_key	 alone = { CACHE_SOURCE, ID2, sizeof(ID2),
				    "/src/a.c" };
	struct cache		*c = NULL;
	char			*dir = scratch("records");
	int64_t			 t;
	int			 rc;

	if (cache_open(dir, NULL, &c) != 0) {
		printf("Bail out! no scratch store\n");
		return 99;
	}
	/* The build: its debuginfo of 2021, its executable of 2022; a
	 * bundle uploaded in 2024 by the code of before. */
	rc = put(c, &dbg, 1610000000, "upload:ci");
	rc |= put(c, &exe, 1650000000, "upload:ci");
	rc |= put(c, &old, 1710000000, "bundle");
	rc |= put(c, &early, 1600000000, "bundle");
	rc |= put(c, &up, 1710000000, "upload:ci");
	rc |= put(c, &alone, 1710000000, "bundle");
	ok(rc == 0, "a store as the hub of before left it");

	t = served(c, &old);
	ok(t == 1610000000, "a bundle's member of before, dated with the "
	    "upload: served with the debuginfo's time (%lld)", (long long)t);
	t = served(c, &early);
	ok(t == 1600000000, "a member older than the build keeps its own "
	    "time (%lld)", (long long)t);
	t = served(c, &up);
	ok(t == 1710000000, "a source uploaded alone is left as it is "
	    "(%lld)", (long long)t);
	t = served(c, &alone);
	ok(t == 1710000000, "with no debuginfo nor executable: its own "
	    "(%lld)", (long long)t);
	/* The executable earlier than the debuginfo: the earlier wins. */
	rc = put(c, &exe, 1590000000, "upload:ci");
	t = served(c, &old);
	ok(rc == 0 && t == 1590000000, "... the earlier of the two "
	    "(%lld)", (long long)t);

	cache_close(c);
	rmtree(dir);
	free(dir);
	return done();
}
