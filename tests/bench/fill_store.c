/*
 * fill_store: make a store of N records for bench_recovery.sh: N/2
 * debuginfo and N/2 executables, blobs of SIZE bytes of distinct
 * pseudo-random contents, every tenth pinned as an upload.
 *
 * usage: fill_store DIR N SIZE
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache.h"

int
main(int argc, char **argv)
{
	struct cache_record	 m;
	struct cache_blob	*b;
	struct cache_key	 k;
	struct cache		*c;
	unsigned char		 id[20], *buf;
	uint64_t		 x = 88172645463325252ull;
	long			 n, size, i, j;
	int			 rc;

	if (argc != 4 || (n = strtol(argv[2], NULL, 10)) <= 0 ||
	    (size = strtol(argv[3], NULL, 10)) <= 0 ||
	    (buf = malloc((size_t)size)) == NULL) {
		fprintf(stderr, "usage: fill_store DIR N SIZE\n");
		return 2;
	}
	if ((rc = cache_open(argv[1], NULL, &c)) < 0) {
		fprintf(stderr, "fill_store: %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < size; j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[j] = (unsigned char)x;
		}
		memset(id, 0, sizeof(id));
		memcpy(id, &i, sizeof(i));
		id[19] = 0x5a;
		k.kind = i % 2 ? CACHE_EXECUTABLE : CACHE_DEBUGINFO;
		k.id = id;
		k.idlen = sizeof(id);
		k.extra = NULL;
		memset(&m, 0, sizeof(m));
		m.origin = i % 10 == 0 ? "upload" : "https://debuginfod.example";
		m.flags = i % 10 == 0 ? CACHE_F_PINNED : 0;
		if ((rc = cache_blob_create(c, &b)) < 0 ||
		    (rc = cache_blob_write(b, buf, (size_t)size)) < 0 ||
		    (rc = cache_put_blob(c, b, &k, &m, NULL)) < 0) {
			fprintf(stderr, "fill_store: %s\n", strerror(-rc));
			return 1;
		}
	}
	cache_close(c);
	free(buf);
	return 0;
}
