/*
 * srcbundle: see srcbundle.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "srcbundle.h"

int
srcbundle_name_ok(const char *path)
{
	const char	*p = path, *seg;
	size_t		 n;

	if (p[0] != '/' || p[1] == '\0')
		return 0;
	while (*p == '/') {
		seg = p + 1;
		n = strcspn(seg, "/");
		if (n == 0 || (n == 1 && seg[0] == '.') ||
		    (n == 2 && seg[0] == '.' && seg[1] == '.'))
			return 0;
		p = seg + n;
	}
	return *p == '\0';
}

/* Refuse with a message naming the member. */
static int
refuse(char *why, int rc, const char *what, const char *name)
{
	snprintf(why, SRCBUNDLE_WHY_MAX, "member \"%.160s\": %s", name, what);
	return rc;
}

/* Read the current member's bytes, at most left of them, into *out. */
static int
slurp(struct archive *a, struct archive_entry *e, uint64_t left,
    unsigned char **out, size_t *outlen, char *why)
{
	unsigned char	*buf = NULL, *nb;
	size_t		 len = 0, cap;
	la_ssize_t	 n;
	int		 rc;

	cap = archive_entry_size_is_set(e) ? (size_t)archive_entry_size(e) : 0;
	if (cap > left)
		return refuse(why, -EFBIG, "the bundle unpacks to more bytes "
		    "than allowed",
		    archive_entry_pathname(e));
	cap = cap < 4096 ? 4096 : cap + 1;
	if ((buf = malloc(cap)) == NULL)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			if (cap > SIZE_MAX / 2 ||
			    (nb = realloc(buf, cap * 2)) == NULL) {
				rc = -ENOMEM;
				goto out;
			}
			buf = nb;
			cap *= 2;
		}
		if ((n = archive_read_data(a, buf + len, cap - len)) < 0) {
			snprintf(why, SRCBUNDLE_WHY_MAX, "corrupt bundle: %.200s",
			    archive_error_string(a) ? archive_error_string(a) :
			    "unreadable member");
			rc = -EBADMSG;
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > left) {
			rc = refuse(why, -EFBIG, "the bundle unpacks to more "
			    "bytes than allowed", archive_entry_pathname(e));
			goto out;
		}
	}
	*out = buf;
	*outlen = len;
	return 0;
out:
	free(buf);
	return rc;
}

static int
walk(struct archive *a, const struct srcbundle_limits *lim, srcbundle_fn fn,
    void *ctx, char *why)
{
	struct archive_entry	*e;
	unsigned char		*data;
	const char		*name;
	char			 path[4096];
	uint64_t		 members = 0, left = lim->bytes_max;
	int64_t			 mtime;
	size_t			 len;
	int			 rc, r, type;

	why[0] = '\0';
	for (;;) {
		r = archive_read_next_header(a, &e);
		if (r == ARCHIVE_EOF)
			return 0;
		if (r != ARCHIVE_OK) {
			snprintf(why, SRCBUNDLE_WHY_MAX, "corrupt bundle: %.200s",
			    archive_error_string(a) ? archive_error_string(a) :
			    "not a tar");
			return -EBADMSG;
		}
		if (++members > lim->members_max) {
			snprintf(why, SRCBUNDLE_WHY_MAX, "more than %llu members",
			    (unsigned long long)lim->members_max);
			return -E2BIG;
		}
		if ((name = archive_entry_pathname(e)) == NULL || *name == '\0')
			return refuse(why, -EPERM, "no name", "");
		type = archive_entry_filetype(e);
		if (type == AE_IFDIR)
			continue;
		if (name[0] == '/')
			return refuse(why, -EPERM, "an absolute name", name);
		if (archive_entry_hardlink(e) != NULL)
			return refuse(why, -EPERM, "a hard link", name);
		if (type == AE_IFLNK || archive_entry_symlink(e) != NULL)
			return refuse(why, -EPERM, "a symbolic link", name);
		if (type != AE_IFREG)
			return refuse(why, -EPERM, "not a regular file", name);
		if ((size_t)snprintf(path, sizeof(path), "/%s", name) >=
		    sizeof(path))
			return refuse(why, -EPERM, "name too long", name);
		if (!srcbundle_name_ok(path))
			return refuse(why, -EPERM, "a \"..\", \".\" or empty "
			    "segment", name);
		if ((rc = slurp(a, e, left, &data, &len, why)) < 0)
			return rc;
		left -= len;
		mtime = archive_entry_mtime_is_set(e) ? archive_entry_mtime(e) :
		    0;
		rc = fn(ctx, path, mtime > 0 ? mtime : 0, data, len);
		free(data);
		if (rc != 0)
			return rc;
	}
}

/* A reader of tar alone, through the filters named in srcbundle.h. */
static struct archive *
reader(void)
{
	struct archive *a;

	if ((a = archive_read_new()) == NULL)
		return NULL;
	archive_read_support_format_tar(a);
	archive_read_support_filter_none(a);
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_zstd(a);
	return a;
}

int
srcbundle_read_mem(const void *buf, size_t len,
    const struct srcbundle_limits *lim, srcbundle_fn fn, void *ctx,
    char why[SRCBUNDLE_WHY_MAX])
{
	struct archive	*a;
	int		 rc;

	if ((a = reader()) == NULL)
		return -ENOMEM;
	if (archive_read_open_memory(a, buf, len) != ARCHIVE_OK) {
		snprintf(why, SRCBUNDLE_WHY_MAX, "corrupt bundle: %.200s",
		    archive_error_string(a) ? archive_error_string(a) :
		    "not a tar");
		rc = -EBADMSG;
	} else
		rc = walk(a, lim, fn, ctx, why);
	archive_read_free(a);
	return rc;
}

int
srcbundle_read_fd(int fd, const struct srcbundle_limits *lim,
    srcbundle_fn fn, void *ctx, char why[SRCBUNDLE_WHY_MAX])
{
	struct archive	*a;
	int		 rc;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	if ((a = reader()) == NULL)
		return -ENOMEM;
	if (archive_read_open_fd(a, fd, 65536) != ARCHIVE_OK) {
		snprintf(why, SRCBUNDLE_WHY_MAX, "corrupt bundle: %.200s",
		    archive_error_string(a) ? archive_error_string(a) :
		    "not a tar");
		rc = -EBADMSG;
	} else
		rc = walk(a, lim, fn, ctx, why);
	archive_read_free(a);
	return rc;
}

struct srcbundle_writer {
	struct archive	*a;
	int		(*out)(void *, const void *, size_t);
	void		*ctx;
	int		 err;		/* out's first failure */
};

static la_ssize_t
wcb(struct archive *a, void *arg, const void *buf, size_t len)
{
	struct srcbundle_writer	*w = arg;
	int			 rc;

	(void)a;
	if ((rc = w->out(w->ctx, buf, len)) < 0) {
		w->err = rc;
		return -1;
	}
	return (la_ssize_t)len;
}

int
srcbundle_write_open(int (*out)(void *ctx, const void *buf, size_t len),
    void *ctx, struct srcbundle_writer **wp)
{
	struct srcbundle_writer *w;

	*wp = NULL;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return -ENOMEM;
	w->out = out;
	w->ctx = ctx;
	if ((w->a = archive_write_new()) == NULL) {
		free(w);
		return -ENOMEM;
	}
	/* Restricted pax: plain ustar headers unless a name needs more. */
	if (archive_write_set_format_pax_restricted(w->a) != ARCHIVE_OK ||
	    (archive_write_add_filter_zstd(w->a) != ARCHIVE_OK &&
	    archive_write_add_filter_gzip(w->a) != ARCHIVE_OK) ||
	    archive_write_set_bytes_in_last_block(w->a, 1) != ARCHIVE_OK ||
	    archive_write_open2(w->a, w, NULL, wcb, NULL, NULL) !=
	    ARCHIVE_OK) {
		archive_write_free(w->a);
		free(w);
		return -EIO;
	}
	*wp = w;
	return 0;
}

int
srcbundle_write_add(struct srcbundle_writer *w, const char *path,
    int64_t mtime, const void *data, size_t len)
{
	struct archive_entry	*e;
	int			 rc = 0;

	if (!srcbundle_name_ok(path))
		return -EINVAL;
	if ((e = archive_entry_new()) == NULL)
		return -ENOMEM;
	archive_entry_set_pathname(e, path + 1);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, (la_int64_t)len);
	if (mtime > 0)
		archive_entry_set_mtime(e, (time_t)mtime, 0);
	if (archive_write_header(w->a, e) != ARCHIVE_OK ||
	    (len > 0 && archive_write_data(w->a, data, len) !=
	    (la_ssize_t)len))
		rc = w->err != 0 ? w->err : -EIO;
	archive_entry_free(e);
	return rc;
}

int
srcbundle_write_close(struct srcbundle_writer *w, int abort)
{
	int rc = 0;

	if (w == NULL)
		return 0;
	if (!abort && archive_write_close(w->a) != ARCHIVE_OK)
		rc = w->err != 0 ? w->err : -EIO;
	archive_write_free(w->a);
	free(w);
	return rc;
}
