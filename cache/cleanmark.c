/*
 * cleanmark: the identities a clean close leaves in index/clean.  See
 * cleanmark.h.
 *
 * The file is text, one line per file or directory:
 *
 *	symhub-clean 1
 *	data.mdb DEV INO SIZE MTIME_NS CTIME_NS
 *	blobs DEV INO SIZE MTIME_NS CTIME_NS
 *	blobs/00 DEV INO SIZE MTIME_NS CTIME_NS
 *	...
 *
 * (data.mdb is index/data.mdb; the other names are under the store.)  It
 * is valid when it is, byte for byte, what would be written now: a torn
 * or truncated mark differs like a changed file does (and the mark is
 * renamed into place whole anyway), so it needs no checksum.
 *
 * A file changed in the same clock tick as the mark was taken would keep
 * its times on a file system whose timestamps are coarse (Linux before
 * 6.13 stamps to the jiffy): the mark is written only once the clock has
 * passed every time it records, so any change after it stamps a later
 * time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <dirent.h>
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

#include "base/buf.h"
#include "base/fs.h"
#include "cache/cleanmark.h"

#define MARK_MAGIC	"symhub-clean 1\n"
#define MARK_MAX	(64 * 1024)	/* 258 lines of at most ~120 bytes */

/* The path of name: data.mdb is the index's, the rest the store's. */
static int
mark_path(const char *dir, const char *name, char out[PATH_MAX])
{
	int	n;

	n = snprintf(out, PATH_MAX, "%s/%s%s", dir,
	    strcmp(name, "data.mdb") == 0 ? "index/" : "", name);
	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

static int64_t
ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec;
}

/* Append name's identity line to b; *latest: the latest time seen. */
static int
ident_line(struct buf *b, const char *dir, const char *name,
    int64_t *latest)
{
	char		path[PATH_MAX], line[PATH_MAX + 128];
	struct stat	st;
	int		n, rc;

	if ((rc = mark_path(dir, name, path)) < 0)
		return rc;
	if (lstat(path, &st) != 0)
		return -errno;
	n = snprintf(line, sizeof(line), "%s %" PRIu64 " %" PRIu64 " %" PRIu64
	    " %" PRId64 " %" PRId64 "\n", name, (uint64_t)st.st_dev,
	    (uint64_t)st.st_ino, (uint64_t)st.st_size, ns(&st.st_mtim),
	    ns(&st.st_ctim));
	if (ns(&st.st_mtim) > *latest)
		*latest = ns(&st.st_mtim);
	if (ns(&st.st_ctim) > *latest)
		*latest = ns(&st.st_ctim);
	if (n < 0 || n >= (int)sizeof(line))
		return -ENAMETOOLONG;
	return buf_add(b, line, (size_t)n);
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The subdirectories of blobs/, sorted: *names (caller frees each and
 * the array), *n. */
static int
blob_dirs(const char *dir, char ***names, size_t *n)
{
	char		 path[PATH_MAX];
	DIR		*d;
	struct dirent	*e;
	size_t		 cap = 0;
	int		 rc = 0;

	*names = NULL;
	*n = 0;
	if (snprintf(path, sizeof(path), "%s/blobs", dir) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if ((d = opendir(path)) == NULL)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || (e->d_type != DT_DIR &&
		    e->d_type != DT_UNKNOWN))
			continue;
		if (array_grow(names, &cap, *n + 1, sizeof(**names)) != 0 ||
		    ((*names)[*n] = malloc(strlen(e->d_name) + 7)) == NULL) {
			rc = -ENOMEM;
			break;
		}
		snprintf((*names)[(*n)++], strlen(e->d_name) + 7, "blobs/%s",
		    e->d_name);
	}
	closedir(d);
	if (rc == 0 && *n > 1)
		qsort(*names, *n, sizeof(**names), name_cmp);
	return rc;
}

/* The mark's text for the store as it is now; *latest: the latest
 * time in it. */
static int
mark_text(const char *dir, struct buf *b, int64_t *latest)
{
	char	**names = NULL;
	size_t	  n = 0, i;
	int	  rc;

	*latest = 0;
	if ((rc = buf_add(b, MARK_MAGIC, strlen(MARK_MAGIC))) < 0 ||
	    (rc = ident_line(b, dir, "data.mdb", latest)) < 0 ||
	    (rc = ident_line(b, dir, "blobs", latest)) < 0 ||
	    (rc = blob_dirs(dir, &names, &n)) < 0)
		goto out;
	for (i = 0; i < n && rc == 0; i++)
		rc = ident_line(b, dir, names[i], latest);
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

int
cleanmark_write(const char *dir)
{
	struct buf	 b = { 0 };
	struct timespec	 now;
	char		 tmp[PATH_MAX], path[PATH_MAX], idx[PATH_MAX];
	int64_t		 latest;
	int		 fd = -1, rc, waits;

	if (snprintf(idx, sizeof(idx), "%s/index", dir) >= (int)sizeof(idx) ||
	    snprintf(path, sizeof(path), "%s/clean", idx) >=
	    (int)sizeof(path) ||
	    snprintf(tmp, sizeof(tmp), "%s/clean.tmp", idx) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	if ((rc = mark_text(dir, &b, &latest)) < 0)
		goto out;
	/* Past the tick of every time recorded (the file systems' clock is
	 * the coarse one); a few milliseconds at most, then no mark. */
	for (waits = 0; ; waits++) {
		clock_gettime(CLOCK_REALTIME_COARSE, &now);
		if (ns(&now) > latest)
			break;
		if (waits >= 100) {
			rc = -EAGAIN;
			goto out;
		}
		usleep(1000);
	}
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0644)) < 0) {
		rc = -errno;
		goto out;
	}
	if ((rc = fs_write_all(fd, b.p, b.len)) < 0)
		goto out;
	if (fsync(fd) != 0 || rename(tmp, path) != 0) {
		rc = -errno;
		goto out;
	}
	rc = fs_fsync_dir(idx);
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		unlink(tmp);
	buf_free(&b);
	return rc;
}

/* Read index/clean whole into b.  @return 0, -ENOENT, -errno. */
static int
mark_read(const char *dir, struct buf *b)
{
	char	path[PATH_MAX], chunk[4096];
	ssize_t	n;
	int	fd, rc = 0;

	if (snprintf(path, sizeof(path), "%s/index/clean", dir) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	while ((n = read(fd, chunk, sizeof(chunk))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		if (b->len + (size_t)n > MARK_MAX) {
			rc = -EFBIG;
			break;
		}
		if ((rc = buf_add(b, chunk, (size_t)n)) < 0)
			break;
	}
	close(fd);
	return rc;
}

int
cleanmark_valid(const char *dir)
{
	struct buf	 was = { 0 }, now = { 0 };
	int64_t		 latest;
	int		 rc;

	if ((rc = mark_read(dir, &was)) < 0) {
		buf_free(&was);
		return rc == -ENOENT ? 0 : rc;
	}
	/* The mark is what the store would write now, byte for byte: the
	 * same files, the same identities.  A file gone (ENOENT) is a
	 * difference, not an error. */
	rc = mark_text(dir, &now, &latest);
	if (rc == -ENOENT)
		rc = 0;
	else if (rc == 0)
		rc = was.len == now.len &&
		    memcmp(was.p, now.p, was.len) == 0;
	buf_free(&was);
	buf_free(&now);
	return rc;
}

int
cleanmark_remove(const char *dir)
{
	char	path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/index/clean", dir) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	if (unlink(path) != 0)
		return errno == ENOENT ? 0 : -errno;
	path[strlen(path) - strlen("/clean")] = '\0';
	return fs_fsync_dir(path);
}
