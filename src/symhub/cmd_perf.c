/*
 * cmd_perf: `symhub perf`.  The build-ids come from the profile itself
 * (perfdata.c); the files go where perf looks first, its build-id cache:
 *
 *   DIR/.build-id/XX/REST -> ../../PATH/ID     (a relative symbolic link)
 *   DIR/PATH/ID/debug                          the debuginfo
 *   DIR/PATH/ID/elf                            the executable
 *
 * which is the layout `perf record` and `perf buildid-cache` make.  When
 * perf made the link already, the files go into its target.  Nothing
 * that is there is replaced: a file is downloaded unnamed (O_TMPFILE),
 * checked to be ELF with the module's build-id, and only then given its
 * name with linkat(), which fails rather than replace.  A download that
 * fails leaves no file and no directory behind.
 *
 * The executable is fetched only where perf would find none: not in the
 * cache and not at its recorded path with the same build-id (a profile
 * from another machine); perf needs it to disassemble.
 *
 * A profile is foreign input: its module names are checked to stay below
 * DIR (perfdata_name_check), every directory written is checked, after
 * symbolic links, to lie in DIR before anything is made there, and names
 * are printed escaped (text_put).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "base/buf.h"
#include "base/hex.h"
#include "base/strmap.h"
#include "cli.h"
#include "cmd_perf.h"
#include "common/elfinfo.h"
#include "common/kind.h"
#include "perfdata.h"
#include "text.h"
#include "xfer.h"

#define IDHEX_MAX	(2 * PERFDATA_BUILDID_MAX + 1)
#define URLS_MAX	16
#define DETAIL_MAX	(CURL_ERROR_SIZE + 512)

struct mod {
	char		 id[IDHEX_MAX];
	char		*name;		/* the path perf recorded */
	char		*dir;		/* where the files go */
	char		*link;		/* DIR/.build-id/XX/REST */
	char		*target;	/* what link should say, when it is
					 * still to be made; else NULL */
};

enum result { R_NONE, R_FETCHED, R_PRESENT, R_MISSING, R_FAILED };

struct item {
	struct mod	*m;
	enum cache_kind	 kind;
	const char	*file;		/* "debug" or "elf" */
	size_t		 url;		/* which hub is being asked */
	int		 fd;		/* the download; -1: none */
	char		 tmp[PATH_MAX];	/* its name when O_TMPFILE was not
					 * to be had; "" otherwise */
	int		 werr;		/* write(2)'s errno */
	int		 failed;	/* a hub failed (not 404) */
	char		 detail[DETAIL_MAX];	/* the first failure */
	char		 cerr[CURL_ERROR_SIZE];	/* libcurl's word on it */
	CURL		*easy;
};

struct perf {
	const char	*urls[URLS_MAX];
	size_t		 nurls;
	char		 dir[PATH_MAX];	/* perf's build-id cache */
	char		 real[PATH_MAX];	/* dir, its links resolved;
					 * "" until made */
	const char	*dir_from;	/* where that came from */
	int		 jobs;
	int		 quiet;
	int		 list;		/* --list: print, fetch nothing */
	int		 bar;
	struct curl_slist *hdrs;	/* the token's header, or NULL */
	struct mod	*mods;
	size_t		 nmods, capmods;
	struct strmap	 seen;		/* id -> index in mods */
	struct item	*items;
	size_t		 n, cap;
	unsigned	 fetched, present, missing, failed, skipped, done;
	curl_off_t	 bytes;
};

static const char help[] =
"usage: symhub perf [OPTION...] [PERF.DATA]\n"
"Put the debug files of every module a perf.data profile names (default\n"
"./perf.data) into perf's build-id cache, fetched from a hub, so that perf\n"
"report, perf script and perf annotate show function names and lines\n"
"also where perf was built without debuginfod.  Files already in the\n"
"cache are left as they are and not fetched again.\n"
"\n"
"      --url URL          a hub, e.g. http://hub:8002; more than one are\n"
"                         asked in turn (default: $DEBUGINFOD_URLS)\n"
"      --token-file FILE  a read token, from the first line of FILE, for\n"
"                         hubs with --read-auth (default: $SYMHUB_TOKEN)\n"
"      --buildid-dir DIR  perf's build-id cache (default: $PERF_BUILDID_DIR,\n"
"                         else buildid.dir of perf's config, else ~/.debug)\n"
"  -i, --input FILE       the profile (or give it as the last argument)\n"
"  -l, --list             print the build-ids and names the profile holds,\n"
"                         one per line as perf buildid-list does; fetch\n"
"                         nothing\n"
"  -j, --jobs N           downloads at once (default 8, 1 to 64)\n"
"  -q, --quiet            print only what is missing or failed, and the\n"
"                         summary\n"
"  -h, --help             this text\n"
"\n"
"One line per module and file: fetched, present (in the cache already),\n"
"missing (no hub has it), failed (no definite answer, or a bad file), and\n"
"skipped for the kernel and [vdso], which perf finds by itself.  Exit\n"
"status: 0 when nothing is missing or failed, 1 otherwise or when the\n"
"profile cannot be read, 2 for usage.\n";

static void
line(struct perf *p, FILE *fp, const char *label, const char *kind,
    const char *id, const char *name, const char *detail)
{
	cli_line(fp, p->bar, label, kind, id, name, detail);
}

static void
progress(struct perf *p)
{
	if (p->bar)
		cli_bar(p->done, p->n, "%.1f MB",
		    (double)p->bytes / 1e6);
}

static int
env_true(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' && strcmp(v, "0") != 0 &&
	    strcasecmp(v, "false") != 0 && strcasecmp(v, "no") != 0;
}

/* buildid.dir from one config file.  @return 1 when set. */
static int
config_file(struct perf *p, const char *path, const char *from)
{
	FILE	*fp;
	char	 dir[PATH_MAX];
	int	 rc;

	if ((fp = fopen(path, "re")) == NULL)
		return 0;
	rc = perfdata_config_buildid_dir(fp, dir, sizeof(dir));
	fclose(fp);
	if (rc <= 0 || dir[0] == '\0')
		return 0;
	snprintf(p->dir, sizeof(p->dir), "%s", dir);
	p->dir_from = from;
	return 1;
}

/*
 * perf's build-id cache, found as perf finds it: its --buildid-dir (ours),
 * $PERF_BUILDID_DIR (which perf sets for the commands it runs), the
 * buildid.dir setting ($PERF_CONFIG alone when set, else /etc/perfconfig
 * then ~/.perfconfig), else ~/.debug.
 */
static int
find_dir(struct perf *p, const char *opt)
{
	const char	*env, *home = getenv("HOME");
	char		 user[PATH_MAX];

	if (opt != NULL) {
		snprintf(p->dir, sizeof(p->dir), "%s", opt);
		p->dir_from = "--buildid-dir";
	} else if ((env = getenv("PERF_BUILDID_DIR")) != NULL && *env) {
		snprintf(p->dir, sizeof(p->dir), "%s", env);
		p->dir_from = "$PERF_BUILDID_DIR";
	} else if ((env = getenv("PERF_CONFIG")) != NULL) {
		config_file(p, env, "buildid.dir in $PERF_CONFIG");
	} else {
		if (!env_true("PERF_CONFIG_NOSYSTEM"))
			config_file(p, "/etc/perfconfig",
			    "buildid.dir in /etc/perfconfig");
		if (!env_true("PERF_CONFIG_NOGLOBAL") && home != NULL &&
		    (size_t)snprintf(user, sizeof(user), "%s/.perfconfig",
		    home) < sizeof(user))
			config_file(p, user, "buildid.dir in ~/.perfconfig");
	}
	if (p->dir_from == NULL) {
		if (home == NULL || *home == '\0')
			return -ENOENT;
		snprintf(p->dir, sizeof(p->dir), "%s/.debug", home);
		p->dir_from = "the default";
	}
	while (strlen(p->dir) > 1 && p->dir[strlen(p->dir) - 1] == '/')
		p->dir[strlen(p->dir) - 1] = '\0';
	return strlen(p->dir) + 128 < sizeof(p->dir) ? 0 : -ENAMETOOLONG;
}

static char *
join(const char *a, const char *b, const char *c)
{
	char	*s;

	if (asprintf(&s, "%s%s%s", a, b, c != NULL ? c : "") < 0)
		return NULL;
	return s;
}

/* Does the file at path carry build-id idhex? */
static int
has_id(const char *path, const char *idhex)
{
	struct elfinfo	ei;
	struct stat	st;
	char		hex[2 * ELFINFO_BUILDID_MAX + 1];
	int		fd, ok = 0;

	/* path is the profile's word: a FIFO or a device there must not
	 * block us or be opened at all. */
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK |
	    O_NOCTTY)) < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    elfinfo_read(fd, &ei) == 0 && ei.buildid_len > 0) {
		hex_encode(ei.buildid, ei.buildid_len, hex);
		ok = strcmp(hex, idhex) == 0;
	}
	close(fd);
	return ok;
}

static int
add_item(struct perf *p, struct mod *m, enum cache_kind kind,
    const char *file)
{
	struct item *it;

	if (array_grow(&p->items, &p->cap, p->n + 1, sizeof(*p->items)) != 0)
		return -ENOMEM;
	it = &p->items[p->n++];
	memset(it, 0, sizeof(*it));
	it->m = m;
	it->kind = kind;
	it->file = file;
	it->fd = -1;
	return 0;
}

/*
 * Where perf looks for mod m's files, and which of them are to be
 * fetched.  A link perf made (to a directory, however named) is followed;
 * a plain directory at the link's place (as some tools make) is used as
 * it is.
 */
static int
plan(struct perf *p, struct mod *m)
{
	struct stat	 st;
	char		 tgt[PATH_MAX], *f;
	ssize_t		 n;
	int		 need_debug, need_elf, no_cached_elf, there;

	if (asprintf(&m->link, "%s/.build-id/%.2s/%s", p->dir, m->id,
	    m->id + 2) < 0)
		return -ENOMEM;
	there = lstat(m->link, &st) == 0;
	if (there && S_ISLNK(st.st_mode)) {
		if ((n = readlink(m->link, tgt, sizeof(tgt) - 1)) < 0)
			return -errno;
		tgt[n] = '\0';
		/* A relative target is relative to the link's folder. */
		if (tgt[0] == '/')
			m->dir = strdup(tgt);
		else if (asprintf(&m->dir, "%.*s/%s", (int)(strrchr(m->link,
		    '/') - m->link), m->link, tgt) < 0)
			m->dir = NULL;
	} else if (there && S_ISDIR(st.st_mode)) {
		m->dir = strdup(m->link);
	} else {
		m->dir = join(p->dir, m->name, "/");
		if (m->dir != NULL) {
			f = m->dir;
			m->dir = join(f, m->id, NULL);
			free(f);
		}
		/* ../../PATH/ID, from DIR/.build-id/XX/. */
		if (m->dir != NULL && asprintf(&m->target, "../..%s/%s",
		    m->name, m->id) < 0)
			m->target = NULL;
		if (m->target == NULL)
			return -ENOMEM;
	}
	if (m->dir == NULL)
		return -ENOMEM;
	if ((f = join(m->dir, "/debug", NULL)) == NULL)
		return -ENOMEM;
	need_debug = access(f, F_OK) != 0;
	free(f);
	if ((f = join(m->dir, "/elf", NULL)) == NULL)
		return -ENOMEM;
	no_cached_elf = access(f, F_OK) != 0;
	need_elf = no_cached_elf && !has_id(m->name, m->id);
	free(f);
	if (!need_debug && !p->quiet)
		line(p, stdout, "present", "debuginfo", m->id, m->name, NULL);
	if (!need_elf && !p->quiet)
		line(p, stdout, "present", "executable", m->id, m->name,
		    no_cached_elf ? "(at its path)" : NULL);
	p->present += !need_debug + !need_elf;
	if (need_debug && add_item(p, m, CACHE_DEBUGINFO, "debug") < 0)
		return -ENOMEM;
	if (need_elf && add_item(p, m, CACHE_EXECUTABLE, "elf") < 0)
		return -ENOMEM;
	return 0;
}

static int
one_module(void *ctx, const struct perfdata_module *pm)
{
	struct perf	*p = ctx;
	struct mod	*m;
	const char	*why;
	char		 hex[IDHEX_MAX], detail[160];
	size_t		 i;

	hex_encode(pm->id, pm->idlen, hex);
	if (strmap_get(&p->seen, hex, &i))
		return 0;	/* another process mapped it too */
	if (strmap_put(&p->seen, hex, p->nmods) != 0)
		return -ENOMEM;
	if (p->list) {
		/* As `perf buildid-list` prints them, but escaped. */
		printf("%s ", hex);
		text_put(stdout, pm->name);
		putchar('\n');
		return 0;
	}
	if (pm->kernel || pm->name[0] != '/') {
		/* The kernel, its modules, [vdso]: perf reads them from
		 * the running system or keeps them itself. */
		if (!p->quiet)
			line(p, stdout, "skipped", "-", hex, pm->name,
			    pm->kernel ? "the kernel's: left to perf" :
			    "not a file: left to perf");
		p->skipped++;
		return 0;
	}
	/* Refused, and the rest of the profile read on. */
	if ((why = perfdata_name_check(pm->name)) == NULL && pm->idlen < 2)
		why = "a build-id too short for perf's .build-id/XX/REST";
	if (why == NULL && strlen(p->dir) + strlen(pm->name) + 1 +
	    strlen(hex) + sizeof("/debug") > PATH_MAX)
		why = "a path longer than perf's cache takes here";
	if (why != NULL) {
		snprintf(detail, sizeof(detail), "refused: %s", why);
		line(p, stderr, "failed", "-", hex, pm->name, detail);
		p->failed++;
		return 0;
	}
	if (array_grow(&p->mods, &p->capmods, p->nmods + 1,
	    sizeof(*p->mods)) != 0)
		return -ENOMEM;
	m = &p->mods[p->nmods++];
	memset(m, 0, sizeof(*m));
	snprintf(m->id, sizeof(m->id), "%s", hex);
	if ((m->name = strdup(pm->name)) == NULL)
		return -ENOMEM;
	return 0;
}

/* Create dir and its missing parents.  @return the length of the part
 * that existed before (what undo() must keep), or -errno. */
static int
mkdirs(const char *dir)
{
	char	buf[PATH_MAX], *s, c;
	size_t	n = strlen(dir);
	int	had = (int)n;

	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, dir, n + 1);
	for (s = buf + 1; ; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		c = *s;
		*s = '\0';
		if (mkdir(buf, 0755) == 0) {
			if ((size_t)had == n)
				had = (int)(s - buf);
		} else if (errno != EEXIST)
			return -errno;
		*s = c;
		if (c == '\0')
			break;
	}
	/* Made nothing: all of it was there. */
	return (size_t)had == n ? (int)n : had;
}

/* Remove the empty directories mkdirs() made below its first keep bytes. */
static void
undo(const char *dir, int keep)
{
	char	buf[PATH_MAX], *s;
	size_t	n = strlen(dir);

	if (n >= sizeof(buf) || (size_t)keep >= n)
		return;
	memcpy(buf, dir, n + 1);
	while (strlen(buf) > (size_t)keep) {
		if (rmdir(buf) != 0)
			return;
		if ((s = strrchr(buf, '/')) == NULL)
			return;
		*s = '\0';
	}
}

/* An unnamed file in perf's cache for a download.  @return its fd or
 * -errno. */
static int
open_tmp(struct perf *p, struct item *it)
{
	mode_t	um;
	int	fd;

	it->tmp[0] = '\0';
	fd = open(p->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
	if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR &&
	    errno != EINVAL))
		return fd >= 0 ? fd : -errno;
	/* No O_TMPFILE here: a dot-name perf never looks at. */
	if ((size_t)snprintf(it->tmp, sizeof(it->tmp), "%s/.symhub-perf.XXXXXX",
	    p->dir) >= sizeof(it->tmp) ||
	    (fd = mkostemp(it->tmp, O_CLOEXEC)) < 0) {
		it->tmp[0] = '\0';
		return -errno;
	}
	um = umask(0);		/* as open() would have applied it */
	umask(um);
	(void)fchmod(fd, 0644 & ~um);
	return fd;
}

static void
drop_tmp(struct item *it)
{
	if (it->fd >= 0)
		close(it->fd);
	it->fd = -1;
	if (it->tmp[0] != '\0')
		unlink(it->tmp);
	it->tmp[0] = '\0';
}

static size_t
sink(char *ptr, size_t size, size_t nmemb, void *ctx)
{
	struct item	*it = ctx;
	size_t		 len = size * nmemb, off = 0;
	ssize_t		 k;

	while (off < len) {
		k = write(it->fd, ptr + off, len - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			it->werr = errno;
			return 0;	/* libcurl stops: CURLE_WRITE_ERROR */
		}
		off += (size_t)k;
	}
	return len;
}

static int
start(struct perf *p, CURLM *multi, struct item *it)
{
	char	url[8192];
	int	fd;

	if ((fd = open_tmp(p, it)) < 0)
		return fd;
	it->fd = fd;
	it->werr = 0;
	snprintf(url, sizeof(url), "%s/buildid/%s/%s", p->urls[it->url],
	    it->m->id, kind_name(it->kind));
	if ((it->easy = curl_easy_init()) == NULL) {
		drop_tmp(it);
		return -ENOMEM;
	}
	curl_easy_setopt(it->easy, CURLOPT_URL, url);
	curl_easy_setopt(it->easy, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(it->easy, CURLOPT_WRITEDATA, it);
	curl_easy_setopt(it->easy, CURLOPT_FAILONERROR, 1L);
	curl_easy_setopt(it->easy, CURLOPT_ERRORBUFFER, it->cerr);
	curl_easy_setopt(it->easy, CURLOPT_PRIVATE, it);
	/* The token goes to the hubs given alone: no redirects are
	 * followed. */
	if (p->hdrs != NULL)
		curl_easy_setopt(it->easy, CURLOPT_HTTPHEADER, p->hdrs);
	curl_easy_setopt(it->easy, CURLOPT_USERAGENT, "symhub-perf/"
	    PACKAGE_VERSION);
	curl_easy_setopt(it->easy, CURLOPT_CONNECTTIMEOUT, 30L);
	/* A hub that stalls is given up after 60 s without 1 KB/s. */
	curl_easy_setopt(it->easy, CURLOPT_LOW_SPEED_LIMIT, 1024L);
	curl_easy_setopt(it->easy, CURLOPT_LOW_SPEED_TIME, 60L);
	curl_easy_setopt(it->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(it->easy, CURLOPT_ACCEPT_ENCODING, "");
	it->cerr[0] = '\0';
	if (curl_multi_add_handle(multi, it->easy) != CURLM_OK) {
		curl_easy_cleanup(it->easy);
		it->easy = NULL;
		drop_tmp(it);
		return -ENOMEM;
	}
	return 0;
}

/* Is the download the file it should be?  @return NULL or why not. */
static const char *
check(struct item *it, char *why, size_t len)
{
	struct elfinfo	 ei;
	const char	*unfit;
	char		 hex[2 * ELFINFO_BUILDID_MAX + 1];

	if (elfinfo_read(it->fd, &ei) < 0)
		return "the hub sent a file that is not ELF";
	hex_encode(ei.buildid, ei.buildid_len, hex);
	if (strcmp(hex, it->m->id) != 0) {
		snprintf(why, len, "the hub sent a file with build-id %.64s",
		    ei.buildid_len > 0 ? hex : "(none)");
		return why;
	}
	if ((unfit = elfinfo_unfit(&ei, it->kind == CACHE_DEBUGINFO)) !=
	    NULL) {
		snprintf(why, len, "the hub's file is unfit: %.100s", unfit);
		return why;
	}
	return NULL;
}

/*
 * Does path, its symbolic links resolved, lie in perf's cache?  The part
 * that does not exist yet is judged by its deepest existing ancestor
 * (mkdirs() makes plain directories below it).  A link in the cache that
 * leads out, one left dangling included, is never written through: perf
 * makes only links that stay inside.
 */
static int
inside(const struct perf *p, const char *path)
{
	struct stat	st;
	char		buf[PATH_MAX], res[PATH_MAX], *s;
	size_t		n = strlen(p->real), len = strlen(path);

	if (n == 0 || len >= sizeof(buf))
		return 0;
	memcpy(buf, path, len + 1);
	while (realpath(buf, res) == NULL) {
		/* ENOTDIR: a file in the way, which mkdirs() reports. */
		if ((errno != ENOENT && errno != ENOTDIR) ||
		    lstat(buf, &st) == 0 ||
		    (s = strrchr(buf, '/')) == NULL || s == buf)
			return 0;
		*s = '\0';
	}
	return strncmp(res, p->real, n) == 0 &&
	    (n == 1 || res[n] == '\0' || res[n] == '/');
}

/*
 * Give the checked download its name in m->dir, making the directory and
 * perf's link to it as needed.  @return 0; -EEXIST when the name was
 * taken meanwhile (left alone); -EXDEV when m->dir or the link's folder
 * leads out of perf's cache (nothing made); -errno.
 */
static int
install(struct perf *p, struct item *it)
{
	struct mod	*m = it->m;
	char		 dest[PATH_MAX], proc[64], *linkdir = NULL;
	int		 keep, lkeep = -1, rc = 0, made_link = 0;

	if ((size_t)snprintf(dest, sizeof(dest), "%s/%s", m->dir, it->file) >=
	    sizeof(dest))
		return -ENAMETOOLONG;
	if (!inside(p, m->dir))
		return -EXDEV;
	if ((keep = mkdirs(m->dir)) < 0)
		return keep;
	if (m->target != NULL) {
		if ((linkdir = strdup(m->link)) == NULL) {
			rc = -ENOMEM;
			goto out;
		}
		*strrchr(linkdir, '/') = '\0';
		if (!inside(p, linkdir)) {
			rc = -EXDEV;
			goto out;
		}
		if ((lkeep = mkdirs(linkdir)) < 0) {
			rc = lkeep;
			goto out;
		}
		if (symlink(m->target, m->link) == 0)
			made_link = 1;
		else if (errno != EEXIST) {
			rc = -errno;
			goto out;
		}
		free(m->target);	/* made, or made by another */
		m->target = NULL;
	}
	if (!inside(p, m->dir)) {
		rc = -EXDEV;	/* changed under us */
		goto out;
	}
	if (it->tmp[0] == '\0') {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", it->fd);
		if (linkat(AT_FDCWD, proc, AT_FDCWD, dest,
		    AT_SYMLINK_FOLLOW) != 0)
			rc = -errno;
	} else if (link(it->tmp, dest) != 0)
		rc = -errno;
out:
	if (rc < 0 && rc != -EEXIST) {
		/* Nothing of this try stays: no empty directory, no link to
		 * nowhere. */
		undo(m->dir, keep);
		if (made_link && access(m->dir, F_OK) != 0)
			unlink(m->link);
		if (linkdir != NULL && lkeep >= 0)
			undo(linkdir, lkeep);
	}
	free(linkdir);
	return rc;
}

static void
finish(struct perf *p, struct item *it, CURLcode res, CURLM *multi)
{
	const char	*k = kind_name(it->kind), *bad = NULL;
	char		 why[192], detail[DETAIL_MAX];
	long		 status = 0;
	curl_off_t	 got = 0;
	int		 rc;

	curl_easy_getinfo(it->easy, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(it->easy, CURLINFO_SIZE_DOWNLOAD_T, &got);
	curl_easy_cleanup(it->easy);
	it->easy = NULL;
	p->bytes += got;
	if (res == CURLE_OK && (bad = check(it, why, sizeof(why))) == NULL) {
		rc = install(p, it);
		drop_tmp(it);
		p->done++;
		if (rc == 0 || rc == -EEXIST) {
			if (rc == 0)
				p->fetched++;
			else
				p->present++;
			if (!p->quiet)
				line(p, stdout, rc == 0 ? "fetched" :
				    "present", k, it->m->id, it->m->name,
				    NULL);
		} else {
			p->failed++;
			if (rc == -EXDEV)
				snprintf(detail, sizeof(detail), "refused: "
				    "%.300s leads out of perf's cache (a "
				    "symbolic link)", it->m->dir);
			else
				snprintf(detail, sizeof(detail), "cannot "
				    "write %.300s/%s: %s", it->m->dir,
				    it->file, strerror(-rc));
			line(p, stderr, "failed", k, it->m->id, it->m->name,
			    detail);
		}
		progress(p);
		return;
	}
	drop_tmp(it);
	detail[0] = '\0';
	if (res == CURLE_OK)
		snprintf(detail, sizeof(detail), "%s (%.200s)", bad,
		    p->urls[it->url]);
	else if (res == CURLE_WRITE_ERROR && it->werr != 0)
		snprintf(detail, sizeof(detail), "cannot write to %.200s: %s",
		    p->dir, strerror(it->werr));
	else if (res == CURLE_HTTP_RETURNED_ERROR && status != 404)
		snprintf(detail, sizeof(detail), "HTTP %ld from %.200s",
		    status, p->urls[it->url]);
	else if (res != CURLE_HTTP_RETURNED_ERROR)
		snprintf(detail, sizeof(detail), "no answer from %.200s "
		    "(%.256s): ask again later", p->urls[it->url],
		    it->cerr[0] ? it->cerr : curl_easy_strerror(res));
	/* The first failure is what is reported, unless a later hub has
	 * the file; a 404 is no failure. */
	if (detail[0] != '\0' && !it->failed) {
		it->failed = 1;
		snprintf(it->detail, sizeof(it->detail), "%s", detail);
	}
	if (it->url + 1 < p->nurls && res != CURLE_WRITE_ERROR) {
		it->url++;
		if ((rc = start(p, multi, it)) == 0)
			return;
		if (!it->failed) {
			it->failed = 1;
			snprintf(it->detail, sizeof(it->detail), "cannot "
			    "write to %.200s: %s", p->dir, strerror(-rc));
		}
	}
	p->done++;
	if (!it->failed) {
		p->missing++;
		line(p, stdout, "missing", k, it->m->id, it->m->name, NULL);
	} else {
		p->failed++;
		line(p, stderr, "failed", k, it->m->id, it->m->name,
		    it->detail);
	}
	progress(p);
}

/* run()'s place in the items, for its xfer_ops. */
struct run {
	struct perf	*p;
	size_t		 next;
};

static int
run_start(void *ctx, CURLM *multi)
{
	struct run	*r = ctx;
	int		 rc;

	if (r->next == r->p->n)
		return 0;
	if ((rc = start(r->p, multi, &r->p->items[r->next++])) < 0)
		return rc;
	return 1;
}

/* An item goes on when finish() asked the next hub for it. */
static int
run_done(void *ctx, CURLM *multi, char *priv, CURLcode res)
{
	struct run	*r = ctx;
	struct item	*it = (struct item *)(void *)priv;

	finish(r->p, it, res, multi);
	return it->easy != NULL;
}

/* Fetch every item, p->jobs at a time. */
static int
run(struct perf *p)
{
	static const struct xfer_ops ops = { run_start, run_done };
	struct run	 r = { p, 0 };
	CURLM		*multi;
	int		 rc;

	if ((multi = curl_multi_init()) == NULL)
		return -ENOMEM;
	progress(p);
	rc = xfer_run(multi, (size_t)p->jobs, 1000, &ops, &r);
	curl_multi_cleanup(multi);
	if (p->bar)
		fputs("\r\033[K", stderr);
	return rc;
}

static int
add_url(struct perf *p, const char *u)
{
	if (p->nurls == URLS_MAX) {
		fprintf(stderr, "symhub perf: more than %d hubs\n", URLS_MAX);
		return -1;
	}
	if (strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0) {
		fprintf(stderr, "symhub perf: %s: a hub is http:// or "
		    "https://\n", u);
		return -1;
	}
	p->urls[p->nurls++] = u;
	return 0;
}

static void
trim_slash(char *u)
{
	size_t n = strlen(u);

	while (n > 0 && u[n - 1] == '/')
		u[--n] = '\0';
}

int
cmd_perf(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "url", required_argument, NULL, 'U' },
		{ "buildid-dir", required_argument, NULL, 'B' },
		{ "input", required_argument, NULL, 'i' },
		{ "list", no_argument, NULL, 'l' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "token-file", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static char		 prog[] = "symhub perf";
	struct perf		 p;
	struct perfdata_info	 info;
	const char		*input = NULL, *bdir = NULL, *why, *env;
	const char		*tfile = NULL;
	char			*urlbuf = NULL, *tok, *end, *opt_urls[URLS_MAX];
	char			*token = NULL;
	size_t			 i, nopt = 0;
	int			 ch, fd, rc, st = 1;

	memset(&p, 0, sizeof(p));
	p.jobs = 8;
	argv[0] = prog;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "i:lj:qh", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'U':
			if (nopt == URLS_MAX) {
				fprintf(stderr, "symhub perf: more than %d "
				    "hubs\n", URLS_MAX);
				return 2;
			}
			opt_urls[nopt++] = optarg;
			break;
		case 'B':
			bdir = optarg;
			break;
		case 'i':
			input = optarg;
			break;
		case 'l':
			p.list = 1;
			break;
		case 'j':
			if (cli_jobs(optarg, &p.jobs) < 0)
				return 2;
			break;
		case 'q':
			p.quiet = 1;
			break;
		case 'F':
			tfile = optarg;
			break;
		case 'h':
			fputs(help, stdout);
			return 0;
		default:
			fputs(help, stderr);
			return 2;
		}
	}
	if (optind < argc && input == NULL)
		input = argv[optind++];
	if (optind < argc) {
		fputs(help, stderr);
		return 2;
	}
	if (input == NULL)
		input = "perf.data";
	for (i = 0; i < nopt; i++) {
		trim_slash(opt_urls[i]);
		if (add_url(&p, opt_urls[i]) < 0)
			return 2;
	}
	if (nopt == 0 && (env = getenv("DEBUGINFOD_URLS")) != NULL) {
		/* Blank-separated, as libdebuginfod reads it. */
		if ((urlbuf = strdup(env)) == NULL)
			return 1;
		for (tok = urlbuf; *(tok += strspn(tok, " \t\n")) != '\0';
		    tok = end) {
			end = tok + strcspn(tok, " \t\n");
			if (*end != '\0')
				*end++ = '\0';
			trim_slash(tok);
			if (add_url(&p, tok) < 0) {
				free(urlbuf);
				return 2;
			}
		}
	}
	if ((rc = find_dir(&p, bdir)) < 0) {
		fprintf(stderr, "symhub perf: no build-id cache: %s (give "
		    "--buildid-dir)\n", rc == -ENOENT ? "$HOME is not set" :
		    "its path is too long");
		free(urlbuf);
		return 2;
	}
	if ((st = cli_read_token(prog, tfile, &token, &p.hdrs)) != 0) {
		free(urlbuf);
		return st;
	}
	st = 1;
	p.bar = !p.quiet && isatty(STDERR_FILENO);
	if (elfinfo_init() < 0 || curl_global_init(CURL_GLOBAL_ALL) != 0) {
		fprintf(stderr, "symhub perf: cannot initialise\n");
		goto out;
	}
	if (!p.quiet && !p.list)
		printf("perf's build-id cache: %s (%s)\n", p.dir, p.dir_from);
	if ((fd = open(input, O_RDONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "symhub perf: %s: %s\n", input,
		    strerror(errno));
		goto out;
	}
	rc = perfdata_buildids(fd, one_module, &p, &info, &why);
	close(fd);
	if (rc == -ENOEXEC) {
		fprintf(stderr, "symhub perf: %s: %s\n", input, why);
		goto out;
	} else if (rc == -EPROTONOSUPPORT) {
		fprintf(stderr, "symhub perf: %s: the PERFFILE format of perf "
		    "before 2.6.35 is not read\n", input);
		goto out;
	} else if (rc < 0) {
		fprintf(stderr, "symhub perf: %s: %s\n", input,
		    strerror(-rc));
		goto out;
	}
	if (p.list) {
		st = info.records > 0 ? 0 : 1;
		goto out;
	}
	if (p.nmods == 0 && p.skipped == 0 && p.failed == 0) {
		fprintf(stderr, "symhub perf: %s names no build-id%s\n", input,
		    info.compressed > 0 ? ": it was recorded with -z, which "
		    "keeps none; record with --buildid-mmap, or without -z" :
		    info.pipe ? ": it was recorded to a pipe; record to a "
		    "file, or with --buildid-mmap" : "");
		goto out;
	}
	for (i = 0; i < p.nmods; i++)
		if ((rc = plan(&p, &p.mods[i])) < 0) {
			fprintf(stderr, "symhub perf: %s: %s\n",
			    p.mods[i].link != NULL ? p.mods[i].link : p.dir,
			    strerror(-rc));
			goto out;
		}
	if (p.n > 0 && p.nurls == 0) {
		fprintf(stderr, "symhub perf: %zu files to fetch and no hub: "
		    "give --url, or set DEBUGINFOD_URLS\n", p.n);
		st = 2;
		goto out;
	}
	if (p.n > 0 && (rc = mkdirs(p.dir)) < 0) {
		fprintf(stderr, "symhub perf: cannot make perf's build-id "
		    "cache %s: %s\n", p.dir, strerror(-rc));
		goto out;
	}
	if (p.n > 0 && access(p.dir, W_OK) != 0) {
		fprintf(stderr, "symhub perf: cannot write to perf's build-id "
		    "cache %s: %s\n", p.dir, strerror(errno));
		goto out;
	}
	if (p.n > 0 && realpath(p.dir, p.real) == NULL) {
		fprintf(stderr, "symhub perf: perf's build-id cache %s: %s\n",
		    p.dir, strerror(errno));
		goto out;
	}
	if ((rc = run(&p)) < 0) {
		fprintf(stderr, "symhub perf: %s: %s\n", p.dir,
		    strerror(-rc));
		goto out;
	}
	st = p.missing > 0 || p.failed > 0 ? 1 : 0;
	printf("%u fetched, %u present, %u missing, %u failed, %u skipped\n",
	    p.fetched, p.present, p.missing, p.failed, p.skipped);
out:
	for (i = 0; i < p.n; i++)
		drop_tmp(&p.items[i]);
	for (i = 0; i < p.nmods; i++) {
		free(p.mods[i].name);
		free(p.mods[i].dir);
		free(p.mods[i].link);
		free(p.mods[i].target);
	}
	free(p.mods);
	free(p.items);
	strmap_free(&p.seen);
	curl_global_cleanup();
	cli_headers_free(p.hdrs);
	if (token != NULL) {
		explicit_bzero(token, strlen(token));
		free(token);
	}
	free(urlbuf);
	return st;
}
