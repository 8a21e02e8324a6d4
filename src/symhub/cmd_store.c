/*
 * cmd_store: `symhub store rebuild DIR` and `symhub store verify DIR`.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "cache/cache.h"
#include "cli.h"
#include "cmd_store.h"

#define VERIFY_STEP	((uint64_t)64 << 20)	/* bytes a cache_verify() */

static int
usage(void)
{
	fprintf(stderr, "usage: symhub store rebuild DIR\n"
	    "       symhub store verify DIR\n");
	return 2;
}

/* Seconds on the monotonic clock, for the times reported. */
static double
now_s(void)
{
	return (double)clock_us() / 1e6;
}

static int
rebuild(const char *dir)
{
	struct cache_rebuild_report	rep;
	double				t0 = now_s();
	int				rc;

	rc = cache_rebuild(dir, &rep);
	if (rc == -EBUSY) {
		fprintf(stderr, "symhub store rebuild: store %s is in use by "
		    "another process (stop symhubd first)\n", dir);
		return 1;
	}
	if (rc < 0) {
		cli_store_error("symhub store rebuild", dir, rc,
		    "index/data.mdb nor catalog/");
		return 1;
	}
	printf("rebuilt %s in %.2f s: %" PRIu64 " records, %" PRIu64
	    " FileIDs\n", dir, now_s() - t0, rep.records, rep.fileids);
	printf("entries without an intact blob: %" PRIu64 "\n", rep.missing);
	printf("unreadable catalog entries: %" PRIu64 "\n", rep.bad_entries);
	printf("blobs taken back from quarantine/: %" PRIu64 "\n",
	    rep.restored);
	printf("unknown blobs moved to quarantine/: %" PRIu64 "\n",
	    rep.quarantined);
	if (rep.moved[0] != '\0')
		printf("old index kept as %s/%s\n", dir, rep.moved);
	return 0;
}

static int
verify(const char *dir)
{
	struct cache	*c = NULL;
	unsigned char	 cursor[32];
	uint64_t	 failed = 0, read = 0;
	double		 t0 = now_s();
	int		 rc;

	/* A scheduled verify of a mistyped path must fail, not make an
	 * empty store there and find it sound. */
	if ((rc = cache_present(dir)) < 0 ||
	    (rc = cache_open(dir, NULL, &c)) < 0) {
		cli_store_error("symhub store verify", dir, rc,
		    "index/data.mdb");
		return 1;
	}
	memset(cursor, 0, sizeof(cursor));
	while ((rc = cache_verify(c, cursor, VERIFY_STEP, &failed)) > 0)
		read += (uint64_t)rc;
	cache_close(c);
	if (rc < 0) {
		fprintf(stderr, "symhub: verifying store %s: %s\n", dir,
		    strerror(-rc));
		return 1;
	}
	printf("verified %" PRIu64 " blobs in %.2f s: %" PRIu64 " failed%s\n",
	    read, now_s() - t0, failed, failed ? " (moved to quarantine/, "
	    "their entries dropped)" : "");
	return failed ? 1 : 0;
}

int
cmd_store(int argc, char **argv)
{
	if (argc != 3)
		return usage();
	if (strcmp(argv[1], "rebuild") == 0)
		return rebuild(argv[2]);
	if (strcmp(argv[1], "verify") == 0)
		return verify(argv[2]);
	return usage();
}
