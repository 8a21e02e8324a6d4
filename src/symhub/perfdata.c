/*
 * perfdata: see perfdata.h.  Offsets and record layouts are those of
 * doc/perf.md.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/errors.h"
#include "base/rd.h"
#include "perfdata.h"

#define MAGIC		"PERFILE2"
#define MAGIC_BIG	"2ELIFREP"
#define MAGIC_V1	"PERFFILE"

#define FILE_HEADER_SIZE	104	/* struct perf_file_header */
#define PIPE_HEADER_SIZE	16	/* struct perf_pipe_file_header */
#define FEAT_BUILD_ID		2	/* HEADER_BUILD_ID */
#define TABLE_MAX		(64u << 20)

#define EV_HEADER_SIZE		8	/* struct perf_event_header */
#define EV_MMAP2		10	/* PERF_RECORD_MMAP2 */
#define EV_HEADER_BUILD_ID	67	/* PERF_RECORD_HEADER_BUILD_ID */
#define EV_COMPRESSED		81	/* PERF_RECORD_COMPRESSED */

#define MISC_CPUMODE_MASK	7
#define MISC_KERNEL		1
#define MISC_GUEST_KERNEL	4
#define MISC_MMAP_BUILD_ID	(1u << 14)
#define MISC_BUILD_ID_SIZE	(1u << 15)

/* struct perf_record_header_build_id: header, pid, build_id[24] (20 bytes,
 * then the size when MISC_BUILD_ID_SIZE is set), filename. */
#define BID_ID_OFF		12
#define BID_SIZE_OFF		32
#define BID_NAME_OFF		36

/* struct perf_record_mmap2 with MISC_MMAP_BUILD_ID: the build-id's size
 * and bytes where maj/min/ino are otherwise, then prot, flags, filename. */
#define MMAP2_IDSIZE_OFF	40
#define MMAP2_ID_OFF		44
#define MMAP2_NAME_OFF		72
#define KERNEL_NAME		"[kernel.kallsyms]"

/* Reading events: a window at least one event (64 KiB) long. */
#define WINDOW			(256u << 10)

struct pd {
	int		 fd;
	int		 big;		/* the file's byte order */
	uint64_t	 fsize;
	int		(*each)(void *, const struct perfdata_module *);
	void		*ctx;
	struct perfdata_info *info;
	const char	*why;
};

/* The n-byte integer at p, in the file's byte order.  The caller has
 * checked that the n bytes are there. */
static uint64_t
num(const struct pd *r, const unsigned char *p, size_t n)
{
	struct rd d = { p, p + n, 0, r->big };

	return rd_fixed(&d, n);
}

/* Read exactly n bytes at off.  @return n, fewer at the end of the file,
 * or -EIO. */
static ssize_t
readat(int fd, void *buf, size_t n, uint64_t off)
{
	size_t	got = 0;
	ssize_t	k;

	while (got < n) {
		k = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -EIO;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

static int
corrupt(struct pd *r, const char *why)
{
	r->why = why;
	return -ENOEXEC;
}

static int
emit(struct pd *r, const unsigned char *id, size_t idlen, const char *name,
    unsigned misc)
{
	struct perfdata_module	m;
	unsigned		cpumode = misc & MISC_CPUMODE_MASK;
	size_t			i;

	r->info->records++;
	for (i = 0; i < idlen && id[i] == 0; i++)
		;
	if (i == idlen)
		return 0;
	memset(&m, 0, sizeof(m));
	memcpy(m.id, id, idlen);
	m.idlen = idlen;
	m.name = name;
	m.kernel = cpumode == MISC_KERNEL || cpumode == MISC_GUEST_KERNEL;
	return r->each(r->ctx, &m);
}

/* One build-id record (table entry or PERF_RECORD_HEADER_BUILD_ID) of
 * len bytes, its header included. */
static int
one_buildid(struct pd *r, const unsigned char *p, size_t len)
{
	unsigned	misc = num(r, p + 4, 2);
	size_t		idlen = PERFDATA_BUILDID_MAX;

	if (len < BID_NAME_OFF + 1)
		return corrupt(r, "a build-id record too short");
	if (memchr(p + BID_NAME_OFF, '\0', len - BID_NAME_OFF) == NULL)
		return corrupt(r, "a build-id record whose name has no end");
	if (misc & MISC_BUILD_ID_SIZE) {
		idlen = p[BID_SIZE_OFF];
		if (idlen == 0 || idlen > PERFDATA_BUILDID_MAX)
			return corrupt(r, "a build-id record with a bad size");
	}
	return emit(r, p + BID_ID_OFF, idlen, (const char *)p + BID_NAME_OFF,
	    misc);
}

/* The build-id table: records back to back, each sized by its header. */
static int
read_table(struct pd *r, uint64_t off, uint64_t size)
{
	unsigned char	*t;
	uint64_t	 at = 0;
	ssize_t		 got;
	size_t		 len;
	int		 rc = 0;

	if (size > TABLE_MAX)
		return corrupt(r, "a build-id table over 64 MiB");
	if (off > r->fsize || size > r->fsize - off)
		return corrupt(r, "a build-id table past the end of the file");
	if (size == 0)
		return 0;
	if ((t = malloc(size)) == NULL)
		return -ENOMEM;
	if ((got = readat(r->fd, t, size, off)) < 0)
		rc = (int)got;
	else if ((uint64_t)got != size)
		rc = corrupt(r, "a build-id table cut short");
	while (rc == 0 && at < size) {
		if (size - at < EV_HEADER_SIZE) {
			rc = corrupt(r, "a build-id table with a torn record");
			break;
		}
		len = num(r, t + at + 6, 2);
		if (len < EV_HEADER_SIZE || len > size - at) {
			rc = corrupt(r, "a build-id record with a bad length");
			break;
		}
		rc = one_buildid(r, t + at, len);
		at += len;
	}
	free(t);
	return rc;
}

static int
one_mmap2(struct pd *r, const unsigned char *p, size_t len)
{
	unsigned	 misc = num(r, p + 4, 2);
	size_t		 idlen;
	const char	*name;

	if (!(misc & MISC_MMAP_BUILD_ID))
		return 0;
	if (len < MMAP2_NAME_OFF + 1)
		return corrupt(r, "an mmap event too short");
	if (memchr(p + MMAP2_NAME_OFF, '\0', len - MMAP2_NAME_OFF) == NULL)
		return corrupt(r, "an mmap event whose name has no end");
	idlen = p[MMAP2_IDSIZE_OFF];
	if (idlen == 0 || idlen > PERFDATA_BUILDID_MAX)
		return corrupt(r, "an mmap event with a bad build-id size");
	name = (const char *)p + MMAP2_NAME_OFF;
	/* The kernel's map is "[kernel.kallsyms]_text"; perf's name for the
	 * module is the one of its build-id table. */
	if (strncmp(name, KERNEL_NAME, strlen(KERNEL_NAME)) == 0)
		name = KERNEL_NAME;
	return emit(r, p + MMAP2_ID_OFF, idlen, name, misc);
}

/*
 * The events from off to end (UINT64_MAX: to the end of the file, as in a
 * pipe).  Each event is sized by its header; one of size 0 would loop
 * forever in perf too, and is corruption.
 */
static int
read_events(struct pd *r, uint64_t off, uint64_t end)
{
	unsigned char	*w;
	uint64_t	 wbase = off;	/* file offset of w[0] */
	size_t		 wlen = 0, at, len;
	ssize_t		 got;
	unsigned	 type;
	int		 rc = 0;

	if (end > r->fsize)
		end = r->fsize;
	if ((w = malloc(WINDOW)) == NULL)
		return -ENOMEM;
	while (rc == 0 && off < end) {
		at = (size_t)(off - wbase);
		if (at + 65536 > wlen && wbase + wlen < end) {
			/* Refill so that a whole event (at most 64 KiB)
			 * starts the window, unless it reaches the end. */
			wbase = off;
			at = 0;
			got = readat(r->fd, w, (size_t)(end - off < WINDOW ?
			    end - off : WINDOW), off);
			if (got < 0) {
				rc = (int)got;
				break;
			}
			wlen = (size_t)got;
		}
		if (wlen - at < EV_HEADER_SIZE) {
			/* A profile still being written ends mid-event. */
			if (r->info->pipe)
				break;
			rc = corrupt(r, "an event cut short");
			break;
		}
		type = num(r, w + at, 4);
		len = num(r, w + at + 6, 2);
		if (len < EV_HEADER_SIZE)
			rc = corrupt(r, "an event with a bad length");
		else if (len > wlen - at)
			rc = r->info->pipe ? 1 :
			    corrupt(r, "an event cut short");
		else if (type == EV_MMAP2)
			rc = one_mmap2(r, w + at, len);
		else if (type == EV_HEADER_BUILD_ID)
			rc = one_buildid(r, w + at, len);
		else if (type == EV_COMPRESSED)
			r->info->compressed++;
		off += len;
	}
	free(w);
	return rc == 1 ? 0 : rc;
}

int
perfdata_buildids(int fd,
    int (*each)(void *ctx, const struct perfdata_module *m), void *ctx,
    struct perfdata_info *info, const char **why)
{
	unsigned char	 h[FILE_HEADER_SIZE], sec[16];
	struct pd	 r;
	struct stat	 st;
	uint64_t	 hsize, data_off, data_size, feat[4], feat_off;
	ssize_t		 got;
	unsigned	 idx;
	int		 rc, bit;

	memset(info, 0, sizeof(*info));
	memset(&r, 0, sizeof(r));
	r.fd = fd;
	r.each = each;
	r.ctx = ctx;
	r.info = info;
	*why = NULL;
	if (fstat(fd, &st) != 0)
		return -EIO;
	r.fsize = (uint64_t)st.st_size;
	if ((got = readat(fd, h, sizeof(h), 0)) < 0)
		return (int)got;
	if (got < 8) {
		*why = "too short for a perf.data header";
		return -ENOEXEC;
	}
	if (memcmp(h, MAGIC_V1, 8) == 0)
		return -EPROTONOSUPPORT;
	/* The magic, a u64 written in the recording machine's order, reads
	 * "PERFILE2" from a little-endian one. */
	if (memcmp(h, MAGIC_BIG, 8) == 0)
		r.big = 1;
	else if (memcmp(h, MAGIC, 8) != 0) {
		*why = "no PERFILE2 magic: not a perf.data file";
		return -ENOEXEC;
	}
	if (got < 16) {
		*why = "a header too short";
		return -ENOEXEC;
	}
	hsize = num(&r, h + 8, 8);
	if (hsize == PIPE_HEADER_SIZE) {
		info->pipe = 1;
		rc = read_events(&r, PIPE_HEADER_SIZE, UINT64_MAX);
		goto out;
	}
	if (hsize < FILE_HEADER_SIZE || (uint64_t)got < FILE_HEADER_SIZE) {
		*why = "a header too short";
		return -ENOEXEC;
	}
	data_off = num(&r, h + 40, 8);
	data_size = num(&r, h + 48, 8);
	for (idx = 0; idx < 4; idx++)
		feat[idx] = num(&r, h + 72 + 8 * idx, 8);
	if (data_off > r.fsize || data_size > r.fsize - data_off) {
		*why = "a data section past the end of the file";
		return -ENOEXEC;
	}
	if (!(feat[0] & (1u << FEAT_BUILD_ID))) {
		rc = read_events(&r, data_off, data_off + data_size);
		goto out;
	}
	/* The feature sections' table follows the data; one entry per bit
	 * set, in bit order. */
	for (idx = 0, bit = 0; bit < FEAT_BUILD_ID; bit++)
		idx += (feat[0] >> bit) & 1;
	feat_off = data_off + data_size + 16u * idx;
	if ((got = readat(fd, sec, sizeof(sec), feat_off)) < 0)
		return (int)got;
	if (got != sizeof(sec)) {
		*why = "the feature table past the end of the file";
		return -ENOEXEC;
	}
	rc = read_table(&r, num(&r, sec, 8), num(&r, sec + 8, 8));
out:
	if (rc == -ENOEXEC)
		*why = r.why;
	return rc;
}

/* A config value after "=": quotes, escapes and comments as git and perf
 * read them.  @return 0, or -ENAMETOOLONG. */
static int
config_value(const char *p, char *out, size_t outlen)
{
	size_t	n = 0, keep = 0;
	int	quoted = 0;
	char	c;

	p += strspn(p, " \t");
	for (; *p != '\0' && *p != '\n' && *p != '\r'; p++) {
		c = *p;
		if (!quoted && (c == '#' || c == ';'))
			break;
		if (c == '"') {
			quoted = !quoted;
			continue;
		}
		if (c == '\\' && p[1] != '\0') {
			c = *++p;
			c = c == 'n' ? '\n' : c == 't' ? '\t' :
			    c == 'b' ? '\b' : c;
		}
		if (n + 1 >= outlen)
			return -ENAMETOOLONG;
		out[n++] = c;
		/* Blanks outside quotes at the end are not part of it. */
		if (quoted || (c != ' ' && c != '\t'))
			keep = n;
	}
	out[keep] = '\0';
	return 0;
}

const char *
perfdata_name_check(const char *name)
{
	const char	*c, *e;
	size_t		 n;

	if (name[0] != '/')
		return "not an absolute path";
	if (strlen(name) > PERFDATA_NAME_MAX)
		return "a path longer than perf's cache takes here";
	for (c = name + 1; ; c = e + 1) {
		e = strchr(c, '/');
		n = e != NULL ? (size_t)(e - c) : strlen(c);
		if (n == 0)
			return "a path with an empty component";
		if ((n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return "a path with a . or .. component, which would "
			    "lead out of perf's cache";
		if (n > 255)
			return "a path with a component over 255 bytes";
		if (c == name + 1 && n == 9 && memcmp(c, ".build-id", 9) == 0)
			return "a path inside perf's own .build-id index";
		if (e == NULL)
			return NULL;
	}
}

int
perfdata_config_buildid_dir(FILE *fp, char *out, size_t outlen)
{
	char	 line[4096], section[64] = "", key[64], *p;
	size_t	 n;
	int	 found = 0, skipping = 0, whole, rc;

	while (fgets(line, sizeof(line), fp) != NULL) {
		n = strlen(line);
		whole = (n > 0 && line[n - 1] == '\n') || feof(fp);
		if (skipping || !whole) {
			skipping = !whole;	/* overlong: drop to its end */
			continue;
		}
		p = line + strspn(line, " \t");
		if (*p == '[') {
			/* "[name]"; "[name "sub"]" is another section. */
			for (n = 0, p++; *p != ']' && *p != '\0'; p++) {
				if (n + 1 < sizeof(section))
					section[n++] = (char)(*p >= 'A' &&
					    *p <= 'Z' ? *p + 32 : *p);
			}
			section[n] = '\0';
			if (*p != ']')
				section[0] = '\0';
			else
				p++;
			p += strspn(p, " \t");
		}
		for (n = 0; (*p >= 'a' && *p <= 'z') || (*p >= 'A' &&
		    *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-'; p++)
			if (n + 1 < sizeof(key))
				key[n++] = (char)(*p >= 'A' && *p <= 'Z' ?
				    *p + 32 : *p);
		key[n] = '\0';
		p += strspn(p, " \t");
		if (n == 0 || *p != '=' || strcmp(section, "buildid") != 0 ||
		    strcmp(key, "dir") != 0)
			continue;
		if ((rc = config_value(p + 1, out, outlen)) < 0)
			return rc;
		found = 1;
	}
	return found;
}
