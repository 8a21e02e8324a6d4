/*
 * store_bench: the store index at scale, for bench_store.sh.
 *
 *   store_bench fill DIR N     write N synthetic blob records straight
 *                              into a new store's index, then the clean
 *                              mark (white box: no blob files, no catalog)
 *   store_bench measure DIR N  open (warm and with data.mdb dropped from
 *                              the page cache), lookups, accesses flushed,
 *                              an eviction of EVICT records; one line of
 *                              "name value" pairs
 *
 * The records are debuginfo of 20-byte ids 0..N-1, each its own blob of
 * SIZE bytes (the blob table says so; no file exists, which an eviction
 * does not mind), accessed at times in id order: record i at T0 + i.
 * Filling through the API would write N files; ten million of them is
 * not a benchmark of the index.  Such a store must not meet the open
 * check, which would drop every record (their blobs are absent): the
 * fill leaves the clean mark a clean close leaves, and every measuring
 * open is one that trusts it, as an open after a clean stop is.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <lmdb.h>

#include "cache/cache.h"
#include "cache/cleanmark.h"
#include "cache/record.h"

#define SIZE	4096		/* bytes of each (absent) blob */
#define T0	1700000000	/* the first record's access time */
#define BATCH	500000		/* records per fill transaction */
#define LOOKUPS	200000
#define TOUCHES	10000
#define EVICT	10000

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* len bytes of pad, the first 8 the big-endian i: ids and digests that
 * ascend with i. */
static void
counted(uint64_t i, unsigned char *out, size_t len, unsigned char pad)
{
	int	b;

	memset(out, pad, len);
	for (b = 0; b < 8; b++)
		out[b] = (unsigned char)(i >> (56 - 8 * b));
}

static void
id_of(uint64_t i, unsigned char id[20])
{
	counted(i, id, 20, 0x5a);
}

static void
die(const char *what, int rc)
{
	fprintf(stderr, "store_bench: %s: %s\n", what,
	    rc > 0 ? mdb_strerror(rc) : strerror(-rc));
	exit(1);
}

/* The tables as cache/ keeps them (cache_int.h, core.c: cache_lru_key()):
 * records, blobs {refs, size}, lru (atime big-endian, sign flipped |
 * key), meta "bytes", "catalog", "lru".  Every key is written in order,
 * with MDB_APPEND. */
static void
fill(const char *dir, uint64_t n)
{
	static const char	 mbytes[] = "bytes", mcat[] = "catalog",
				 mlru[] = "lru";
	struct cache		*c;
	struct cache_record	 r;
	struct cache_key	 key;
	MDB_env			*env;
	MDB_txn			*t;
	MDB_dbi			 records, blobs, lru, meta;
	MDB_val			 k, v;
	unsigned char		 id[20], kb[RECORD_KEY_MAX], lb[8 + RECORD_KEY_MAX];
	unsigned char		*val;
	char			 path[PATH_MAX];
	uint64_t		 i, blob[2], bytes, u;
	size_t			 vlen;
	int			 kl, rc, b;

	/* A store with its directories and tables, empty. */
	if ((rc = cache_open(dir, NULL, &c)) < 0)
		die("cache_open", rc);
	cache_close(c);
	snprintf(path, sizeof(path), "%s/index", dir);
	if ((rc = mdb_env_create(&env)) != 0)
		die("mdb_env_create", rc);
	mdb_env_set_maxdbs(env, 8);
	mdb_env_set_mapsize(env, (size_t)(n / 1000 + 64) << 20);
	if ((rc = mdb_env_open(env, path, MDB_NOSYNC, 0644)) != 0)
		die("mdb_env_open", rc);
	memset(&r, 0, sizeof(r));
	r.size = SIZE;
	r.origin = "https://debuginfod.example.org";
	r.last_modified = T0;
	r.stored = T0;
	key.kind = CACHE_DEBUGINFO;
	key.id = id;
	key.idlen = sizeof(id);
	key.extra = NULL;
	for (i = 0; i < n; ) {
		if ((rc = mdb_txn_begin(env, NULL, 0, &t)) != 0 ||
		    (rc = mdb_dbi_open(t, "records", 0, &records)) != 0 ||
		    (rc = mdb_dbi_open(t, "blobs", 0, &blobs)) != 0 ||
		    (rc = mdb_dbi_open(t, "lru", 0, &lru)) != 0 ||
		    (rc = mdb_dbi_open(t, "meta", 0, &meta)) != 0)
			die("begin", rc);
		do {
			id_of(i, id);
			counted(i, r.digest, 32, 0xd1);
			r.atime = T0 + (int64_t)i;
			if ((kl = record_key(&key, kb)) < 0 ||
			    (rc = record_encode(&r, &val, &vlen)) < 0)
				die("encode", kl < 0 ? kl : rc);
			k.mv_size = (size_t)kl;
			k.mv_data = kb;
			v.mv_size = vlen;
			v.mv_data = val;
			rc = mdb_put(t, records, &k, &v, MDB_APPEND);
			free(val);
			if (rc != 0)
				die("records", rc);
			u = (uint64_t)r.atime ^ (1ull << 63);
			for (b = 0; b < 8; b++)
				lb[b] = (unsigned char)(u >> (56 - 8 * b));
			memcpy(lb + 8, kb, (size_t)kl);
			k.mv_size = 8 + (size_t)kl;
			k.mv_data = lb;
			v.mv_size = 0;
			v.mv_data = NULL;
			if ((rc = mdb_put(t, lru, &k, &v, MDB_APPEND)) != 0)
				die("lru", rc);
			blob[0] = 1;
			blob[1] = SIZE;
			k.mv_size = 32;
			k.mv_data = r.digest;
			v.mv_size = sizeof(blob);
			v.mv_data = blob;
			if ((rc = mdb_put(t, blobs, &k, &v, MDB_APPEND)) != 0)
				die("blobs", rc);
		} while (++i < n && i % BATCH != 0);
		bytes = i * SIZE;
		k.mv_size = sizeof(mbytes);
		k.mv_data = (void *)mbytes;
		v.mv_size = sizeof(bytes);
		v.mv_data = &bytes;
		if ((rc = mdb_put(t, meta, &k, &v, 0)) != 0)
			die("meta", rc);
		v.mv_size = 1;
		v.mv_data = "1";
		k.mv_size = sizeof(mcat);
		k.mv_data = (void *)mcat;
		if ((rc = mdb_put(t, meta, &k, &v, 0)) != 0)
			die("meta", rc);
		k.mv_size = sizeof(mlru);
		k.mv_data = (void *)mlru;
		if ((rc = mdb_put(t, meta, &k, &v, 0)) != 0 ||
		    (rc = mdb_txn_commit(t)) != 0)
			die("commit", rc);
	}
	if ((rc = mdb_env_sync(env, 1)) != 0)
		die("sync", rc);
	mdb_env_close(env);
	if ((rc = cleanmark_write(dir)) < 0)
		die("cleanmark_write", rc);
}

/* Drop data.mdb's pages from the page cache (a cold open). */
static void
drop_pages(const char *dir)
{
	char	path[PATH_MAX];
	int	fd;

	snprintf(path, sizeof(path), "%s/index/data.mdb", dir);
	if ((fd = open(path, O_RDONLY)) >= 0) {
		(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
}

static double
timed_open(const char *dir, const struct cache_options *opt,
    struct cache **c)
{
	struct cache_stats	st;
	double			t0 = now_s(), dt;
	int			rc;

	if ((rc = cache_open(dir, opt, c)) < 0)
		die("cache_open", rc);
	dt = now_s() - t0;
	if (cache_stats(*c, &st) < 0 || !st.opened_clean) {
		fprintf(stderr, "store_bench: the open did not trust the "
		    "clean mark\n");
		exit(1);
	}
	return dt;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static uint64_t
rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void
measure(const char *dir, uint64_t n)
{
	struct cache_options	 opt;
	struct cache_record	 rec;
	struct cache_stats	 st;
	struct cache_key	 key;
	struct cache		*c;
	unsigned char		 id[20];
	double			*lat, t0, cold, warm, flush, evict;
	uint64_t		 x = 0x9e3779b97f4a7c15ull, i, budget;
	int			 rc, evicted;

	if ((lat = malloc(LOOKUPS * sizeof(*lat))) == NULL)
		die("malloc", -ENOMEM);
	key.kind = CACHE_DEBUGINFO;
	key.id = id;
	key.idlen = sizeof(id);
	key.extra = NULL;

	/* Opens: cold (data.mdb out of the page cache), then warm. */
	drop_pages(dir);
	cold = timed_open(dir, NULL, &c);
	cache_close(c);
	warm = timed_open(dir, NULL, &c);

	/* Lookups of random ids, each timed, after a warm-up pass that
	 * brings the index's pages in (as a serving hub has them). */
	for (i = 0; i < LOOKUPS; i++) {
		id_of(rnd(&x) % n, id);
		if (cache_get(c, &key, T0, &rec) == 0)
			cache_record_release(&rec);
	}
	for (i = 0; i < LOOKUPS; i++) {
		id_of(rnd(&x) % n, id);
		t0 = now_s();
		rc = cache_get(c, &key, T0, &rec);
		lat[i] = now_s() - t0;
		if (rc != 0)
			die("cache_get", rc);
		cache_record_release(&rec);
	}
	qsort(lat, LOOKUPS, sizeof(*lat), cmp_double);

	/* Accesses: TOUCHES random records served now, written by a
	 * flush (their lru entries move to the young end). */
	for (i = 0; i < TOUCHES; i++) {
		id_of(rnd(&x) % n, id);
		if (cache_get(c, &key, T0, &rec) == 0) {
			cache_touch(c, &key, &rec, T0 + (int64_t)n + 3600);
			cache_record_release(&rec);
		}
	}
	t0 = now_s();
	if ((rc = cache_flush(c, T0 + (int64_t)n + 3600)) < 0)
		die("cache_flush", rc);
	flush = now_s() - t0;
	if (cache_stats(c, &st) < 0)
		die("cache_stats", -EIO);
	cache_close(c);

	/* An eviction of EVICT records: a budget that many blobs short. */
	budget = st.bytes - (uint64_t)EVICT * SIZE;
	memset(&opt, 0, sizeof(opt));
	opt.budget = budget;
	(void)timed_open(dir, &opt, &c);
	t0 = now_s();
	evicted = cache_flush(c, T0 + (int64_t)n + 3600);
	evict = now_s() - t0;
	if (evicted < 0)
		die("cache_flush", evicted);
	cache_close(c);

	printf("records %" PRIu64 " open_cold_ms %.2f open_warm_ms %.2f "
	    "lookup_p50_us %.2f lookup_p99_us %.2f lookup_p999_us %.2f "
	    "flush_touches %d flush_ms %.1f evicted %d evict_ms %.1f\n", n,
	    cold * 1e3, warm * 1e3, lat[LOOKUPS / 2] * 1e6,
	    lat[LOOKUPS * 99 / 100] * 1e6, lat[LOOKUPS * 999 / 1000] * 1e6,
	    TOUCHES, flush * 1e3, evicted, evict * 1e3);
	free(lat);
}

int
main(int argc, char **argv)
{
	uint64_t	n;

	if (argc != 4 || (n = strtoull(argv[3], NULL, 10)) == 0 ||
	    (strcmp(argv[1], "fill") != 0 && strcmp(argv[1], "measure") != 0)) {
		fprintf(stderr, "usage: store_bench fill|measure DIR N\n");
		return 2;
	}
	if (strcmp(argv[1], "fill") == 0)
		fill(argv[2], n);
	else
		measure(argv[2], n);
	return 0;
}
