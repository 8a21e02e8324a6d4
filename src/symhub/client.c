/*
 * client: plan, ask, send, report.  See client.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "base/clock.h"
#include "base/hex.h"
#include "base/strmap.h"
#include "cli.h"
#include "client.h"
#include "common/elfinfo.h"
#include "common/kind.h"
#include "common/srcbundle.h"
#include "common/webapi.h"
#include "xfer.h"

#define BIG_FILE	(1024 * 1024)	/* progress bar above this size */
#define IDHEX_MAX	(2 * ELFINFO_BUILDID_MAX + 1)
#define URL_MAX		4096	/* the hub's URL, without /buildid/... */

enum phase { P_IDLE, P_HEAD, P_PUT };

struct item {
	struct client		*c;
	char			*path;
	enum cache_kind		 kind;	/* DEBUGINFO or EXECUTABLE */
	char			 id[IDHEX_MAX];
	char			 fileid[33];	/* "" when none is sent */
	uint32_t		 quality;	/* of the local file */
	size_t			 seq;		/* order of discovery */
	int			 dup;		/* a better file has the key */

	enum phase		 phase;
	CURL			*easy;
	struct curl_slist	*hdrs;
	int			 fd;		/* the body, during a PUT */
	int			 bfd;		/* BUNDLE: the bundle made, or -1 */
	int			 read_errno;
	int			 bar;		/* shown in the progress bar */
	curl_off_t		 size, sent;
	char			 squal[128];	/* the hub's X-Symhub-Quality */
	char			 body[512];	/* the hub's answer, cut */
	size_t			 bodylen;
	char			 err[CURL_ERROR_SIZE];
};

struct client {
	char			*url;		/* no trailing '/' */
	char			*auth;		/* the Authorization header */
	struct client_opts	 o;
	struct client_counts	 counts;
	struct item		**items;
	size_t			 n, cap;
	CURLM			*multi;
	int			 curl_init;
	int			 drawn;		/* a progress line is on err */
	char			 last_line[160];
	int64_t			 last_draw;	/* clock_ms() */
	size_t			 first_running;	/* items not BUNDLE under way */
};

/* ---- reporting ---- */

static void
clear_bar(struct client *c)
{
	if (!c->drawn)
		return;
	fputs("\r\033[K", c->o.err);
	fflush(c->o.err);
	c->drawn = 0;
}

/* One line per (file, kind): "LABEL    KIND       ID  PATH  DETAIL". */
static void
report(struct client *c, int failure, const char *label, const char *kind,
    const char *id, const char *path, const char *detail)
{
	FILE *fp = failure ? c->o.err : c->o.out;

	if (!failure && c->o.quiet)
		return;
	clear_bar(c);
	fprintf(fp, "%-8s %-10s %s  %s%s%s\n", label, kind, id, path,
	    detail && *detail ? "  " : "", detail ? detail : "");
	fflush(fp);
}

static void
report_item(struct item *it, int failure, const char *label,
    const char *detail)
{
	report(it->c, failure, label, kind_name(it->kind), it->id, it->path,
	    detail);
}

static const char *
errstr(int rc)
{
	return rc == -ENOEXEC ? "not an ELF file, or truncated" :
	    strerror(-rc);
}

static void
human(char *buf, size_t len, curl_off_t n)
{
	if (n >= 1024 * 1024 * 1024)
		snprintf(buf, len, "%.1f GiB", (double)n / (1 << 30));
	else
		snprintf(buf, len, "%.1f MiB", (double)n / (1 << 20));
}

/* One line on err for every big transfer under way, redrawn at most ten
 * times a second. */
static void
draw_bar(struct client *c, int now)
{
	struct item	*first = NULL;
	curl_off_t	 total = 0, sent = 0;
	const char	*name;
	char		 bar[31], a[32], b[32], line[sizeof(c->last_line)];
	size_t		 i, k = 0, fill;
	int64_t		 ms = clock_ms();

	if (!now && c->drawn && ms - c->last_draw < 100)
		return;
	c->last_draw = ms;
	for (i = 0; i < c->n; i++) {
		if (c->items[i]->phase != P_PUT || !c->items[i]->bar)
			continue;
		if (first == NULL)
			first = c->items[i];
		total += c->items[i]->size;
		sent += c->items[i]->sent;
		k++;
	}
	if (first == NULL || total <= 0) {
		clear_bar(c);
		return;
	}
	fill = (size_t)(sent * 30 / total);
	memset(bar, '#', fill);
	memset(bar + fill, ' ', 30 - fill);
	bar[30] = '\0';
	human(a, sizeof(a), sent);
	human(b, sizeof(b), total);
	name = strrchr(first->path, '/') ? strrchr(first->path, '/') + 1 :
	    first->path;
	snprintf(line, sizeof(line), "%3d%% [%s] %s of %s  %.40s%s", (int)(sent
	    * 100 / total), bar, a, b, name, k > 1 ? " (and more)" : "");
	if (c->drawn && strcmp(line, c->last_line) == 0)
		return;
	memcpy(c->last_line, line, sizeof(line));
	fprintf(c->o.err, "\r\033[K%s", line);
	fflush(c->o.err);
	c->drawn = 1;
}

/* ---- planning ---- */

int
client_create(const struct client_opts *o, struct client **out)
{
	struct client	*c;
	const char	*p;
	size_t		 len;
	int		 rc = -ENOMEM;

	*out = NULL;
	if (o->url == NULL || (strncmp(o->url, "http://", 7) != 0 &&
	    strncmp(o->url, "https://", 8) != 0))
		return -EINVAL;
	if (strlen(o->url) > URL_MAX)
		return -ENAMETOOLONG;
	/* A control character would end the header and start another. */
	if (o->token != NULL) {
		if (*o->token == '\0')
			return -EINVAL;
		for (p = o->token; *p; p++)
			if ((unsigned char)*p <= ' ' || *p == 0x7f)
				return -EINVAL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return -ENOMEM;
	c->o = *o;
	c->o.url = c->o.token = NULL;
	if (c->o.jobs < 1)
		c->o.jobs = 1;
	if ((c->url = strdup(o->url)) == NULL)
		goto fail;
	len = strlen(c->url);
	while (len > 0 && c->url[len - 1] == '/')
		c->url[--len] = '\0';
	if (o->token != NULL) {
		len = strlen("Authorization: Bearer ") + strlen(o->token) + 1;
		if ((c->auth = malloc(len)) == NULL)
			goto fail;
		snprintf(c->auth, len, "Authorization: Bearer %s", o->token);
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		rc = -EIO;
		goto fail;
	}
	c->curl_init = 1;
	*out = c;
	return 0;
fail:
	client_free(c);
	return rc;
}

static void
item_free(struct item *it)
{
	if (it == NULL)
		return;
	if (it->easy != NULL) {
		if (it->phase != P_IDLE && it->c->multi != NULL)
			curl_multi_remove_handle(it->c->multi, it->easy);
		curl_easy_cleanup(it->easy);
	}
	cli_headers_free(it->hdrs);
	if (it->fd >= 0)
		close(it->fd);
	if (it->bfd >= 0)
		close(it->bfd);
	free(it->path);
	free(it);
}

void
client_free(struct client *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->n; i++)
		item_free(c->items[i]);
	free(c->items);
	if (c->multi != NULL)
		curl_multi_cleanup(c->multi);
	if (c->curl_init)
		curl_global_cleanup();
	if (c->auth != NULL) {
		explicit_bzero(c->auth, strlen(c->auth));
		free(c->auth);
	}
	free(c->url);
	free(c);
}

static int
push(struct client *c, const char *path, enum cache_kind kind,
    const struct elfinfo *ei, const char *fileid)
{
	struct item	*it, **n;

	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 16;
		if ((n = reallocarray(c->items, c->cap, sizeof(*n))) == NULL)
			return -ENOMEM;
		c->items = n;
	}
	if ((it = calloc(1, sizeof(*it))) == NULL)
		return -ENOMEM;
	if ((it->path = strdup(path)) == NULL) {
		free(it);
		return -ENOMEM;
	}
	it->c = c;
	it->kind = kind;
	hex_encode(ei->buildid, ei->buildid_len, it->id);
	snprintf(it->fileid, sizeof(it->fileid), "%s", fileid ? fileid : "");
	it->quality = ei->quality;
	it->seq = c->n;
	it->fd = -1;
	it->bfd = -1;
	c->items[c->n++] = it;
	return 0;
}

/*
 * Read a file's identity, and its FileID when it has code.
 * @return 0, or -errno / -ENOEXEC from open() and elfinfo.
 */
static int
inspect(const char *path, int nofollow, struct elfinfo *ei, char fileid[33])
{
	unsigned char	fid[16];
	int		fd, rc;

	fileid[0] = '\0';
	if ((fd = open(path, O_RDONLY | O_CLOEXEC |
	    (nofollow ? O_NOFOLLOW : 0))) < 0)
		return -errno;
	if ((rc = elfinfo_read(fd, ei)) == 0 && ei->is_executable) {
		if ((rc = elfinfo_fileid(fd, fid)) == 0)
			hex_encode(fid, sizeof(fid), fileid);
	}
	close(fd);
	return rc;
}

static int
has_symbols(uint32_t q)
{
	return (q & (ELFINFO_Q_DEBUG_INFO | ELFINFO_Q_SYMTAB)) != 0;
}

int
client_add_pair(struct client *c, const char *exe, const char *dbg,
    char *msg, size_t msglen)
{
	struct elfinfo	 ee, de;
	char		 efid[33], dfid[33], a[IDHEX_MAX], b[IDHEX_MAX];
	const char	*dpath = dbg ? dbg : exe;
	int		 rc;

	if ((rc = inspect(exe, 0, &ee, efid)) < 0) {
		snprintf(msg, msglen, "%s: %s", exe, errstr(rc));
		return rc;
	}
	if (ee.buildid_len == 0) {
		snprintf(msg, msglen, "%s: no GNU build-id note", exe);
		return -ENODATA;
	}
	if (!ee.is_executable) {
		snprintf(msg, msglen, "%s: no code: not an executable or "
		    "shared object (give a separate debug file with -d)", exe);
		return -ENOTSUP;
	}
	de = ee;
	if (dbg != NULL) {
		if ((rc = inspect(dbg, 0, &de, dfid)) < 0) {
			snprintf(msg, msglen, "%s: %s", dbg, errstr(rc));
			return rc;
		}
		hex_encode(ee.buildid, ee.buildid_len, a);
		hex_encode(de.buildid, de.buildid_len, b);
		if (de.buildid_len == 0) {
			snprintf(msg, msglen, "%s: no GNU build-id note "
			    "(%s has %s)", dbg, exe, a);
			return -ENODATA;
		}
		if (strcmp(a, b) != 0) {
			snprintf(msg, msglen, "build-ids differ: %s has %s, "
			    "%s has %s", exe, a, dbg, b);
			return -EXDEV;
		}
		if (!has_symbols(de.quality)) {
			snprintf(msg, msglen, "%s: no DWARF and no symbol "
			    "table: nothing to debug with", dbg);
			return -ENOTSUP;
		}
	}
	/* Both carry the deployed file's FileID: that is what a profiler
	 * sees on the host, whichever file it then asks for. */
	if (has_symbols(de.quality)) {
		if ((rc = push(c, dpath, CACHE_DEBUGINFO, &de, efid)) < 0 ||
		    (c->o.sources &&
		    (rc = push(c, dpath, CACHE_BUNDLE, &de, NULL)) < 0))
			goto nomem;
	} else {
		hex_encode(ee.buildid, ee.buildid_len, a);
		report(c, 0, "skipped", kind_name(CACHE_DEBUGINFO), a, exe,
		    "no DWARF and no symbol table (give the unstripped file "
		    "with -d)");
		c->counts.skipped++;
	}
	if ((rc = push(c, exe, CACHE_EXECUTABLE, &ee, efid)) < 0)
		goto nomem;
	return 0;
nomem:
	snprintf(msg, msglen, "%s", strerror(-rc));
	return rc;
}

static int
add_file(struct client *c, const char *path, int nofollow)
{
	struct elfinfo	ei;
	char		fid[33], id[IDHEX_MAX];
	int		rc, any = 0;

	if ((rc = inspect(path, nofollow, &ei, fid)) == -ENOEXEC) {
		report(c, 0, "skipped", "-", "-", path, "not an ELF file");
		c->counts.skipped++;
		return 0;
	}
	if (rc < 0) {
		report(c, 1, "failed", "-", "-", path, strerror(-rc));
		c->counts.failed++;
		return 0;
	}
	if (ei.buildid_len == 0) {
		report(c, 0, "skipped", "-", "-", path, "no GNU build-id note");
		c->counts.skipped++;
		return 0;
	}
	/* Without -e there is no telling which file was deployed: a file
	 * with code sends its own FileID, a debug file none. */
	if (has_symbols(ei.quality)) {
		if ((rc = push(c, path, CACHE_DEBUGINFO, &ei, fid)) < 0 ||
		    (c->o.sources &&
		    (rc = push(c, path, CACHE_BUNDLE, &ei, NULL)) < 0))
			return rc;
		any = 1;
	}
	if (ei.is_executable) {
		if ((rc = push(c, path, CACHE_EXECUTABLE, &ei, fid)) < 0)
			return rc;
		any = 1;
	}
	if (!any) {
		hex_encode(ei.buildid, ei.buildid_len, id);
		report(c, 0, "skipped", "-", id, path, "no code, no DWARF and "
		    "no symbol table");
		c->counts.skipped++;
	}
	return 0;
}

static int
walk_file(void *ctx, const char *path)
{
	return add_file(ctx, path, 1);
}

static void
walk_fail(void *ctx, const char *path, int errnum)
{
	struct client *c = ctx;

	report(c, 1, "failed", "-", "-", path, strerror(errnum));
	c->counts.failed++;
}

int
client_add_path(struct client *c, const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		report(c, 1, "failed", "-", "-", path, strerror(errno));
		c->counts.failed++;
		return 0;
	}
	if (S_ISDIR(st.st_mode))
		return cli_walk(path, walk_file, walk_fail, c);
	if (S_ISREG(st.st_mode))
		return add_file(c, path, 0);
	report(c, 0, "skipped", "-", "-", path, "not a regular file");
	c->counts.skipped++;
	return 0;
}

/* Best first within a key, then first found. */
static int
cmp_items(const void *a, const void *b)
{
	const struct item	*x = *(struct item *const *)a;
	const struct item	*y = *(struct item *const *)b;
	unsigned		 sx, sy;
	int			 r;

	if ((r = strcmp(x->id, y->id)) != 0)
		return r;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	sx = elfinfo_score(x->quality);
	sy = elfinfo_score(y->quality);
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Two PUTs for one key would race on the hub; keep the best file. */
static int
dedup(struct client *c)
{
	struct item	**v, *best = NULL;
	char		  detail[4200];
	size_t		  i;

	if (c->n < 2)
		return 0;
	if ((v = malloc(c->n * sizeof(*v))) == NULL)
		return -ENOMEM;
	memcpy(v, c->items, c->n * sizeof(*v));
	qsort(v, c->n, sizeof(*v), cmp_items);
	for (i = 0; i < c->n; i++) {
		if (best == NULL || strcmp(best->id, v[i]->id) != 0 ||
		    best->kind != v[i]->kind) {
			best = v[i];
			continue;
		}
		v[i]->dup = 1;
		/* The same file named twice is no news. */
		if (strcmp(best->path, v[i]->path) == 0)
			continue;
		snprintf(detail, sizeof(detail), "duplicate of %s", best->path);
		report_item(v[i], 0, "skipped", detail);
		c->counts.skipped++;
	}
	free(v);
	return 0;
}

/* ---- transfers ---- */

static size_t
on_header(char *buf, size_t size, size_t n, void *arg)
{
	struct item	*it = arg;
	size_t		 len = size * n, name = strlen("X-Symhub-Quality:"), v;

	/* A new status line (after a "100 Continue"): forget the last. */
	if (len >= 5 && strncmp(buf, "HTTP/", 5) == 0)
		it->squal[0] = '\0';
	else if (len > name && strncasecmp(buf, "X-Symhub-Quality:",
	    name) == 0) {
		buf += name;
		len -= name;
		while (len > 0 && (*buf == ' ' || *buf == '\t'))
			buf++, len--;
		while (len > 0 && (buf[len - 1] == '\r' ||
		    buf[len - 1] == '\n' || buf[len - 1] == ' '))
			len--;
		v = len < sizeof(it->squal) - 1 ? len : sizeof(it->squal) - 1;
		memcpy(it->squal, buf, v);
		it->squal[v] = '\0';
	}
	return size * n;
}

static size_t
on_body(char *buf, size_t size, size_t n, void *arg)
{
	struct item	*it = arg;
	size_t		 len = size * n, room;

	room = sizeof(it->body) - 1 - it->bodylen;
	if (len < room)
		room = len;
	memcpy(it->body + it->bodylen, buf, room);
	it->bodylen += room;
	it->body[it->bodylen] = '\0';
	return len;
}

static size_t
on_read(char *buf, size_t size, size_t n, void *arg)
{
	struct item	*it = arg;
	ssize_t		 r;

	do
		r = read(it->fd, buf, size * n);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		it->read_errno = errno;
		return CURL_READFUNC_ABORT;
	}
	return (size_t)r;
}

static int
on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow,
    curl_off_t ultotal, curl_off_t ulnow)
{
	struct item *it = arg;

	it->sent = ulnow;
	draw_bar(it->c, 0);
	return 0;
}

/* The options every request of an item shares. */
static int
prepare(struct item *it, const char *url)
{
	struct client		*c = it->c;
	struct curl_slist	*l;

	if (it->easy == NULL && (it->easy = curl_easy_init()) == NULL)
		return -ENOMEM;
	curl_easy_reset(it->easy);
	cli_headers_free(it->hdrs);
	it->hdrs = NULL;
	it->squal[0] = '\0';
	it->body[0] = '\0';
	it->bodylen = 0;
	it->err[0] = '\0';
	if (c->auth != NULL) {
		/* The token travels only in this header, to this URL: no
		 * redirects are followed. */
		if ((l = curl_slist_append(it->hdrs, c->auth)) == NULL)
			return -ENOMEM;
		it->hdrs = l;
	}
	/* Private per request (symhubd(8), ACCESS): every request says
	 * so, the bundle's too. */
	if (c->o.private) {
		if ((l = curl_slist_append(it->hdrs, "X-Symhub-Private: 1")) ==
		    NULL)
			return -ENOMEM;
		it->hdrs = l;
	}
	curl_easy_setopt(it->easy, CURLOPT_URL, url);
	curl_easy_setopt(it->easy, CURLOPT_PRIVATE, it);
	curl_easy_setopt(it->easy, CURLOPT_USERAGENT,
	    "symhub/" PACKAGE_VERSION);
	curl_easy_setopt(it->easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(it->easy, CURLOPT_HEADERDATA, it);
	curl_easy_setopt(it->easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(it->easy, CURLOPT_WRITEDATA, it);
	curl_easy_setopt(it->easy, CURLOPT_ERRORBUFFER, it->err);
	curl_easy_setopt(it->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(it->easy, CURLOPT_CONNECTTIMEOUT, 30L);
	/* No total timeout (files may be large), but a stalled transfer,
	 * or a hub that never answers, is given up after two minutes. */
	curl_easy_setopt(it->easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(it->easy, CURLOPT_LOW_SPEED_TIME, 120L);
	return 0;
}

static int
start_head(struct item *it)
{
	char	url[URL_MAX + 200];
	int	rc;

	snprintf(url, sizeof(url), "%s/buildid/%s/%s", it->c->url, it->id,
	    kind_name(it->kind));
	if ((rc = prepare(it, url)) < 0)
		return rc;
	curl_easy_setopt(it->easy, CURLOPT_NOBODY, 1L);
	curl_easy_setopt(it->easy, CURLOPT_HTTPHEADER, it->hdrs);
	if (curl_multi_add_handle(it->c->multi, it->easy) != CURLM_OK)
		return -EIO;
	it->phase = P_HEAD;
	return 0;
}

static int
start_put(struct item *it)
{
	struct client		*c = it->c;
	struct curl_slist	*l;
	struct stat		 st;
	char			 url[URL_MAX + 200], hdr[64];
	int			 rc;

	snprintf(url, sizeof(url), "%s/buildid/%s/%s%s", c->url, it->id,
	    kind_name(it->kind), c->o.force ? "?force=1" : "");
	if ((rc = prepare(it, url)) < 0)
		return rc;
	if (it->fileid[0] != '\0') {
		snprintf(hdr, sizeof(hdr), "X-Symhub-FileID: %s", it->fileid);
		if ((l = curl_slist_append(it->hdrs, hdr)) == NULL)
			return -ENOMEM;
		it->hdrs = l;
	}
	if ((l = curl_slist_append(it->hdrs,
	    "Content-Type: application/octet-stream")) == NULL)
		return -ENOMEM;
	it->hdrs = l;
	if (it->kind == CACHE_BUNDLE) {
		if ((it->fd = dup(it->bfd)) < 0)
			return -errno;
		if (lseek(it->fd, 0, SEEK_SET) < 0)
			return -errno;
	} else if ((it->fd = open(it->path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	if (fstat(it->fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	it->size = (curl_off_t)st.st_size;
	it->sent = 0;
	it->read_errno = 0;
	/*
	 * No "Expect: 100-continue": the HEAD before already found the hub,
	 * and with it libcurl waited its full 1 s timeout for a "100
	 * Continue" that libmicrohttpd did not send on this request (curl(1)
	 * gets one at once; not understood yet), which cost 1.3 s per big
	 * file.  A refused upload is still answered at the first byte.
	 */
	if ((l = curl_slist_append(it->hdrs, "Expect:")) == NULL)
		return -ENOMEM;
	it->hdrs = l;
	curl_easy_setopt(it->easy, CURLOPT_HTTPHEADER, it->hdrs);
	curl_easy_setopt(it->easy, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(it->easy, CURLOPT_READFUNCTION, on_read);
	curl_easy_setopt(it->easy, CURLOPT_READDATA, it);
	curl_easy_setopt(it->easy, CURLOPT_INFILESIZE_LARGE, it->size);
	/* Fewer, larger reads and sends than libcurl's 64 KiB default. */
	curl_easy_setopt(it->easy, CURLOPT_UPLOAD_BUFFERSIZE, 1024L * 1024);
	it->bar = c->o.progress && !c->o.quiet && it->size > BIG_FILE;
	if (it->bar) {
		curl_easy_setopt(it->easy, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(it->easy, CURLOPT_XFERINFOFUNCTION,
		    on_progress);
		curl_easy_setopt(it->easy, CURLOPT_XFERINFODATA, it);
	}
	if (curl_multi_add_handle(c->multi, it->easy) != CURLM_OK)
		return -EIO;
	it->phase = P_PUT;
	return 0;
}

/* The hub's one-line answer, or "HTTP CODE". */
static const char *
answer(struct item *it, long code, char *buf, size_t len)
{
	size_t n = strcspn(it->body, "\r\n");

	if (n > 0)
		snprintf(buf, len, "%.*s", (int)n, it->body);
	else
		snprintf(buf, len, "HTTP %ld", code);
	return buf;
}

/* Local failure before or outside a transfer. */
static void
fail_item(struct item *it, const char *what, int rc)
{
	char buf[600];

	snprintf(buf, sizeof(buf), "%s: %s", what, strerror(-rc));
	report_item(it, 1, "failed", buf);
	it->c->counts.failed++;
}

/* After the HEAD, or straight away: send, or say what would be sent. */
static int
send_or_say(struct item *it, long code)
{
	char	buf[300], lq[96];
	int	rc;

	if (it->c->o.dry_run) {
		elfinfo_quality_str(it->quality, lq, sizeof(lq));
		if (it->c->o.force)
			snprintf(buf, sizeof(buf), "%s (forced)", lq);
		else if (code == 200)
			snprintf(buf, sizeof(buf), "%s (the hub has %s)", lq,
			    it->squal[0] ? it->squal : "none");
		else
			snprintf(buf, sizeof(buf), "%s", lq);
		report_item(it, 0, "would", buf);
		it->c->counts.would++;
		return 0;
	}
	if ((rc = start_put(it)) < 0) {
		fail_item(it, rc == -EIO || rc == -ENOMEM ? "cannot send" :
		    "cannot open", rc);
		return 0;
	}
	return 1;
}

/*
 * A transfer of it ended; it was removed from the multi handle.
 * @return 1 when a PUT has been started for it, 0 when it is done.
 */
static int
finished(struct item *it, CURLcode res)
{
	struct client	*c = it->c;
	char		 buf[700], msg[520];
	long		 code = 0;
	enum phase	 phase = it->phase;

	it->phase = P_IDLE;
	curl_easy_getinfo(it->easy, CURLINFO_RESPONSE_CODE, &code);
	if (phase == P_PUT) {
		close(it->fd);
		it->fd = -1;
		if (it->bar)
			draw_bar(c, 1);
	}
	if (res != CURLE_OK) {
		if (it->read_errno)
			snprintf(buf, sizeof(buf), "reading the file: %s",
			    strerror(it->read_errno));
		else
			snprintf(buf, sizeof(buf), "%s%s",
			    phase == P_HEAD ? "asking the hub: " : "",
			    it->err[0] ? it->err : curl_easy_strerror(res));
		report_item(it, 1, "failed", buf);
		c->counts.failed++;
		return 0;
	}
	if (phase == P_HEAD) {
		/* Anything but a definite 200 (404, or a hub without HEAD)
		 * leaves the decision to the PUT. */
		if (code == 200 && elfinfo_score(elfinfo_quality_parse(it->squal)) >=
		    elfinfo_score(it->quality)) {
			snprintf(buf, sizeof(buf), "already there (%s)",
			    it->squal[0] ? it->squal : "none");
			report_item(it, 0, "skipped", buf);
			c->counts.skipped++;
			return 0;
		}
		return send_or_say(it, code);
	}
	answer(it, code, msg, sizeof(msg));
	if (code == 201) {
		/* A bundle's answer says what was kept and dropped. */
		report_item(it, 0, "stored", it->kind == CACHE_BUNDLE ? msg :
		    NULL);
		c->counts.stored++;
	} else if (code == 200 &&
	    strncmp(it->body, "already stored", 14) == 0) {
		report_item(it, 0, "same", NULL);
		c->counts.same++;
	} else if (code == 200) {
		report_item(it, 0, "replaced", it->kind == CACHE_BUNDLE ? msg :
		    NULL);
		c->counts.replaced++;
	} else if (code == 409) {
		/* The hub keeps a copy as good or better: the goal of the
		 * run is met, and re-runs must succeed. */
		report_item(it, 0, "kept", msg);
		c->counts.skipped++;
	} else {
		snprintf(buf, sizeof(buf), "%ld %s", code, msg);
		report_item(it, 1, "failed", buf);
		c->counts.failed++;
	}
	return 0;
}

/* ---- source bundles ---- */

#define SRC_FILE_MAX	((size_t)256 << 20)	/* bytes of one source */

/* pack()'s state. */
struct pack {
	struct item		*it;
	struct srcbundle_writer	*w;
	struct strmap		 seen;
	unsigned		 files, unread;
	uint64_t		 bytes;
};

static int
write_fd(void *ctx, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;
	int		 fd = *(int *)ctx;

	while (len > 0) {
		if ((n = write(fd, p, len)) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read a whole regular file of at most SRC_FILE_MAX bytes, and its
 * mtime.  @return 0 with *out (the caller's), or -errno (-EFBIG, -EINVAL:
 * not regular). */
static int
slurp(const char *path, unsigned char **out, size_t *len, int64_t *mtime)
{
	struct stat	 st;
	unsigned char	*buf = NULL;
	size_t		 got = 0;
	ssize_t		 n;
	int		 fd, rc = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		rc = -errno;
	else if (!S_ISREG(st.st_mode))
		rc = -EINVAL;
	else if ((uint64_t)st.st_size > SRC_FILE_MAX)
		rc = -EFBIG;
	else if ((buf = malloc((size_t)st.st_size + 1)) == NULL)
		rc = -ENOMEM;
	while (rc == 0 && got < (size_t)st.st_size) {
		if ((n = read(fd, buf + got, (size_t)st.st_size - got)) < 0 &&
		    errno != EINTR)
			rc = -errno;
		else if (n == 0)
			break;		/* shrank meanwhile: what is there */
		else if (n > 0)
			got += (size_t)n;
	}
	close(fd);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	*out = buf;
	*len = got;
	*mtime = st.st_mtim.tv_sec;
	return 0;
}

/* One file the DWARF names: into the bundle, or reported unread. */
static int
pack_one(void *ctx, const char *name)
{
	struct pack	*p = ctx;
	unsigned char	*data;
	size_t		 len, v;
	int64_t		 mtime;
	char		*canon, *base;
	int		 q, rc;

	/* A relative name (a relative compilation directory: Debian's
	 * "./csu/version.c") is read under the current directory, as gdb
	 * reads it, and is a member under its name rooted at "/", the name
	 * the hub and its clients give it. */
	if ((canon = webapi_canon_source(name)) == NULL)
		return errno == ENOMEM ? -ENOMEM : 0;
	rc = 0;
	/* "<built-in>" joined with its unit's directory: a name of the
	 * compiler's, no file. */
	if ((base = strrchr(canon, '/')) != NULL && base[1] == '<' &&
	    canon[strlen(canon) - 1] == '>')
		goto out;
	if (!srcbundle_name_ok(canon) || strmap_get(&p->seen, canon, &v))
		goto out;
	if ((rc = strmap_put(&p->seen, canon, 1)) < 0)
		goto out;
	/* Read under the name the compiler wrote, as a debugger would. */
	if ((rc = slurp(name, &data, &len, &mtime)) < 0) {
		/* Listed with --quiet too: the summary counts these lines. */
		q = p->it->c->o.quiet;
		p->it->c->o.quiet = 0;
		report(p->it->c, 0, "unread", kind_name(CACHE_BUNDLE),
		    p->it->id, name[0] == '/' ? canon : name, rc == -EINVAL ? "not a regular file" :
		    rc == -EFBIG ? "larger than 256 MiB" : strerror(-rc));
		p->it->c->o.quiet = q;
		p->unread++;
		rc = rc == -ENOMEM ? rc : 0;
		goto out;
	}
	/* Its mtime goes too: a debugger warns of a source newer than the
	 * executable, and the hub serves the member with this one. */
	rc = srcbundle_write_add(p->w, canon, mtime, data, len);
	free(data);
	if (rc == 0) {
		p->files++;
		p->bytes += len;
	}
out:
	free(canon);
	return rc;
}

/*
 * Make it's bundle (it->bfd, an unlinked file under $TMPDIR) from the
 * debuginfo at it->path.  @return 1 when it has files to send, 0 when
 * there is nothing (reported), -errno.
 */
static int
pack(struct item *it)
{
	struct client	*c = it->c;
	struct pack	 p;
	const char	*tmp;
	char		 path[4096], detail[160];
	int		 fd = -1, rc;

	memset(&p, 0, sizeof(p));
	p.it = it;
	if ((tmp = getenv("TMPDIR")) == NULL || *tmp == '\0')
		tmp = "/tmp";
	if ((size_t)snprintf(path, sizeof(path), "%s/symhub-sources.XXXXXX",
	    tmp) >= sizeof(path))
		return -ENAMETOOLONG;
	if ((it->bfd = mkstemp(path)) < 0)
		return -errno;
	(void)unlink(path);
	if ((rc = srcbundle_write_open(write_fd, &it->bfd, &p.w)) < 0)
		goto out;
	if ((fd = open(it->path, O_RDONLY | O_CLOEXEC)) < 0) {
		rc = -errno;
		goto out;
	}
	rc = elfinfo_sources(fd, pack_one, &p);
	close(fd);
	if (rc == 0)
		rc = srcbundle_write_close(p.w, 0);
	else
		srcbundle_write_close(p.w, 1);
	p.w = NULL;
	c->counts.src_files += p.files;
	c->counts.src_unread += p.unread;
	if (rc == 0 && p.files == 0) {
		snprintf(detail, sizeof(detail), "no source file to send "
		    "(%u named, unread)", p.unread);
		report_item(it, 0, "skipped", detail);
		c->counts.skipped++;
	}
	if (rc == 0 && p.files > 0) {
		off_t end = lseek(it->bfd, 0, SEEK_END);

		c->counts.src_bytes += end > 0 ? (unsigned long long)end : 0;
	}
out:
	srcbundle_write_close(p.w, 1);
	strmap_free(&p.seen);
	return rc < 0 ? rc : p.files > 0;
}

/* Begin a bundle: made now, sent without asking (the hub answers 200
 * for one it has). */
static int
begin_bundle(struct item *it)
{
	int rc;

	if ((rc = pack(it)) < 0) {
		fail_item(it, "cannot make the bundle", rc);
		return 0;
	}
	if (rc == 0)
		return 0;
	return send_or_say(it, 0);
}

/* Begin an item's first request.  @return 1 when one is under way. */
static int
begin(struct item *it)
{
	int rc;

	if (it->kind == CACHE_BUNDLE)
		return begin_bundle(it);

	/* With --force the hub's copy does not matter: no need to ask. */
	if (it->c->o.force)
		return send_or_say(it, 0);
	if ((rc = start_head(it)) < 0) {
		fail_item(it, "cannot ask the hub", rc);
		return 0;
	}
	return 1;
}

/* Drop an item's handle and headers once it is done: few stay open. */
static void
retire(struct item *it)
{
	if (it->easy != NULL) {
		curl_easy_cleanup(it->easy);
		it->easy = NULL;
	}
	cli_headers_free(it->hdrs);
	it->hdrs = NULL;
	if (it->fd >= 0) {
		close(it->fd);
		it->fd = -1;
	}
}

/* client_run()'s place in the items, for its xfer_ops. */
struct run {
	struct client	*c;
	size_t		 next, bnext;	/* bnext: of the bundles */
};

/* Begin the next item not a duplicate; one that cannot begin is retired. */
static int
run_start(void *ctx, CURLM *multi)
{
	struct run	*r = ctx;
	struct item	*it;

	(void)multi;	/* it->c->multi */
	/* Bundles after everything else is done: the hub takes one only
	 * for a debuginfo it has. */
	while (r->next < r->c->n) {
		it = r->c->items[r->next++];
		if (it->dup || it->kind == CACHE_BUNDLE)
			continue;
		if (begin(it)) {
			r->c->first_running++;
			return 1;
		}
		retire(it);
	}
	if (r->c->first_running > 0)
		return 0;
	while (r->bnext < r->c->n) {
		it = r->c->items[r->bnext++];
		if (it->dup || it->kind != CACHE_BUNDLE)
			continue;
		if (begin(it))
			return 1;
		retire(it);
	}
	return 0;
}

static int
run_done(void *ctx, CURLM *multi, char *priv, CURLcode res)
{
	struct item *it = (struct item *)(void *)priv;

	(void)ctx;
	(void)multi;
	if (finished(it, res))
		return 1;
	if (it->kind != CACHE_BUNDLE)
		it->c->first_running--;
	retire(it);
	return 0;
}

int
client_run(struct client *c, struct client_counts *counts)
{
	static const struct xfer_ops ops = { run_start, run_done };
	struct run	r = { c, 0, 0 };
	int		rc;

	if ((rc = dedup(c)) < 0)
		goto out;
	if (c->multi == NULL && (c->multi = curl_multi_init()) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	/* Each transfer on its own connection, reused from one to the
	 * next: -j is the number of connections to the hub. */
	curl_multi_setopt(c->multi, CURLMOPT_MAX_HOST_CONNECTIONS,
	    (long)c->o.jobs);
	rc = xfer_run(c->multi, (size_t)c->o.jobs, 200, &ops, &r);
out:
	clear_bar(c);
	*counts = c->counts;
	return rc;
}
