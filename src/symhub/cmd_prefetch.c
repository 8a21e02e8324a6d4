/*
 * cmd_prefetch: `symhub prefetch`, which makes a hub fetch and keep the
 * debug files of build-ids, ELF files, directories and core files while
 * it can still reach its upstreams (before an air gap closes).
 *
 * Each (build-id, kind) is asked with a HEAD request: the hub looks in
 * its store, fetches from its upstreams what it lacks and stores it, and
 * answers with the headers alone, so nothing crosses to this machine.
 * The build-ids of a core file are those of every module it maps, read
 * from the core's own notes and memory with libdwfl, as
 * `eu-unstrip -n --core` lists them; no file is looked for.  Each is
 * named by the file the core says was mapped there (NT_FILE); the vdso,
 * which the kernel maps and no file holds, is skipped.
 *
 * With --sources a debuginfo is fetched whole (GET) rather than asked
 * for, so that the source files its DWARF names can be read from it;
 * each is then asked for as /buildid/ID/source/PATH, which makes the hub
 * fetch and keep it as it does a debuginfo.  Each is asked by the name
 * the hub keeps it under, webapi_canon_source()'s: a name that stays
 * relative (a unit whose DW_AT_comp_dir is relative, as Debian's are)
 * rooted at "/", which the hub answers relative requests and the
 * profiler's /source/v1 from.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libelf.h>

#include "base/buf.h"
#include "base/hex.h"
#include "base/strmap.h"
#include "cli.h"
#include "cmd_prefetch.h"
#include "common/elfinfo.h"
#include "common/kind.h"
#include "common/webapi.h"
#include "xfer.h"

#define IDHEX_MAX	(2 * ELFINFO_BUILDID_MAX + 1)

struct item {
	char		 id[IDHEX_MAX];
	enum cache_kind	 kind;
	char		*from;		/* the argument it came from, or the
					   source's path */
	FILE		*body;		/* a debuginfo read for its sources */
	CURL		*easy;
	long		 status;	/* HTTP status; 0: none */
	char		 err[CURL_ERROR_SIZE];
};

struct prefetch {
	const char	*url;		/* the hub, no trailing '/' */
	int		 executables;	/* also ask for executables */
	int		 sources;	/* also ask for the debuginfos' sources */
	int		 jobs;
	int		 quiet;
	int		 bar;		/* a progress line on stderr */
	struct curl_slist *hdrs;	/* the token's header, or NULL */
	struct item	*items;
	size_t		 n, cap;
	struct strmap	 asked;		/* "id\tkind" -> index in items */
	unsigned	 found, missing, failed, skipped, done;
	unsigned	 sfound, smissing, sfailed;	/* of sources */
};

static const char help[] =
"usage: symhub prefetch [OPTION...] ARG...\n"
"Make a hub fetch and keep the debuginfo (and with -e the executables) of\n"
"every ARG while it can reach its upstreams.  ARG: a build-id (hex), an\n"
"ELF file, a core file (every module it maps) or a directory (every ELF\n"
"and core file under it).\n"
"\n"
"      --url URL   the hub (default: the first of $DEBUGINFOD_URLS)\n"
"      --token-file FILE  a read token, from the first line of FILE, for a\n"
"                  hub with --read-auth (default: $SYMHUB_TOKEN)\n"
"  -e, --executables  ask for the executables too\n"
"  -s, --sources   ask for the source files each debuginfo names too\n"
"  -j, --jobs N    requests at once (default 8, 1 to 64)\n"
"  -q, --quiet     print only what is missing or failed, and the summary\n"
"  -h, --help      this text\n"
"\n"
"One line per build-id and kind: found, missing (the hub and its\n"
"upstreams have none), failed (no definite answer: ask again later), and\n"
"skipped for a file without a build-id or a core's vdso (the kernel's:\n"
"no server has it).  A core's modules are named by their mapped files.\n"
"A source is one line of kind source, named by its path as the hub keeps\n"
"it (a relative one rooted at /); sources are counted apart, and one\n"
"missing is no failure (a path of the build machine no server may have).\n"
"Exit status: 0 when everything asked for was found (sources: found or\n"
"missing), 1 when something is missing or failed, 2 for usage.\n";

static void
line(struct prefetch *p, FILE *fp, const char *label, const char *kind,
    const char *id, const char *from, const char *detail)
{
	cli_line(fp, p->bar, label, kind, id, from, detail);
}

static void
progress(struct prefetch *p)
{
	if (p->bar)
		cli_bar(p->done, p->n, "%u found, %u missing, %u failed",
		    p->found, p->missing, p->failed);
}

static int
add(struct prefetch *p, const char *idhex, const char *from)
{
	enum cache_kind	kinds[] = { CACHE_DEBUGINFO, CACHE_EXECUTABLE };
	char		key[IDHEX_MAX + 16];
	size_t		i, k;

	for (k = 0; k < (p->executables ? 2u : 1u); k++) {
		snprintf(key, sizeof(key), "%s\t%s", idhex,
		    kind_name(kinds[k]));
		if (strmap_get(&p->asked, key, &i))
			continue;	/* asked once however often named */
		if (strmap_put(&p->asked, key, p->n) != 0 ||
		    array_grow(&p->items, &p->cap, p->n + 1,
		    sizeof(*p->items)) != 0)
			return -ENOMEM;
		memset(&p->items[p->n], 0, sizeof(p->items[p->n]));
		snprintf(p->items[p->n].id, IDHEX_MAX, "%s", idhex);
		p->items[p->n].kind = kinds[k];
		if ((p->items[p->n].from = strdup(from)) == NULL)
			return -ENOMEM;
		p->n++;
	}
	return 0;
}

/* A source file a debuginfo names: path is canonical and absolute. */
static int
add_source(struct prefetch *p, const char *idhex, const char *path)
{
	char	*key;
	size_t	 i;
	int	 rc = 0;

	if (asprintf(&key, "%s\tsource\t%s", idhex, path) < 0)
		return -ENOMEM;
	if (strmap_get(&p->asked, key, &i))
		goto out;
	if (strmap_put(&p->asked, key, p->n) != 0 ||
	    array_grow(&p->items, &p->cap, p->n + 1,
	    sizeof(*p->items)) != 0) {
		rc = -ENOMEM;
		goto out;
	}
	memset(&p->items[p->n], 0, sizeof(p->items[p->n]));
	snprintf(p->items[p->n].id, IDHEX_MAX, "%s", idhex);
	p->items[p->n].kind = CACHE_SOURCE;
	if ((p->items[p->n].from = strdup(path)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	p->n++;
out:
	free(key);
	return rc;
}

struct srcctx {
	struct prefetch	*p;
	const char	*id;
};

static int
one_source(void *ctx, const char *path)
{
	struct srcctx	*sc = ctx;
	char		*canon;
	int		 rc;

	if ((canon = webapi_canon_source(path)) == NULL)
		return errno == ENOMEM ? -ENOMEM : 0;
	/* "." and the like name no file. */
	rc = strcmp(canon, "/") != 0 ? add_source(sc->p, sc->id, canon) : 0;
	free(canon);
	return rc;
}

/* libdwfl must not look for files (nor ask debuginfod): the core's own
 * notes and memory name the build-ids. */
static int
no_elf(Dwfl_Module *mod, void **userdata, const char *modname,
    Dwarf_Addr base, char **file_name, Elf **elfp)
{
	(void)mod;
	(void)userdata;
	(void)modname;
	(void)base;
	*file_name = NULL;
	*elfp = NULL;
	return -1;
}

/*
 * What a core's notes say of its mappings: where the kernel put the vdso
 * (AT_SYSINFO_EHDR in NT_AUXV) and which file is mapped where (NT_FILE).
 * Names point into the core's data: valid until elf_end().
 */
struct coremap {
	uint64_t	  vdso;		/* 0: not said */
	uint64_t	 *start, *end;
	const char	**name;
	size_t		  n;
};

/* A word of a note's descriptor, in the core's class and byte order. */
static uint64_t
note_word(const unsigned char *b, size_t w, int msb)
{
	uint64_t	v = 0;
	size_t		i;

	for (i = 0; i < w; i++)
		v |= (uint64_t)b[msb ? i : w - 1 - i] << 8 * (w - 1 - i);
	return v;
}

/* NT_FILE: count, page size, count (start, end, offset), count names. */
static void
note_files(struct coremap *cm, const unsigned char *d, size_t len,
    size_t w, int msb)
{
	uint64_t	count;
	size_t		i, off;

	if (cm->start != NULL || len < 2 * w)
		return;		/* one NT_FILE a core */
	count = note_word(d, w, msb);
	if (count == 0 || count > (len - 2 * w) / (3 * w))
		return;
	if ((cm->start = calloc(count, sizeof(*cm->start))) == NULL ||
	    (cm->end = calloc(count, sizeof(*cm->end))) == NULL ||
	    (cm->name = calloc(count, sizeof(*cm->name))) == NULL)
		return;		/* modules keep libdwfl's names */
	off = 2 * w + 3 * w * count;
	for (i = 0; i < count && off < len; i++) {
		const char *nul = memchr(d + off, '\0', len - off);

		if (nul == NULL)
			break;
		cm->start[i] = note_word(d + 2 * w + 3 * w * i, w, msb);
		cm->end[i] = note_word(d + 3 * w + 3 * w * i, w, msb);
		cm->name[i] = (const char *)d + off;
		off = (size_t)(nul - (const char *)d) + 1;
	}
	cm->n = i;
}

/* NT_AUXV: (type, value) words. */
static void
note_auxv(struct coremap *cm, const unsigned char *d, size_t len,
    size_t w, int msb)
{
	size_t	off;

	for (off = 0; off + 2 * w <= len; off += 2 * w)
		if (note_word(d + off, w, msb) == AT_SYSINFO_EHDR)
			cm->vdso = note_word(d + off + w, w, msb);
}

/* Best effort: a core without these notes keeps libdwfl's names and
 * knows its vdso by name. */
static void
core_notes(Elf *core, struct coremap *cm)
{
	GElf_Ehdr	 eh;
	GElf_Phdr	 ph;
	GElf_Nhdr	 nh;
	Elf_Data	*data;
	size_t		 nph, i, off, noff, doff, w;
	int		 msb;

	if (gelf_getehdr(core, &eh) == NULL || elf_getphdrnum(core, &nph) != 0)
		return;
	w = eh.e_ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
	msb = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	for (i = 0; i < nph; i++) {
		if (gelf_getphdr(core, (int)i, &ph) == NULL ||
		    ph.p_type != PT_NOTE || (data = elf_getdata_rawchunk(core,
		    (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR)) == NULL)
			continue;
		for (off = 0; (off = gelf_getnote(data, off, &nh, &noff,
		    &doff)) > 0; ) {
			const unsigned char *d = (unsigned char *)data->d_buf +
			    doff;

			if (nh.n_namesz != sizeof("CORE") ||
			    memcmp((char *)data->d_buf + noff, "CORE",
			    sizeof("CORE")) != 0)
				continue;
			if (nh.n_type == NT_FILE)
				note_files(cm, d, nh.n_descsz, w, msb);
			else if (nh.n_type == NT_AUXV)
				note_auxv(cm, d, nh.n_descsz, w, msb);
		}
	}
}

static void
coremap_free(struct coremap *cm)
{
	free(cm->start);
	free(cm->end);
	free(cm->name);
}

/* The file mapped at addr, or NULL. */
static const char *
coremap_file(const struct coremap *cm, uint64_t addr)
{
	size_t	i;

	for (i = 0; i < cm->n; i++)
		if (cm->start[i] <= addr && addr < cm->end[i])
			return cm->name[i];
	return NULL;
}

struct modctx {
	struct prefetch		*p;
	const struct coremap	*cm;
	int			 rc;
};

static int
one_module(Dwfl_Module *mod, void **userdata, const char *name,
    Dwarf_Addr start, void *arg)
{
	struct modctx		*m = arg;
	const unsigned char	*bits;
	const char		*file;
	GElf_Addr		 vaddr;
	char			 hex[IDHEX_MAX];
	int			 len;

	(void)userdata;
	len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (len <= 0 || len > ELFINFO_BUILDID_MAX)
		return DWARF_CB_OK;
	hex_encode(bits, (size_t)len, hex);
	/* The kernel's own image, in no package: asking for it could only
	 * end "missing" and turn a complete prefetch into a failed one.
	 * libdwfl names it after its soname, or [vdso] from /proc. */
	if ((m->cm->vdso != 0 && start == m->cm->vdso) ||
	    strncmp(name, "linux-vdso", 10) == 0 ||
	    strncmp(name, "linux-gate", 10) == 0 ||
	    strncmp(name, "[vdso", 5) == 0) {
		if (!m->p->quiet)
			line(m->p, stdout, "skipped", "-", hex, name,
			    "the vdso: the kernel's, no server has it");
		m->p->skipped++;
		return DWARF_CB_OK;
	}
	if ((file = coremap_file(m->cm, start)) == NULL)
		file = name;
	if ((m->rc = add(m->p, hex, file)) < 0)
		return DWARF_CB_ABORT;
	return DWARF_CB_OK;
}

/* The build-ids of every module a core maps.  @return how many were
 * added or skipped, or -errno. */
static int
add_core(struct prefetch *p, int fd)
{
	static const Dwfl_Callbacks cb = { .find_elf = no_elf };
	struct coremap	 cm;
	struct modctx	 m = { p, &cm, 0 };
	Dwfl		*dwfl;
	Elf		*core;
	size_t		 before = p->n + p->skipped;
	int		 rc = -ENOEXEC;

	memset(&cm, 0, sizeof(cm));
	if ((core = elf_begin(fd, ELF_C_READ_MMAP, NULL)) == NULL)
		return -ENOEXEC;
	core_notes(core, &cm);
	if ((dwfl = dwfl_begin(&cb)) != NULL) {
		if (dwfl_core_file_report(dwfl, core, NULL) >= 0 &&
		    dwfl_report_end(dwfl, NULL, NULL) == 0 &&
		    dwfl_getmodules(dwfl, one_module, &m, 0) >= 0)
			rc = m.rc < 0 ? m.rc :
			    (int)(p->n + p->skipped - before);
		dwfl_end(dwfl);
	}
	coremap_free(&cm);
	elf_end(core);
	return rc;
}

/* A file: its own build-id, or a core's modules' ones. */
static int
add_file(struct prefetch *p, const char *path)
{
	struct elfinfo	 ei;
	GElf_Ehdr	 eh;
	Elf		*e;
	char		 hex[IDHEX_MAX];
	int		 fd, rc, core = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		line(p, stderr, "failed", "-", "-", path, strerror(errno));
		p->failed++;
		return 0;
	}
	if ((e = elf_begin(fd, ELF_C_READ_MMAP, NULL)) != NULL) {
		core = gelf_getehdr(e, &eh) != NULL && eh.e_type == ET_CORE;
		elf_end(e);
	}
	if (core) {
		rc = add_core(p, fd);
		if (rc == 0 || rc == -ENOEXEC) {
			line(p, stdout, "skipped", "-", "-", path,
			    "a core file naming no build-id");
			p->skipped++;
			rc = 0;
		}
	} else if ((rc = elfinfo_read(fd, &ei)) < 0 || ei.buildid_len == 0) {
		if (!p->quiet)
			line(p, stdout, "skipped", "-", "-", path, rc < 0 ?
			    "not an ELF file" : "no build-id");
		p->skipped++;
		rc = 0;
	} else {
		hex_encode(ei.buildid, ei.buildid_len, hex);
		rc = add(p, hex, path);
	}
	close(fd);
	return rc < 0 ? rc : 0;
}

static int
walk_file(void *ctx, const char *path)
{
	return add_file(ctx, path);
}

static void
walk_fail(void *ctx, const char *path, int errnum)
{
	struct prefetch *p = ctx;

	line(p, stderr, "failed", "-", "-", path, strerror(errnum));
	p->failed++;
}

static int
add_arg(struct prefetch *p, const char *arg)
{
	unsigned char	id[WEBAPI_ID_HEX_MAX / 2];
	struct stat	st;

	if (stat(arg, &st) != 0) {
		if (webapi_parse_hexid(arg, strlen(arg), id) > 0)
			return add(p, arg, "(build-id)");
		line(p, stderr, "failed", "-", "-", arg,
		    "neither a file nor a build-id");
		p->failed++;
		return 0;
	}
	if (S_ISDIR(st.st_mode))
		return cli_walk(arg, walk_file, walk_fail, p);
	return add_file(p, arg);
}

static size_t
discard(char *ptr, size_t size, size_t n, void *ctx)
{
	(void)ptr;
	(void)ctx;
	return size * n;
}

/*
 * The URL of an item.  A source's path is escaped as libdebuginfod does
 * it: every byte but the unreserved ones, the slashes kept.
 */
static int
item_url(struct prefetch *p, CURL *easy, const struct item *it,
    char *url, size_t size)
{
	const char	*s;
	char		*esc;
	struct buf	 b = { 0 };
	int		 rc = 0;

	if (it->kind != CACHE_SOURCE) {
		snprintf(url, size, "%s/buildid/%s/%s", p->url, it->id,
		    kind_name(it->kind));
		return 0;
	}
	for (s = it->from; *s != '\0'; ) {
		size_t	n = strcspn(s, "/");

		if (n == 0) {
			rc = buf_add(&b, "/", 1);
			s++;
		} else if ((esc = curl_easy_escape(easy, s, (int)n)) ==
		    NULL)
			rc = -ENOMEM;
		else {
			rc = buf_add(&b, esc, strlen(esc));
			curl_free(esc);
			s += n;
		}
		if (rc != 0)
			goto out;
	}
	if ((size_t)snprintf(url, size, "%s/buildid/%s/source%.*s", p->url,
	    it->id, (int)b.len, (const char *)b.p) >= size)
		rc = -ENAMETOOLONG;
out:
	buf_free(&b);
	return rc;
}

static int
start(struct prefetch *p, CURLM *multi, size_t idx)
{
	struct item	*it = &p->items[idx];
	char		 url[8192];
	int		 rc;

	if ((it->easy = curl_easy_init()) == NULL)
		return -ENOMEM;
	if ((rc = item_url(p, it->easy, it, url, sizeof(url))) < 0)
		return rc;
	curl_easy_setopt(it->easy, CURLOPT_URL, url);
	if (p->sources && it->kind == CACHE_DEBUGINFO) {
		/* Its bytes are needed: they name its sources. */
		if ((it->body = tmpfile()) == NULL)
			return -errno;
		curl_easy_setopt(it->easy, CURLOPT_WRITEDATA, it->body);
	} else {
		curl_easy_setopt(it->easy, CURLOPT_NOBODY, 1L);
		curl_easy_setopt(it->easy, CURLOPT_WRITEFUNCTION, discard);
	}
	curl_easy_setopt(it->easy, CURLOPT_ERRORBUFFER, it->err);
	/* The token goes to the hub alone: no redirects are followed. */
	if (p->hdrs != NULL)
		curl_easy_setopt(it->easy, CURLOPT_HTTPHEADER, p->hdrs);
	curl_easy_setopt(it->easy, CURLOPT_PRIVATE, (char *)(uintptr_t)idx);
	curl_easy_setopt(it->easy, CURLOPT_USERAGENT, "symhub-prefetch/"
	    PACKAGE_VERSION);
	curl_easy_setopt(it->easy, CURLOPT_CONNECTTIMEOUT, 30L);
	curl_easy_setopt(it->easy, CURLOPT_NOSIGNAL, 1L);
	if (curl_multi_add_handle(multi, it->easy) != CURLM_OK)
		return -ENOMEM;
	return 0;
}

/*
 * Queue the sources a fetched debuginfo names.  Items may move: it is
 * the caller's to look its item up again.
 */
static int
read_sources(struct prefetch *p, size_t idx)
{
	struct item	*it = &p->items[idx];
	struct srcctx	 sc;
	char		 id[IDHEX_MAX];
	FILE		*body = it->body;
	int		 rc;

	it->body = NULL;
	snprintf(id, sizeof(id), "%s", it->id);
	sc.p = p;
	sc.id = id;
	if (fflush(body) != 0)
		rc = -errno;
	else
		rc = elfinfo_sources(fileno(body), one_source, &sc);
	fclose(body);
	return rc;
}

static int
finish(struct prefetch *p, size_t idx, CURLcode res)
{
	struct item	*it = &p->items[idx];
	const char	*k = kind_name(it->kind);
	char		 detail[CURL_ERROR_SIZE + 64];
	int		 src = it->kind == CACHE_SOURCE, rc = 0;

	curl_easy_getinfo(it->easy, CURLINFO_RESPONSE_CODE, &it->status);
	p->done++;
	if (res == CURLE_OK && it->status == 200) {
		if (src)
			p->sfound++;
		else
			p->found++;
		if (!p->quiet)
			line(p, stdout, "found", k, it->id, it->from, NULL);
		if (it->body != NULL && (rc = read_sources(p, idx)) < 0 &&
		    rc != -ENOMEM) {
			/* Found all the same; its sources are unknown. */
			it = &p->items[idx];
			line(p, stderr, "failed", "source", it->id, it->from,
			    "cannot read the source names of its DWARF");
			p->sfailed++;
			rc = 0;
		}
	} else if (res == CURLE_OK && it->status == 404) {
		if (src)
			p->smissing++;
		else
			p->missing++;
		line(p, stdout, "missing", k, it->id, it->from, NULL);
	} else {
		if (src)
			p->sfailed++;
		else
			p->failed++;
		if (res != CURLE_OK)
			snprintf(detail, sizeof(detail), "no definite answer "
			    "(%s): ask again later", it->err[0] ? it->err :
			    curl_easy_strerror(res));
		else
			snprintf(detail, sizeof(detail), "HTTP %ld",
			    it->status);
		line(p, stderr, "failed", k, it->id, it->from, detail);
	}
	it = &p->items[idx];
	if (it->body != NULL) {
		fclose(it->body);
		it->body = NULL;
	}
	progress(p);
	return rc;
}

/* run()'s place in the items, for its xfer_ops. */
struct run {
	struct prefetch	*p;
	size_t		 next;
	int		 err;		/* an item could not be started */
};

/*
 * An item that cannot be started stops the run, but only after the
 * round under way: what ends in it is still reported and counted.
 */
static int
run_start(void *ctx, CURLM *multi)
{
	struct run	*r = ctx;
	int		 rc;

	if (r->err < 0)
		return r->err;
	if (r->next == r->p->n)
		return 0;
	if ((rc = start(r->p, multi, r->next++)) < 0) {
		r->err = rc;
		return 0;
	}
	return 1;
}

static int
run_done(void *ctx, CURLM *multi, char *priv, CURLcode res)
{
	struct run	*r = ctx;
	size_t		 idx = (size_t)(uintptr_t)priv;
	int		 rc;

	(void)multi;
	rc = finish(r->p, idx, res);
	curl_easy_cleanup(r->p->items[idx].easy);
	r->p->items[idx].easy = NULL;
	return rc < 0 ? rc : 0;
}

/* Ask for every item, p->jobs at a time. */
static int
run(struct prefetch *p)
{
	static const struct xfer_ops ops = { run_start, run_done };
	struct run	 r = { p, 0, 0 };
	CURLM		*multi;
	int		 rc;

	if ((multi = curl_multi_init()) == NULL)
		return -ENOMEM;
	progress(p);
	rc = xfer_run(multi, (size_t)p->jobs, 1000, &ops, &r);
	curl_multi_cleanup(multi);
	if (p->bar)
		fputs("\r\033[K", stderr);
	return r.err < 0 ? r.err : rc;
}

int
cmd_prefetch(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "url", required_argument, NULL, 'U' },
		{ "executables", no_argument, NULL, 'e' },
		{ "sources", no_argument, NULL, 's' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "token-file", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	static char		 prog[] = "symhub prefetch";
	struct prefetch		 p;
	char			 ebuf[4096];
	char			*url = NULL, *tok = NULL;
	const char		*tfile = NULL;
	size_t			 i;
	int			 ch, rc = 0, st;

	memset(&p, 0, sizeof(p));
	p.jobs = 8;
	argv[0] = prog;		/* for getopt's messages */
	optind = 1;
	while ((ch = getopt_long(argc, argv, "ej:qsh", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 'U':
			p.url = optarg;
			break;
		case 'e':
			p.executables = 1;
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
		case 's':
			p.sources = 1;
			break;
		case 'h':
			fputs(help, stdout);
			return 0;
		default:
			fputs(help, stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fputs(help, stderr);
		return 2;
	}
	if (p.url == NULL)
		p.url = cli_env_url(ebuf, sizeof(ebuf));
	if (p.url == NULL || *p.url == '\0' ||
	    (strncmp(p.url, "http://", 7) != 0 &&
	    strncmp(p.url, "https://", 8) != 0)) {
		fprintf(stderr, "symhub prefetch: --url http://HUB:PORT (or "
		    "DEBUGINFOD_URLS) is needed\n");
		free(url);
		return 2;
	}
	if (url == NULL && (url = strdup(p.url)) == NULL)
		return 1;
	if ((st = cli_read_token(prog, tfile, &tok, &p.hdrs)) != 0) {
		free(url);
		return st;
	}
	while (*url != '\0' && url[strlen(url) - 1] == '/')
		url[strlen(url) - 1] = '\0';
	p.url = url;
	p.bar = !p.quiet && isatty(STDERR_FILENO);
	if (elfinfo_init() < 0 || curl_global_init(CURL_GLOBAL_ALL) != 0) {
		fprintf(stderr, "symhub prefetch: cannot initialise\n");
		free(url);
		return 1;
	}
	for (i = (size_t)optind; rc == 0 && i < (size_t)argc; i++)
		rc = add_arg(&p, argv[i]);
	if (rc == 0)
		rc = run(&p);
	if (rc < 0)
		fprintf(stderr, "symhub prefetch: %s\n", strerror(-rc));
	printf("%u found, %u missing, %u failed, %u skipped", p.found,
	    p.missing, p.failed, p.skipped);
	if (p.sources)
		printf("; sources: %u found, %u missing, %u failed", p.sfound,
		    p.smissing, p.sfailed);
	putchar('\n');
	st = rc < 0 || p.missing > 0 || p.failed > 0 || p.sfailed > 0 ? 1 : 0;
	for (i = 0; i < p.n; i++) {
		if (p.items[i].easy != NULL)
			curl_easy_cleanup(p.items[i].easy);
		if (p.items[i].body != NULL)
			fclose(p.items[i].body);
		free(p.items[i].from);
	}
	free(p.items);
	strmap_free(&p.asked);
	curl_global_cleanup();
	cli_headers_free(p.hdrs);
	if (tok != NULL) {
		explicit_bzero(tok, strlen(tok));
		free(tok);
	}
	free(url);
	return st;
}
