/*
 * test_crash: the store survives a writer killed at a random moment.
 *
 * Each iteration forks a child that opens the store and writes forever:
 * blobs of random sizes (some with repeated contents, for dedup) under
 * random keys of a small fixed universe, replacing and dropping keys,
 * negative entries, accesses and flushes with eviction.  The child reports
 * each completed operation on a pipe; the parent waits until it has
 * reported a random number (1..MAXPUTS) of stored blobs, then a random
 * number (0..MAXSTEPS) of further steps (chunks written, operations done),
 * and SIGKILLs it at once: the kill lands inside a blob's writing, its
 * commit or another operation, whatever the machine's speed.  It then reopens the store (which runs the open check)
 * and verifies what a client would notice: every record
 * served opens and holds exactly its size and digest, tmp/ is empty, and
 * every file under blobs/ is indexed and named by its SHA-256.
 *
 * Usage: test_crash [seed]   (the seed is printed; pass it to replay)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1	/* nftw */
#endif

#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "cache/cache.h"
#include "tap.h"
#include "testlib.h"

#define ITERATIONS	100
#define NIDS		200		/* ids 0..199 ... */
#define NKEYS		(2 * NIDS)	/* ... as debuginfo and executable */
#define MAXBLOB		(256 * 1024)
#define NREPEAT		8		/* contents that recur, for dedup */
#define BUDGET		((uint64_t)6 << 20)
#define NOW		1700000000
#define MAXPUTS		24		/* kill after 1..MAXPUTS stored blobs */
#define MAXSTEPS	48		/* and 0..MAXSTEPS more steps */

struct tkey {
	struct cache_key	k;
	unsigned char		id[20];
};

/* Key i of the universe: 1-byte ids for a third of them, 20-byte else. */
static const struct cache_key *
key_of(struct tkey *t, int i)
{
	int	n = i % NIDS;
	size_t	j;

	memset(t, 0, sizeof(*t));
	t->id[0] = (unsigned char)n;
	for (j = 1; j < sizeof(t->id); j++)
		t->id[j] = (unsigned char)(n * 31 + (int)j);
	t->k.kind = i < NIDS ? CACHE_DEBUGINFO : CACHE_EXECUTABLE;
	t->k.id = t->id;
	t->k.idlen = n % 3 == 0 ? 1 : 20;
	t->k.extra = NULL;
	return &t->k;
}

/* Tell the parent an operation completed ('p'ut, 'd'rop, ...). */
static void
done_op(int fd, char what)
{
	ssize_t n;

	n = write(fd, &what, 1);	/* non-blocking; a full pipe loses it */
	(void)n;
}

/*
 * The writer.  Exits 3 on any unexpected error, so the parent can tell a
 * child that died by itself from one it killed.  Reports each completed
 * operation on progress, so the parent knows the kills hit real work.
 */
static void __attribute__((noreturn))
child(const char *store, uint64_t seed, int progress)
{
	static const int64_t	 ttls[] = { 60, 600 };
	struct cache_options	 opt = { BUDGET, 0, 0, 0 };
	struct cache_record	 meta, rec;
	struct cache_blob	*b;
	struct cache		*c;
	struct tkey		 t;
	unsigned char		*buf;
	uint64_t		 r = seed | 1;
	int64_t			 clock = NOW;
	size_t			 size, off, n;
	int			 op, rc;

	if (fcntl(progress, F_SETFL, O_NONBLOCK) != 0 ||
	    cache_open(store, &opt, &c) != 0 ||
	    (buf = malloc(MAXBLOB)) == NULL)
		_exit(3);
	done_op(progress, 'o');
	memset(&meta, 0, sizeof(meta));
	meta.origin = "crash";
	meta.xfile = "/usr/lib/debug/crash.debug";
	for (;;) {
		clock += 61;
		op = (int)(xorshift(&r) % 100);
		key_of(&t, (int)(xorshift(&r) % NKEYS));
		if (op < 60) {
			if (xorshift(&r) % 4 == 0) {
				n = xorshift(&r) % NREPEAT;
				size = n * (MAXBLOB / NREPEAT) + n;
				fill(buf, size, 1000000 + n);
			} else {
				size = xorshift(&r) % (MAXBLOB + 1);
				fill(buf, size, xorshift(&r));
			}
			if (cache_blob_create(c, &b) != 0)
				_exit(3);
			for (off = 0; off < size; off += n) {
				n = 1 + xorshift(&r) % 65536;
				if (n > size - off)
					n = size - off;
				if (cache_blob_write(b, buf + off, n) != 0)
					_exit(3);
				done_op(progress, 'w');
			}
			meta.atime = clock;
			meta.stored = clock;
			meta.flags = xorshift(&r) % 16 == 0 ? CACHE_F_PINNED : 0;
			if (cache_put_blob(c, b, &t.k, &meta, NULL) != 0)
				_exit(3);
			done_op(progress, 'p');
		} else if (op < 75) {
			rc = cache_drop(c, &t.k);
			if (rc != 0 && rc != -ENOENT)
				_exit(3);
			done_op(progress, 'd');
		} else if (op < 85) {
			rc = cache_put_negative(c, &t.k, clock, ttls, 2);
			if (rc < 0 && rc != -EEXIST)
				_exit(3);
			done_op(progress, 'n');
		} else if (op < 95) {
			rc = cache_get(c, &t.k, clock, &rec);
			if (rc == 0) {
				cache_touch(c, &t.k, &rec, clock);
				cache_record_release(&rec);
			} else if (rc != -ENOENT && rc != -ENODATA) {
				_exit(3);
			}
		} else if (cache_flush(c, clock) < 0) {
			_exit(3);
		} else {
			done_op(progress, 'f');
		}
	}
}

static long
count_dir(const char *path)
{
	DIR		*d;
	struct dirent	*e;
	long		 n = 0;

	if ((d = opendir(path)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/* SHA-256 and length of what fd reads; buf holds MAXBLOB bytes. */
static int
hash_fd(int fd, unsigned char *buf, uint64_t *size, unsigned char d[32])
{
	EVP_MD_CTX	*md;
	ssize_t		 n = 0;
	int		 rc = -EIO;

	*size = 0;
	if ((md = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1)
		goto out;
	while ((n = read(fd, buf, MAXBLOB)) > 0) {
		if (EVP_DigestUpdate(md, buf, (size_t)n) != 1)
			goto out;
		*size += (uint64_t)n;
	}
	if (n == 0 && EVP_DigestFinal_ex(md, d, NULL) == 1)
		rc = 0;
out:
	EVP_MD_CTX_free(md);
	return rc;
}

/*
 * Files under store/blobs/<xx>/; *misnamed counts those whose name is not
 * the SHA-256 of their bytes.
 */
static long
scan_blobs(const char *store, unsigned char *buf, long *misnamed)
{
	char		 top[PATH_MAX], sub[PATH_MAX], file[PATH_MAX];
	char		 want[65], got[65];
	unsigned char	 d[32];
	uint64_t	 size;
	DIR		*td, *sd;
	struct dirent	*e, *f;
	long		 n = 0;
	int		 fd, i;

	*misnamed = 0;
	if (snprintf(top, sizeof(top), "%s/blobs", store) >= (int)sizeof(top) ||
	    (td = opendir(top)) == NULL)
		return -1;
	while ((e = readdir(td)) != NULL) {
		if (e->d_name[0] == '.' || snprintf(sub, sizeof(sub), "%s/%s",
		    top, e->d_name) >= (int)sizeof(sub))
			continue;
		if ((sd = opendir(sub)) == NULL)
			continue;
		while ((f = readdir(sd)) != NULL) {
			if (f->d_name[0] == '.')
				continue;
			n++;
			fd = -1;
			if (snprintf(file, sizeof(file), "%s/%s", sub,
			    f->d_name) >= (int)sizeof(file) ||
			    snprintf(want, sizeof(want), "%s%s", e->d_name,
			    f->d_name) >= (int)sizeof(want) ||
			    (fd = open(file, O_RDONLY)) < 0 ||
			    hash_fd(fd, buf, &size, d) != 0) {
				(*misnamed)++;
			} else {
				for (i = 0; i < 32; i++)
					snprintf(got + 2 * i, 3, "%02x", d[i]);
				if (strcmp(got, want) != 0)
					(*misnamed)++;
			}
			if (fd >= 0)
				close(fd);
		}
		closedir(sd);
	}
	closedir(td);
	return n;
}

/* Reopen after a kill and check everything a client would notice. */
static void
verify(int it, const char *store, unsigned char *buf)
{
	struct cache_options	 opt = { BUDGET, 0, 0, 0 };
	struct cache_record	 rec;
	struct cache_stats	 st;
	struct cache		*c = NULL;
	struct tkey		 t;
	unsigned char		 d[32];
	char			 tmp[PATH_MAX];
	uint64_t		 size;
	long			 files, misnamed, found = 0, bad = 0, other = 0;
	int			 i, rc, fd;

	rc = cache_open(store, &opt, &c);
	ok(rc == 0, "iteration %d: the store opens after the kill (%d)", it,
	    rc);
	if (rc != 0)
		return;
	for (i = 0; i < NKEYS; i++) {
		rc = cache_get(c, key_of(&t, i), NOW, &rec);
		if (rc == -ENOENT || rc == -ENODATA)
			continue;
		if (rc != 0) {
			other++;
			continue;
		}
		found++;
		if (cache_open_data(c, &rec, &fd) != 0) {
			bad++;
		} else {
			if (hash_fd(fd, buf, &size, d) != 0 ||
			    size != rec.size || memcmp(d, rec.digest, 32) != 0 ||
			    rec.origin == NULL || strcmp(rec.origin, "crash") != 0)
				bad++;
			close(fd);
		}
		cache_record_release(&rec);
	}
	ok(bad == 0 && other == 0,
	    "iteration %d: all %ld records open with their size and SHA-256 "
	    "(%ld bad, %ld errors)", it, found, bad, other);

	if (snprintf(tmp, sizeof(tmp), "%s/tmp", store) >= (int)sizeof(tmp))
		tmp[0] = '\0';
	files = scan_blobs(store, buf, &misnamed);
	if (cache_stats(c, &st) != 0)
		memset(&st, 0xff, sizeof(st));
	ok(count_dir(tmp) == 0, "iteration %d: tmp/ is empty", it);
	ok(files >= 0 && (uint64_t)files == st.blobs && misnamed == 0 &&
	    st.records == (uint64_t)found,
	    "iteration %d: %ld blob files, all indexed (%" PRIu64 ") and named "
	    "by their SHA-256 (%ld not); %" PRIu64 " records", it, files,
	    st.blobs, misnamed, st.records);
	/*
	 * cache.h: "a crash at any point leaves at most an unindexed file
	 * that the next cache_open() removes".  So the check must never have
	 * to drop a committed record (stray files it may remove).
	 * ENGINE BUG (reported): put_fn(), drop_fn() and flush_fn() unlink a
	 * blob inside the write transaction, before mdb_txn_commit(); a kill
	 * in between leaves a committed record whose blob is gone, which this
	 * check then drops (check_dropped > 0): a replacing put loses the old
	 * record although its new one was never committed.
	 */
	ok(st.check_dropped == 0,
	    "iteration %d: the crash lost no committed record (check dropped "
	    "%" PRIu64 ", removed %" PRIu64 ")", it, st.check_dropped,
	    st.check_removed);
	cache_close(c);
}

int
main(int argc, char *argv[])
{
	const char	*tmpdir = getenv("TMPDIR");
	char		 dir[PATH_MAX], store[PATH_MAX];
	unsigned char	*buf;
	struct timespec	 ts;
	uint64_t	 seed, r;
	char		*end;
	pid_t		 pid;
	long		 ops = 0, puts = 0, opened = 0, busy = 0, n;
	char		 rb[4096];
	int		 it, status, target, steps, after, killed, pfd[2], i;
	int		 put_this;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1) {
		errno = 0;
		seed = strtoull(argv[1], &end, 0);
		if (errno != 0 || *end != '\0') {
			fprintf(stderr, "usage: test_crash [seed]\n");
			return 2;
		}
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec ^
		    (uint64_t)getpid() << 32;
	}
	printf("# seed %" PRIu64 " (replay with: test_crash %" PRIu64 ")\n",
	    seed, seed);
	r = seed | 1;
	if (tmpdir == NULL || *tmpdir == '\0')
		tmpdir = "/tmp";
	snprintf(dir, sizeof(dir), "%s/symhub-test-crash.XXXXXX", tmpdir);
	if (mkdtemp(dir) == NULL || (buf = malloc(MAXBLOB)) == NULL) {
		perror("setup");
		return 99;
	}
	if (snprintf(store, sizeof(store), "%s/store", dir) >=
	    (int)sizeof(store)) {
		fprintf(stderr, "TMPDIR too long\n");
		return 99;
	}

	for (it = 1; it <= ITERATIONS; it++) {
		target = 1 + (int)(xorshift(&r) % MAXPUTS);
		steps = (int)(xorshift(&r) % (MAXSTEPS + 1));
		fflush(stdout);
		if (pipe(pfd) != 0) {
			perror("pipe");
			return 99;
		}
		/* The child opens the store after the fork; the parent has
		 * closed its handle before it. */
		if ((pid = fork()) < 0) {
			perror("fork");
			return 99;
		}
		if (pid == 0) {
			close(pfd[0]);
			child(store, seed ^ (uint64_t)it * 0x9e3779b97f4a7c15ull,
			    pfd[1]);
		}
		close(pfd[1]);
		/* Wait for the writer's reports, not for the clock: the kill
		 * follows the steps-th report after its target-th stored blob.
		 * A writer that dies by itself ends the wait with EOF. */
		put_this = 0;
		after = 0;
		killed = 0;
		for (;;) {
			n = read(pfd[0], rb, killed ? sizeof(rb) : 1);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			for (i = 0; i < n; i++) {
				after += put_this >= target;
				opened += rb[i] == 'o';
				ops += rb[i] != 'o' && rb[i] != 'w';
				put_this += rb[i] == 'p';
			}
			if (!killed && put_this >= target && after >= steps) {
				kill(pid, SIGKILL);
				killed = 1;
			}
		}
		if (!killed)
			kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		close(pfd[0]);
		puts += put_this;
		busy += put_this >= target;
		ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		    "iteration %d: the writer was killed %d steps after its put "
		    "%d, still running (status %#x, %d puts reported)", it,
		    steps, target, status, put_this);
		verify(it, store, buf);
	}
	/* Kills that land before the first put test nothing: every kill
	 * must hit a writer that had stored what it was asked to. */
	printf("# %ld opens, %ld operations (%ld puts) before the kills\n",
	    opened, ops, puts);
	ok(busy == ITERATIONS,
	    "every kill hit a writer that had stored blobs (%ld of %d)", busy,
	    ITERATIONS);
	free(buf);
	rmtree(dir);
	return done();
}
