/*
 * pkgarchive: see pkgarchive.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "pkgarchive.h"
#include "webapi.h"
#include "xzseek.h"

#define SLACK	(1u << 20)	/* unpacked bytes always allowed */
/* Bytes of headers before a member's data a note may span (tar's pax and
 * long-name headers). */
#define GAP_MAX	65536
#define SEEK_LEN	27	/* 'X', version, format, end, hdr, data */

/*
 * The unpacked bytes reach the format readers through unpacked_read(),
 * which stops at the bound: libarchive's readers trust a size a header
 * gives (cpio's name size, up to 4 GiB) and buffer that much of the
 * stream before the header is ours to check, so a bound checked between
 * headers alone would let a few KiB of zstd fill gigabytes.
 */
struct walk {
	const struct pkga_limits *lim;
	uint64_t	 packed;	/* the archive's size */
	struct archive	*outer;		/* a .deb's ar, or NULL */
	char		 ibuf[65536];	/* the unpacker's input from outer */
	struct archive	*unpack;	/* the filters alone (format raw) */
	char		 ubuf[65536];	/* the format reader's input */
	uint64_t	 fed;		/* bytes given it */
	char		 uwhy[PKGA_WHY_MAX];	/* the unpacker's error */
	int		 nf;		/* the filter chain (seekable()) */
	int		 fcode[4];
	char		*why;
	int		 bomb;		/* the bound was passed */
	/* Seeking: the archive, where its xz stream ends (and, in a .deb,
	 * starts), and whether its members can be sought to (-1: not
	 * known yet; then the format, 't' tar or 'c' cpio). */
	int		 fd;
	int		 cmd;		/* PKGA_CMD: a pipe, no seeking */
	uint64_t	 xzstart, xzend;
	uint64_t	 xzsize;	/* bytes the stream unpacks to */
	int		 seekable;
	unsigned char	 fmt;
};

struct pkga_member {
	struct walk	*w;
	struct archive	*a;
	uint64_t	 left;		/* bytes the header promised */
	/* In the uncompressed stream: where its first header and its data
	 * start; a sparse member's data is not in one piece. */
	uint64_t	 hdr, data;
	int		 sparse;
};

static void
say(char *why, const char *msg)
{
	snprintf(why, PKGA_WHY_MAX, "%s", msg != NULL ? msg : "?");
}

/* Has a unpacked more than the bound allows? */
static int
over(struct walk *w, struct archive *a)
{
	la_int64_t n = archive_filter_bytes(a, 0);

	if (w->lim->ratio_max == 0 || n < 0 ||
	    (uint64_t)n <= w->lim->ratio_max * w->packed + SLACK)
		return 0;
	w->bomb = 1;
	return 1;
}

/* Would the member e's header promises take a past the bound?  Known
 * before a byte of it is unpacked (skipping it would unpack it all). */
static int
promised_over(struct walk *w, struct archive *a, struct archive_entry *e)
{
	la_int64_t	n = archive_filter_bytes(a, 0);
	uint64_t	max;

	if (w->lim->ratio_max == 0 || n < 0 || !archive_entry_size_is_set(e) ||
	    archive_entry_size(e) < 0)
		return 0;
	max = w->lim->ratio_max * w->packed + SLACK;
	if ((uint64_t)archive_entry_size(e) <= max &&
	    (uint64_t)n <= max - (uint64_t)archive_entry_size(e))
		return 0;
	w->bomb = 1;
	return 1;
}

ssize_t
pkga_read(struct pkga_member *m, void *buf, size_t len)
{
	la_ssize_t n;

	if (len > m->left)
		len = (size_t)m->left;
	if (len == 0)
		return 0;
	if ((n = archive_read_data(m->a, buf, len)) < 0)
		return -EBADMSG;
	m->left -= (uint64_t)n;
	if (over(m->w, m->a))
		return -EBADMSG;
	return n;
}

int
pkga_member_name(const char *name, char *out, size_t len, const char **why)
{
	char	*canon;
	int	 n, ok;

	if (name == NULL || name[0] == '\0') {
		*why = "a member without a name";
		return -EINVAL;
	}
	if (name[0] == '/') {
		*why = "a member with an absolute path";
		return -EINVAL;
	}
	/* As elfutils: "./usr/x" and "usr/x" are both "/usr/x". */
	n = snprintf(out, len, "/%s", name[0] == '.' && name[1] == '/' ?
	    name + 2 : name);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (strcmp(out, "/..") == 0 || strncmp(out, "/../", 4) == 0 ||
	    strstr(out, "/../") != NULL ||
	    (n >= 3 && strcmp(out + n - 3, "/..") == 0)) {
		*why = "a member with a \"..\" in its path";
		return -EINVAL;
	}
	if ((canon = malloc((size_t)n + 2)) == NULL)
		return -ENOMEM;
	ok = webapi_canon_path(out, canon) == 0 && strcmp(canon, out) == 0 &&
	    strcmp(out, "/") != 0;
	free(canon);
	if (!ok) {
		*why = "a member whose path is not canonical";
		return -EINVAL;
	}
	return 0;
}

/* A reader of a .deb's ar (ar), else of the archive formats, whose
 * input walk_formats() has unpacked. */
static struct archive *
reader(int ar)
{
	struct archive *a;

	if ((a = archive_read_new()) == NULL)
		return NULL;
	if (ar) {
		archive_read_support_format_ar(a);
		archive_read_support_filter_none(a);
	} else {
		/* What distros and builds ship; not every format libarchive
		 * knows (less code exposed to what a scan dir holds). */
		archive_read_support_filter_none(a);
		archive_read_support_format_tar(a);
		archive_read_support_format_gnutar(a);
		archive_read_support_format_cpio(a);
		archive_read_support_format_zip(a);
	}
	return a;
}

/* The members of a (open), to fn. */
static int
members(struct walk *w, struct archive *a, pkga_member_fn fn,
    pkga_refused_fn refused, void *ctx)
{
	struct archive_entry	*e;
	struct pkga_member	 m;
	const char		*raw, *bad;
	char			 name[4096];
	int			 r, rc;

	for (;;) {
		r = archive_read_next_header(a, &e);
		if (r == ARCHIVE_EOF)
			return over(w, a) ? -EFBIG : 0;
		if (r == ARCHIVE_RETRY)
			continue;
		if (r < ARCHIVE_WARN) {
			if (w->bomb)
				return -EFBIG;
			say(w->why, w->uwhy[0] != '\0' ? w->uwhy :
			    archive_error_string(a) != NULL ?
			    archive_error_string(a) : "corrupt or truncated");
			return -EBADMSG;
		}
		if (over(w, a) || promised_over(w, a, e))
			return -EFBIG;
		if (archive_entry_filetype(e) != AE_IFREG ||
		    (archive_entry_hardlink(e) != NULL &&
		    archive_entry_size(e) == 0))
			continue;
		raw = archive_entry_pathname(e);
		if ((rc = pkga_member_name(raw, name, sizeof(name), &bad)) < 0) {
			if (rc == -ENOMEM)
				return rc;
			refused(ctx, raw != NULL ? raw : "",
			    rc == -ENAMETOOLONG ? "a member path too long" :
			    bad);
			continue;
		}
		if (w->lim->member_max > 0 && archive_entry_size_is_set(e) &&
		    (uint64_t)archive_entry_size(e) > w->lim->member_max) {
			refused(ctx, raw, "a member larger than the limit");
			continue;
		}
		m.w = w;
		m.a = a;
		m.hdr = archive_read_header_position(a) >= 0 ?
		    (uint64_t)archive_read_header_position(a) : 0;
		m.data = archive_filter_bytes(a, 0) >= 0 ?
		    (uint64_t)archive_filter_bytes(a, 0) : 0;
		m.sparse = archive_entry_sparse_count(e) > 0 ||
		    archive_read_header_position(a) < 0 ||
		    archive_filter_bytes(a, 0) < 0;
		m.left = archive_entry_size_is_set(e) &&
		    archive_entry_size(e) >= 0 ?
		    (uint64_t)archive_entry_size(e) : 0;
		if (w->lim->member_max > 0 && m.left > w->lim->member_max)
			m.left = w->lim->member_max;
		if ((rc = fn(ctx, name, m.left, &m)) != 0) {
			if (rc == -EBADMSG && w->bomb)
				rc = -EFBIG;
			if (rc == -EBADMSG)
				say(w->why, archive_error_string(a) ?
				    archive_error_string(a) :
				    "a corrupt member");
			return rc;
		}
		if (over(w, a))
			return -EFBIG;
	}
}

static la_ssize_t
inner_read(struct archive *a, void *ctx, const void **buf)
{
	struct walk	*w = ctx;
	la_ssize_t	 n;

	(void)a;
	n = archive_read_data(w->outer, w->ibuf, sizeof(w->ibuf));
	*buf = w->ibuf;
	return n < 0 ? ARCHIVE_FATAL : n;
}

/* The format reader's input: the unpacker's output, within the bound. */
static la_ssize_t
unpacked_read(struct archive *a, void *ctx, const void **buf)
{
	struct walk	*w = ctx;
	la_ssize_t	 n;

	(void)a;
	*buf = w->ubuf;
	if ((n = archive_read_data(w->unpack, w->ubuf, sizeof(w->ubuf))) < 0) {
		say(w->uwhy, archive_error_string(w->unpack) != NULL ?
		    archive_error_string(w->unpack) : "corrupt or truncated");
		return ARCHIVE_FATAL;
	}
	w->fed += (uint64_t)n;
	if (w->lim->ratio_max > 0 &&
	    w->fed > w->lim->ratio_max * w->packed + SLACK) {
		w->bomb = 1;
		return ARCHIVE_FATAL;
	}
	return n;
}

/* Why the archive (a .deb's data.tar) could not be opened. */
static void
not_opened(struct walk *w, const char *msg)
{
	snprintf(w->why, PKGA_WHY_MAX, "%s%.140s", w->outer != NULL ?
	    "data.tar: " : "", msg);
}

/*
 * The members of the archive on fd (from its current offset, at start),
 * or, when w->outer is set, of its current member: unpacked by one
 * reader (every filter, format raw) whose output is fed, within the
 * bound, to another that reads the formats.  A plain file is read by
 * the format reader itself, from fd (zip's central directory is sought
 * to): all it can buffer is the file.
 */
static int
walk_formats(struct walk *w, int fd, off_t start, pkga_member_fn fn,
    pkga_refused_fn refused, void *ctx)
{
	struct archive_entry	*e;
	struct archive		*a = NULL;
	int			 i, r, rc = -ENOMEM;

	if ((w->unpack = archive_read_new()) == NULL)
		goto out;
	archive_read_support_filter_all(w->unpack);
	archive_read_support_format_raw(w->unpack);
	r = w->outer != NULL ? archive_read_open(w->unpack, w, NULL,
	    inner_read, NULL) : archive_read_open_fd(w->unpack, fd, 65536);
	if (r != ARCHIVE_OK || (r = archive_read_next_header(w->unpack,
	    &e)) < ARCHIVE_WARN) {
		not_opened(w, archive_error_string(w->unpack) != NULL ?
		    archive_error_string(w->unpack) : w->outer != NULL &&
		    archive_error_string(w->outer) != NULL ?
		    archive_error_string(w->outer) : "truncated or corrupt");
		rc = -EBADMSG;
		goto out;
	}
	w->nf = archive_filter_count(w->unpack);
	for (i = 0; i < w->nf && i < 4; i++)
		w->fcode[i] = archive_filter_code(w->unpack, i);
	if ((a = reader(0)) == NULL)
		goto out;
	if (w->nf > 1 || w->outer != NULL || w->cmd) {
		r = archive_read_open(a, w, NULL, unpacked_read, NULL);
	} else {
		archive_read_free(w->unpack);
		w->unpack = NULL;
		if (lseek(fd, start, SEEK_SET) != start) {
			rc = -errno;
			goto out;
		}
		r = archive_read_open_fd(a, fd, 65536);
	}
	if (r != ARCHIVE_OK) {
		if (w->bomb) {
			rc = -EFBIG;
			goto out;
		}
		not_opened(w, w->uwhy[0] != '\0' ? w->uwhy :
		    archive_error_string(a) != NULL ? archive_error_string(a) :
		    "truncated or corrupt");
		rc = -EBADMSG;
		goto out;
	}
	rc = members(w, a, fn, refused, ctx);
out:
	if (a != NULL)
		archive_read_free(a);
	if (w->unpack != NULL)
		archive_read_free(w->unpack);
	w->unpack = NULL;
	return rc;
}

/* A .deb or .ddeb: its data.tar.* member, read as an archive. */
static int
deb(struct walk *w, int fd, pkga_member_fn fn, pkga_refused_fn refused,
    void *ctx)
{
	struct archive_entry	*e;
	const char		*n;
	int			 r, rc = -EBADMSG;

	if ((w->outer = reader(1)) == NULL)
		return -ENOMEM;
	if (archive_read_open_fd(w->outer, fd, 65536) != ARCHIVE_OK) {
		say(w->why, archive_error_string(w->outer));
		goto out;
	}
	while ((r = archive_read_next_header(w->outer, &e)) == ARCHIVE_OK ||
	    r == ARCHIVE_WARN) {
		n = archive_entry_pathname(e);
		if (n == NULL || strncmp(n, "data.tar", 8) != 0)
			continue;
		/* An ar member's data follows its 60-byte header (dpkg
		 * writes no BSD long names, whose data would follow the
		 * name). */
		if (archive_read_header_position(w->outer) >= 0 &&
		    archive_entry_size(e) > 0 && strncmp(n, "#1/", 3) != 0) {
			w->xzstart = (uint64_t)
			    archive_read_header_position(w->outer) + 60;
			w->xzend = w->xzstart +
			    (uint64_t)archive_entry_size(e);
		}
		rc = walk_formats(w, fd, 0, fn, refused, ctx);
		goto out;
	}
	say(w->why, r == ARCHIVE_EOF ? "a .deb without data.tar" :
	    archive_error_string(w->outer));
out:
	archive_read_free(w->outer);
	w->outer = NULL;
	return rc;
}

/* Quote s for /bin/sh into a new string. */
static char *
shell_quote(const char *s)
{
	size_t	 n = 3, i;
	char	*q, *p;

	for (i = 0; s[i] != '\0'; i++)
		n += s[i] == '\'' ? 4 : 1;
	if ((q = p = malloc(n)) == NULL)
		return NULL;
	*p++ = '\'';
	for (i = 0; s[i] != '\0'; i++) {
		if (s[i] == '\'') {
			memcpy(p, "'\\''", 4);
			p += 4;
		} else {
			*p++ = s[i];
		}
	}
	*p++ = '\'';
	*p = '\0';
	return q;
}

/* Start `cmd 'path'` with its output on *out.  @return its pid, or -errno. */
static pid_t
spawn(const char *cmd, const char *path, int *out)
{
	char	*q, *line;
	size_t	 n;
	int	 p[2], devnull;
	pid_t	 pid;

	if ((q = shell_quote(path)) == NULL)
		return -ENOMEM;
	n = strlen(cmd) + strlen(q) + 2;
	if ((line = malloc(n)) == NULL) {
		free(q);
		return -ENOMEM;
	}
	snprintf(line, n, "%s %s", cmd, q);
	free(q);
	if (pipe2(p, O_CLOEXEC) != 0) {
		free(line);
		return -errno;
	}
	if ((pid = fork()) < 0) {
		pid = -errno;
	} else if (pid == 0) {
		/* Its own process group, so that all of it can be stopped. */
		setpgid(0, 0);
		devnull = open("/dev/null", O_RDONLY);
		if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(p[1], 1) < 0)
			_exit(127);
		execl("/bin/sh", "sh", "-c", line, (char *)NULL);
		_exit(127);
	}
	free(line);
	close(p[1]);
	if (pid < 0)
		close(p[0]);
	else
		*out = p[0];
	return pid;
}

/* Read fd to its end, at most the bound's worth.  @return 0 or -EFBIG. */
static int
drain(struct walk *w, int fd)
{
	uint64_t	n = 0;
	ssize_t		r;

	while ((r = read(fd, w->ibuf, sizeof(w->ibuf))) > 0 ||
	    (r < 0 && errno == EINTR)) {
		n += r > 0 ? (uint64_t)r : 0;
		if (w->lim->ratio_max > 0 &&
		    n > w->lim->ratio_max * w->packed + SLACK)
			return -EFBIG;
	}
	return 0;
}

int
pkga_walk(int fd, const char *path, enum pkga_type type, const char *cmd,
    const struct pkga_limits *limits, pkga_member_fn fn,
    pkga_refused_fn refused, void *ctx, char *why)
{
	struct walk	*w;
	struct stat	 st;
	char		 magic[8];
	off_t		 start = 0;
	pid_t		 pid = -1;
	int		 in = fd, rc, status;

	why[0] = '\0';
	if (fstat(fd, &st) != 0)
		return -errno;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return -ENOMEM;
	w->lim = limits;
	w->packed = (uint64_t)st.st_size;
	w->why = why;
	w->fd = fd;
	w->cmd = type == PKGA_CMD;
	w->seekable = -1;
	if (type == PKGA_CMD) {
		if ((pid = spawn(cmd, path, &in)) < 0) {
			free(w);
			snprintf(why, PKGA_WHY_MAX, "cannot run the command: "
			    "%s", strerror((int)-pid));
			return -ECHILD;
		}
	} else if (pread(fd, magic, sizeof(magic), 0) == sizeof(magic) &&
	    memcmp(magic, "!<arch>\n", 8) == 0) {
		rc = deb(w, fd, fn, refused, ctx);
		goto done;
	} else if ((start = lseek(fd, 0, SEEK_CUR)) < 0) {
		rc = -errno;
		goto done;
	}
	rc = walk_formats(w, in, start, fn, refused, ctx);
done:
	if (rc == -EFBIG)
		say(why, "unpacks to far more than the archive's size "
		    "(a decompression bomb?)");
	if (pid > 0) {
		/* The archive may end before the command's output does (tar
		 * pads to its record size): read the rest, so that the
		 * command ends as it would, within the bound. */
		if (rc == 0 && drain(w, in) < 0)
			rc = -EFBIG;
		close(in);
		if (rc != 0)	/* stopped early: stop it too */
			kill(-pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (rc == 0 && !(WIFEXITED(status) &&
		    WEXITSTATUS(status) == 0)) {
			snprintf(why, PKGA_WHY_MAX, "the command %s failed "
			    "(exit status %d)", cmd, WIFEXITED(status) ?
			    WEXITSTATUS(status) : 128 + WTERMSIG(status));
			rc = -ECHILD;
		}
	}
	free(w);
	return rc;
}

struct extract {
	const char	*name;
	pkga_sink_fn	 sink;
	void		*sctx;
	uint64_t	 size;
};

static int
extract_one(void *ctx, const char *name, uint64_t size, struct pkga_member *m)
{
	struct extract	*x = ctx;
	char		 buf[65536];
	ssize_t		 n;
	int		 rc;

	(void)size;
	if (strcmp(name, x->name) != 0)
		return 0;
	while ((n = pkga_read(m, buf, sizeof(buf))) > 0) {
		if ((rc = x->sink(x->sctx, buf, (size_t)n)) < 0)
			return rc;
		x->size += (uint64_t)n;
	}
	return n < 0 ? (int)n : 1;
}

static void
ignore(void *ctx, const char *name, const char *why)
{
	(void)ctx;
	(void)name;
	(void)why;
}

int
pkga_extract(int fd, const char *path, enum pkga_type type, const char *cmd,
    const struct pkga_limits *limits, const char *name, pkga_sink_fn sink,
    void *sctx, uint64_t *size, char *why)
{
	struct extract	x = { name, sink, sctx, 0 };
	int		rc;

	rc = pkga_walk(fd, path, type, cmd, limits, extract_one, ignore, &x,
	    why);
	*size = x.size;
	if (rc == 0) {
		say(why, "no such member");
		return -ENOENT;
	}
	return rc < 0 ? rc : 0;
}


static uint32_t
get32be(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

/* Where an rpm's payload starts: after the 96-byte lead, the signature
 * header (padded to 8) and the header.  @return 0 or -EBADMSG. */
static int
rpm_payload(int fd, uint64_t *off)
{
	unsigned char	h[16];
	uint64_t	at = 96;
	int		i;

	if (pread(fd, h, 4, 0) != 4 || get32be(h) != 0xedabeedbu)
		return -EBADMSG;
	for (i = 0; i < 2; i++) {
		if (pread(fd, h, sizeof(h), (off_t)at) != (ssize_t)sizeof(h) ||
		    h[0] != 0x8e || h[1] != 0xad || h[2] != 0xe8 ||
		    get32be(h + 8) > (1u << 20) || get32be(h + 12) > (1u << 28))
			return -EBADMSG;
		at += 16 + 16 * (uint64_t)get32be(h + 8) + get32be(h + 12);
		if (i == 0)
			at = (at + 7) & ~(uint64_t)7;
	}
	*off = at;
	return 0;
}

/* Can the members of a, the archive w walks, be sought to?  Notes w's
 * answer (and the format). */
static int
seekable(struct walk *w, struct archive *a)
{
	struct xzseek	*x;
	const char	*why;
	int		 f, nf;

	if (w->seekable >= 0)
		return w->seekable;
	w->seekable = 0;
	if (w->cmd)
		return 0;
	f = archive_format(a);
	if ((f & ARCHIVE_FORMAT_BASE_MASK) == ARCHIVE_FORMAT_TAR)
		w->fmt = 't';
	else if (f == ARCHIVE_FORMAT_CPIO_SVR4_NOCRC ||
	    f == ARCHIVE_FORMAT_CPIO_SVR4_CRC)
		w->fmt = 'c';
	else
		return 0;
	/* xz right on the file (or a .deb's member, whose bounds deb()
	 * noted), or under an rpm's header: to the end of either. */
	nf = w->nf;
	if (nf < 2 || w->fcode[0] != ARCHIVE_FILTER_XZ)
		return 0;
	if (w->xzend == 0) {
		if (nf == 3 && w->fcode[1] == ARCHIVE_FILTER_RPM) {
			if (rpm_payload(w->fd, &w->xzstart) < 0)
				return 0;
		} else if (nf != 2) {
			return 0;
		}
		w->xzend = w->packed;
	} else if (nf != 2) {
		return 0;
	}
	if (xzseek_open(w->fd, w->xzend, &x, &why) < 0)
		return 0;
	/* One block is read from its start anyway; the stream the index
	 * describes must be all the xz there is (not the last of several
	 * streams, whose offsets would not be the walk's). */
	if (xzseek_blocks(x) >= 2 && xzseek_start(x) == w->xzstart) {
		w->xzsize = xzseek_size(x);
		w->seekable = 1;
	}
	xzseek_free(x);
	return w->seekable;
}

static void
put64le(unsigned char *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t
get64le(const unsigned char *p)
{
	uint64_t	v = 0;
	int		i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

size_t
pkga_member_seek(struct pkga_member *m, unsigned char *out)
{
	struct walk *w = m->w;

	if (m->sparse || !seekable(w, m->a) || m->hdr > m->data ||
	    m->data - m->hdr > GAP_MAX ||
	    m->data - m->hdr < (w->fmt == 't' ? 512 : 110) ||
	    m->data > w->xzsize || m->left > w->xzsize - m->data)
		return 0;
	out[0] = 'X';
	out[1] = 1;
	out[2] = w->fmt;
	put64le(out + 3, w->xzend);
	put64le(out + 11, m->hdr);
	put64le(out + 19, m->data);
	return SEEK_LEN;
}

/* The value of a tar header's numeric field: octal, or base-256 when its
 * first byte's high bit is set.  @return 0, or -1 when malformed. */
static int
tar_number(const unsigned char *p, size_t len, uint64_t *v)
{
	size_t i = 0;

	*v = 0;
	if (p[0] & 0x80) {
		if (p[0] & 0x40)
			return -1;	/* negative */
		for (*v = p[0] & 0x3f, i = 1; i < len; i++) {
			if (*v >> 56)
				return -1;	/* wider than 64 bits */
			*v = *v << 8 | p[i];
		}
		return 0;
	}
	while (i < len && p[i] == ' ')
		i++;
	if (i == len || p[i] < '0' || p[i] > '7')
		return -1;
	for (; i < len && p[i] >= '0' && p[i] <= '7'; i++) {
		if (*v >> 61)
			return -1;
		*v = *v << 3 | (uint64_t)(p[i] - '0');
	}
	return i == len || p[i] == ' ' || p[i] == '\0' ? 0 : -1;
}

/* Is h (512 bytes) a tar header, with its checksum, for size bytes? */
static int
tar_header_for(const unsigned char *h, uint64_t size)
{
	uint64_t	sum = 0, want, sz;
	size_t		i;

	for (i = 0; i < 512; i++)
		sum += i >= 148 && i < 156 ? ' ' : h[i];
	return tar_number(h + 148, 8, &want) == 0 && sum == want &&
	    tar_number(h + 124, 12, &sz) == 0 && sz == size;
}

/* An 8-digit hex field of a cpio "newc" header.  @return 0 or -1. */
static int
cpio_hex(const unsigned char *p, uint64_t *v)
{
	int i;

	for (*v = 0, i = 0; i < 8; i++) {
		if (p[i] >= '0' && p[i] <= '9')
			*v = *v << 4 | (uint64_t)(p[i] - '0');
		else if ((p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'f')
			*v = *v << 4 | (uint64_t)((p[i] | 0x20) - 'a' + 10);
		else
			return -1;
	}
	return 0;
}

/* Is h (len bytes: the header, its name, padding) a cpio "newc" header
 * for size bytes, whose data follows it? */
static int
cpio_header_for(const unsigned char *h, size_t len, uint64_t size)
{
	uint64_t fsize, nsize;

	return len >= 110 && (memcmp(h, "070701", 6) == 0 ||
	    memcmp(h, "070702", 6) == 0) && cpio_hex(h + 54, &fsize) == 0 &&
	    cpio_hex(h + 94, &nsize) == 0 && fsize == size &&
	    nsize <= GAP_MAX && ((110 + nsize + 3) & ~(uint64_t)3) == len;
}

struct at {
	unsigned char	 fmt;
	unsigned char	*gap;		/* the headers before the data */
	size_t		 gaplen, got;
	uint64_t	 size;
	pkga_sink_fn	 sink;
	void		*sctx;
};

#define NOT_THERE	(-EBADMSG - 1000)	/* no header where noted */

static int
at_bytes(void *ctx, const void *buf, size_t len)
{
	struct at	*t = ctx;
	const char	*p = buf;
	size_t		 n;
	int		 ok;

	if (t->got < t->gaplen) {
		n = t->gaplen - t->got < len ? t->gaplen - t->got : len;
		memcpy(t->gap + t->got, p, n);
		t->got += n;
		p += n;
		len -= n;
		if (t->got < t->gaplen)
			return 0;
		ok = t->fmt == 't' ?
		    tar_header_for(t->gap + t->gaplen - 512, t->size) :
		    cpio_header_for(t->gap, t->gaplen, t->size);
		if (!ok)
			return NOT_THERE;
	}
	return len > 0 ? t->sink(t->sctx, p, len) : 0;
}

int
pkga_extract_at(int fd, const unsigned char *seek, size_t seeklen,
    uint64_t size, pkga_sink_fn sink, void *sctx, uint64_t *unpacked,
    char *why)
{
	struct xzseek	*x = NULL;
	struct stat	 st;
	struct at	 t;
	const char	*whys = "a seek note this build does not know";
	uint64_t	 end, hdr, data;
	int		 rc = -EBADMSG;

	why[0] = '\0';
	*unpacked = 0;
	memset(&t, 0, sizeof(t));
	if (seeklen != SEEK_LEN || seek[0] != 'X' || seek[1] != 1 ||
	    (seek[2] != 't' && seek[2] != 'c'))
		goto out;
	end = get64le(seek + 3);
	hdr = get64le(seek + 11);
	data = get64le(seek + 19);
	whys = "a seek note out of bounds";
	if (hdr > data || data - hdr > GAP_MAX ||
	    data - hdr < (seek[2] == 't' ? 512 : 110) || data > UINT64_MAX -
	    size)
		goto out;
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		goto out;
	}
	if (end > (uint64_t)st.st_size)
		goto out;
	if ((rc = xzseek_open(fd, end, &x, &whys)) < 0)
		goto out;
	t.fmt = seek[2];
	t.gaplen = (size_t)(data - hdr);
	t.size = size;
	t.sink = sink;
	t.sctx = sctx;
	if ((t.gap = malloc(t.gaplen)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	rc = xzseek_read(x, hdr, data - hdr + size, at_bytes, &t, unpacked,
	    &whys);
	if (rc == NOT_THERE) {
		whys = "no member header where the seek note says";
		rc = -EBADMSG;
	}
out:
	if (rc < 0)
		say(why, rc == -EBADMSG ? whys : strerror(-rc));
	free(t.gap);
	xzseek_free(x);
	return rc;
}
