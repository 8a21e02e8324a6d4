/* Fuzz the package reader: pkga_walk() over any bytes as a scan directory
 * may hold them (a .deb's ar and data.tar, rpm, tar with any compression,
 * zip, cpio), every member read to its end, and pkga_member_name() on
 * every name.  Seeking: each member that can be sought to is extracted
 * again from its note (pkga_extract_at()); the bytes as an .xz stream
 * read through their index (xzseek), and their first bytes taken as a
 * note. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/pkgarchive.h"
#include "common/xzseek.h"
#include "fuzz.h"

/* What a sought member gave: its bytes must be those the walk read. */
struct same {
	const unsigned char	*want;
	size_t			 len, got;
};

static int
same_bytes(void *ctx, const void *buf, size_t len)
{
	struct same *s = ctx;

	if (len > s->len - s->got || memcmp(s->want + s->got, buf, len) != 0)
		abort();	/* a seek gave other bytes than the walk */
	s->got += len;
	return 0;
}

static int
discard(void *ctx, const void *buf, size_t len)
{
	(void)ctx;
	(void)buf;
	(void)len;
	return 0;
}

static int
member(void *ctx, const char *name, uint64_t size, struct pkga_member *m)
{
	unsigned char	 note[PKGA_SEEK_MAX], *all = NULL, *p;
	char		 buf[4096], why[PKGA_WHY_MAX];
	struct same	 s = { NULL, 0, 0 };
	uint64_t	 unpacked;
	size_t		 notelen, len = 0;
	ssize_t		 n;
	int		*fd = ctx;

	if (name[0] != '/')
		abort();	/* names are canonical, absolute */
	notelen = pkga_member_seek(m, note);
	while ((n = pkga_read(m, buf, sizeof(buf))) > 0) {
		if (notelen == 0)
			continue;
		if ((p = realloc(all, len + (size_t)n)) == NULL)
			break;
		all = p;
		memcpy(all + len, buf, (size_t)n);
		len += (size_t)n;
	}
	if (n == 0 && notelen > 0 && len == size) {
		s.want = all;
		s.len = len;
		if (pkga_extract_at(*fd, note, notelen, size, same_bytes, &s,
		    &unpacked, why) == 0 && s.got != len)
			abort();	/* short, yet no error */
	}
	free(all);
	return n < 0 ? (int)n : 0;
}

static void
refused(void *ctx, const char *name, const char *why)
{
	(void)ctx;
	(void)name;
	(void)why;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pkga_limits	 lim = { 1u << 24, 1000 };
	struct xzseek		*x;
	const char		*why;
	char			 whybuf[PKGA_WHY_MAX], out[256], *s;
	uint64_t		 unpacked = 0, off, len;
	int			 fd;

	if ((fd = memfd_create("fuzz", MFD_CLOEXEC)) < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size &&
	    lseek(fd, 0, SEEK_SET) == 0)
		(void)pkga_walk(fd, "fuzz", PKGA_AUTO, NULL, &lim, member,
		    refused, &fd, whybuf);
	if (xzseek_open(fd, size, &x, &why) == 0) {
		/* A range the input picks, within a bound. */
		off = size > 0 ? data[0] * (uint64_t)4099 : 0;
		len = size > 1 ? data[1] * (uint64_t)1031 : 1;
		if (off > xzseek_size(x))
			off = xzseek_size(x);
		if (len > xzseek_size(x) - off)
			len = xzseek_size(x) - off;
		(void)xzseek_read(x, off, len, discard, NULL, &unpacked, &why);
		xzseek_free(x);
	}
	(void)pkga_extract_at(fd, data, size < PKGA_SEEK_MAX ? size :
	    PKGA_SEEK_MAX, size, discard, NULL, &unpacked, whybuf);
	close(fd);
	if ((s = malloc(size + 1)) != NULL) {
		memcpy(s, data, size);
		s[size] = '\0';
		(void)pkga_member_name(s, out, sizeof(out), &why);
		free(s);
	}
	return 0;
}
