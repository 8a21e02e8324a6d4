/*
 * test_elfinfo: elfinfo against fixtures built here from a tiny C file
 * (gcc -g, objcopy --only-keep-debug, strip, no build-id, -gz=zlib),
 * broken files, and the FileID test vectors of doc/protocol.md.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <elf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hex.h"
#include "common/elfinfo.h"
#include "tap.h"
#include "testlib.h"

static char dir[PATH_MAX];

struct buf {
	unsigned char	*p;
	size_t		 len;
	int		 calls;
};

struct srcs {
	char	*v[64];
	int	 n;
	int	 stop_after;	/* return 7 after this many, or 0 */
};

static const char prog_c[] =
    "#include \"inc/fix.h\"\n"
    "#include <stdio.h>\n"
    "int counter;\n"
    "int\n"
    "main(int argc, char **argv)\n"
    "{\n"
    "\tcounter = twice(argc);\n"
    "\tprintf(\"%d %s\\n\", counter, argv[0]);\n"
    "\treturn 0;\n"
    "}\n";

/* Over 3 MiB of .rodata, for a section that takes several sink calls. */
static const char big_c[] =
    "const unsigned char big[(3 << 20) + 12345] = { 1, 2, 3, [3 << 20] = 4 };\n"
    "int main(void) { return big[0]; }\n";

static const char fix_h[] =
    "static inline int twice(int x) { return 2 * x; }\n";

static void
path(char *out, size_t sz, const char *name)
{
	int	n;

	n = snprintf(out, sz, "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sz) {
		printf("Bail out! path too long: %s/%s\n", dir, name);
		exit(1);
	}
}

static int
writefile(const char *name, const void *p, size_t len)
{
	char	pb[PATH_MAX];
	FILE	*f;
	int	rc = 0;

	path(pb, sizeof(pb), name);
	if ((f = fopen(pb, "wb")) == NULL)
		return -1;
	if (len > 0 && fwrite(p, 1, len, f) != len)
		rc = -1;
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

/* Whole file into memory; NULL on failure.  Caller frees. */
static unsigned char *
readfile(const char *name, size_t *len)
{
	char		 pb[PATH_MAX];
	unsigned char	*p = NULL;
	struct stat	 st;
	int		 fd;

	path(pb, sizeof(pb), name);
	if ((fd = open(pb, O_RDONLY)) == -1)
		return NULL;
	if (fstat(fd, &st) == 0 && (p = malloc(st.st_size + 1)) != NULL &&
	    read(fd, p, st.st_size) != st.st_size) {
		free(p);
		p = NULL;
	}
	*len = p != NULL ? (size_t)st.st_size : 0;
	close(fd);
	return p;
}

static int
openf(const char *name)
{
	char	pb[PATH_MAX];

	path(pb, sizeof(pb), name);
	return open(pb, O_RDONLY);
}

static int
readinfo(const char *name, struct elfinfo *ei)
{
	int	fd, rc;

	memset(ei, 0xa5, sizeof(*ei));
	if ((fd = openf(name)) == -1)
		return -errno;
	rc = elfinfo_read(fd, ei);
	close(fd);
	return rc;
}

static int
sink(void *ctx, const void *p, size_t len)
{
	struct buf	*b = ctx;
	unsigned char	*np;

	if ((np = realloc(b->p, b->len + len)) == NULL)
		return -ENOMEM;
	b->p = np;
	memcpy(b->p + b->len, p, len);
	b->len += len;
	b->calls++;
	return 0;
}

static int
sink_stop(void *ctx, const void *p, size_t len)
{
	return 42;
}

static int
section(const char *name, const char *scn, struct buf *b)
{
	int	fd, rc;

	memset(b, 0, sizeof(*b));
	if ((fd = openf(name)) == -1)
		return -errno;
	rc = elfinfo_section(fd, scn, sink, b);
	close(fd);
	return rc;
}

static int
srccb(void *ctx, const char *p)
{
	struct srcs	*s = ctx;

	if (s->n < (int)(sizeof(s->v) / sizeof(s->v[0])))
		s->v[s->n++] = strdup(p);
	if (s->stop_after > 0 && s->n >= s->stop_after)
		return 7;
	return 0;
}

static int
sources(const char *name, struct srcs *s, int stop_after)
{
	int	fd, rc;

	memset(s, 0, sizeof(*s));
	s->stop_after = stop_after;
	if ((fd = openf(name)) == -1)
		return -errno;
	rc = elfinfo_sources(fd, srccb, s);
	close(fd);
	return rc;
}

static int
sources_how(const char *name, int how, struct srcs *s)
{
	int	fd, rc;

	memset(s, 0, sizeof(*s));
	if ((fd = openf(name)) == -1)
		return -errno;
	rc = elfinfo_sources_how(fd, how, srccb, s);
	close(fd);
	return rc;
}

static int
cmpstrp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Do two lists hold the same names? */
static int
srcs_same(struct srcs *a, struct srcs *b)
{
	int i;

	if (a->n != b->n)
		return 0;
	qsort(a->v, (size_t)a->n, sizeof(a->v[0]), cmpstrp);
	qsort(b->v, (size_t)b->n, sizeof(b->v[0]), cmpstrp);
	for (i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]) != 0)
			return 0;
	return 1;
}

static void
srcs_free(struct srcs *s)
{
	int	i;

	for (i = 0; i < s->n; i++)
		free(s->v[i]);
	s->n = 0;
}

static int
srcs_count(const struct srcs *s, const char *p)
{
	int	i, n = 0;

	for (i = 0; i < s->n; i++)
		if (s->v[i] != NULL && strcmp(s->v[i], p) == 0)
			n++;
	return n;
}

static int
srcs_alldistinct_abs(const struct srcs *s)
{
	int	i;

	for (i = 0; i < s->n; i++)
		if (s->v[i] == NULL || s->v[i][0] != '/' ||
		    srcs_count(s, s->v[i]) != 1)
			return 0;
	return 1;
}

/* The build-id readelf -n reports, as bytes; its length or -1. */
static int
readelf_buildid(const char *name, unsigned char *out, size_t max)
{
	char		 cmd[2 * PATH_MAX], line[512], *p;
	unsigned int	 byte;
	FILE		*f;
	size_t		 n = 0;
	int		 found = 0;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s/%s' 2>/dev/null", dir, name);
	if ((f = popen(cmd, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (found || (p = strstr(line, "Build ID: ")) == NULL)
			continue;
		found = 1;
		for (p += 10; n < max && sscanf(p, "%2x", &byte) == 1; p += 2)
			out[n++] = (unsigned char)byte;
	}
	pclose(f);
	return found ? (int)n : -1;
}

static int
fileid_hex(const char *name, const void *p, size_t len, char out[33])
{
	unsigned char	id[16];
	int		fd, rc;

	if (writefile(name, p, len) != 0 || (fd = openf(name)) == -1)
		return -EIO;
	rc = elfinfo_fileid(fd, id);
	close(fd);
	if (rc == 0)
		hex_encode(id, sizeof(id), out);
	return rc;
}

/* The quality markers' names read back as written, one table for both. */
static void
test_quality_names(void)
{
	char		buf[128];
	uint32_t	all = ELFINFO_Q_DEBUG_INFO | ELFINFO_Q_DEBUG_LINE |
			    ELFINFO_Q_SYMTAB | ELFINFO_Q_DYNSYM |
			    ELFINFO_Q_GOPCLNTAB | ELFINFO_Q_COMPRESSED;

	elfinfo_quality_str(all, buf, sizeof(buf));
	ok(strcmp(buf, "debug_info,debug_line,symtab,dynsym,gopclntab,"
	    "compressed") == 0, "quality names: %s", buf);
	ok(elfinfo_quality_parse(buf) == all, "quality names read back");
	elfinfo_quality_str(0, buf, sizeof(buf));
	ok(strcmp(buf, "none") == 0 && elfinfo_quality_parse(buf) == 0,
	    "no marker: none");
	ok(elfinfo_quality_parse(" symtab, bogus ,debug_line") ==
	    (ELFINFO_Q_SYMTAB | ELFINFO_Q_DEBUG_LINE),
	    "blanks and unknown names");
}

static void
test_fileid(void)
{
	static const unsigned char v1[] = { 0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3, 4 };
	unsigned char	*big, id[16], id2[16];
	char		 h[33] = "";
	off_t		 off;
	int		 fd, i, rc;

	rc = fileid_hex("v1", v1, sizeof(v1), h);
	ok(rc == 0 && strcmp(h, "caf6e5907166ac76eef618e5f7f59cd9") == 0,
	    "fileid 9 bytes: %s", h);
	rc = fileid_hex("v2", "", 0, h);
	ok(rc == 0 && strcmp(h, "af5570f5a1810b7af78caf4bc70a660f") == 0,
	    "fileid empty file: %s", h);
	if ((big = malloc(10240)) == NULL)
		return;
	for (i = 0; i < 10240; i++)
		big[i] = (unsigned char)i;
	rc = fileid_hex("v3", big, 10240, h);
	ok(rc == 0 && strcmp(h, "43a0e5b6c86a422f0e8c654be08b31f5") == 0,
	    "fileid 0..255 x40: %s", h);
	free(big);

	/* pread only: the caller's offset is kept, and the result with it. */
	fd = openf("v3");
	off = lseek(fd, 1234, SEEK_SET);
	rc = elfinfo_fileid(fd, id);
	ok(off == 1234 && rc == 0 && lseek(fd, 0, SEEK_CUR) == 1234,
	    "fileid keeps the file offset");
	rc = elfinfo_fileid(fd, id2);
	ok(rc == 0 && memcmp(id, id2, 16) == 0, "fileid is repeatable");
	close(fd);
	ok(elfinfo_fileid(-1, id) == -EBADF, "fileid on a bad fd: -EBADF");
}

static void
test_read(void)
{
	struct elfinfo	 u, s, d, n, z, d4, o;
	unsigned char	 rid[64];
	char		 h[2 * ELFINFO_BUILDID_MAX + 1];
	int		 rlen;

	ok(readinfo("prog", &u) == 0, "read unstripped");
	ok(readinfo("prog.stripped", &s) == 0, "read stripped");
	ok(readinfo("prog.debug", &d) == 0, "read .debug");
	ok(readinfo("prog.noid", &n) == 0, "read no-build-id");
	ok(readinfo("prog.gz", &z) == 0, "read -gz=zlib");
	ok(readinfo("prog4", &d4) == 0, "read DWARF 4");
	ok(readinfo("a.o", &o) == 0 && o.buildid_len == 0 && o.is_debuginfo,
	    "read a relocatable object (no program headers)");
	ok(!o.is_executable, "a relocatable object is not an executable");

	hex_encode(u.buildid, u.buildid_len < 64 ? u.buildid_len : 64, h);
	ok(u.buildid_len == 20, "build-id is 20 bytes: %s", h);
	rlen = readelf_buildid("prog", rid, sizeof(rid));
	ok(rlen == (int)u.buildid_len && memcmp(rid, u.buildid, rlen) == 0,
	    "build-id matches readelf -n");
	ok(s.buildid_len == u.buildid_len &&
	    memcmp(s.buildid, u.buildid, u.buildid_len) == 0,
	    "stripped has the same build-id");
	ok(d.buildid_len == u.buildid_len &&
	    memcmp(d.buildid, u.buildid, u.buildid_len) == 0,
	    ".debug has the same build-id");
	ok(n.buildid_len == 0, "--build-id=none: buildid_len 0");
	ok(readelf_buildid("prog.noid", rid, sizeof(rid)) == -1,
	    "readelf agrees there is no build-id note");

	ok(u.is_executable && u.is_debuginfo, "unstripped: executable+debuginfo");
	ok(s.is_executable && !s.is_debuginfo, "stripped: executable only");
	ok(!d.is_executable && d.is_debuginfo, ".debug: debuginfo only");
	ok(n.is_executable && n.is_debuginfo, "no-build-id: executable+debuginfo");
	ok(z.is_executable && z.is_debuginfo, "-gz: executable+debuginfo");
	ok(d4.is_executable && d4.is_debuginfo, "DWARF 4: executable+debuginfo");

	ok((u.quality & (ELFINFO_Q_DEBUG_INFO | ELFINFO_Q_DEBUG_LINE |
	    ELFINFO_Q_SYMTAB | ELFINFO_Q_DYNSYM)) == (ELFINFO_Q_DEBUG_INFO |
	    ELFINFO_Q_DEBUG_LINE | ELFINFO_Q_SYMTAB | ELFINFO_Q_DYNSYM),
	    "unstripped quality: debug_info, debug_line, symtab, dynsym (%#x)",
	    u.quality);
	ok(!(u.quality & (ELFINFO_Q_COMPRESSED | ELFINFO_Q_GOPCLNTAB)),
	    "unstripped quality: not compressed, no gopclntab");
	ok(s.quality == ELFINFO_Q_DYNSYM, "stripped quality: dynsym only (%#x)",
	    s.quality);
	ok((d.quality & ELFINFO_Q_SYMTAB) && (d.quality & ELFINFO_Q_DEBUG_LINE),
	    ".debug quality: symtab, debug_line (%#x)", d.quality);
	ok(!(d.quality & ELFINFO_Q_DYNSYM), ".debug quality: NOBITS .dynsym "
	    "does not count");
	ok((z.quality & ELFINFO_Q_COMPRESSED) &&
	    (z.quality & ELFINFO_Q_DEBUG_INFO), "-gz quality: compressed, "
	    "debug_info (%#x)", z.quality);
}

/*
 * elfinfo_head() as a fetch calls it: with the first bytes only, then
 * again with as many as it asked for, until it decides; the build-id it
 * finds is elfinfo_read()'s, and e_shoff the section headers'.
 */
static int
head_of(const char *name, struct elfinfo *ei, uint64_t *shoff, size_t *used)
{
	unsigned char	*p;
	uint64_t	 need;
	size_t		 len, n;
	int		 rc;

	if ((p = readfile(name, &len)) == NULL)
		return -EIO;
	for (n = 16;; n = (size_t)need) {
		rc = elfinfo_head(p, n, ei, shoff, &need);
		if (rc != -EAGAIN || need <= n || need > len)
			break;
	}
	*used = n;
	free(p);
	return rc;
}

static void
test_head(void)
{
	static const char *const names[] = { "prog", "prog.stripped",
	    "prog.debug", "prog4" };
	struct elfinfo	 h, full;
	unsigned char	 junk[64] = "\177ELF";
	uint64_t	 shoff, need;
	size_t		 i, used;
	int		 rc;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		rc = head_of(names[i], &h, &shoff, &used);
		ok(rc == 0 && readinfo(names[i], &full) == 0 &&
		    h.buildid_len == full.buildid_len && h.buildid_len > 0 &&
		    memcmp(h.buildid, full.buildid, h.buildid_len) == 0,
		    "head of %s: the build-id from its first %zu bytes (%d)",
		    names[i], used, rc);
		ok(used < 4096 && shoff > used, "head of %s: a head (%zu "
		    "bytes), the section headers after it (%llu)", names[i],
		    used, (unsigned long long)shoff);
	}
	ok(head_of("prog.noid", &h, &shoff, &used) == -ENOENT,
	    "head without a build-id note: -ENOENT (read the whole file)");
	ok(head_of("a.o", &h, &shoff, &used) == -ENOENT,
	    "head of a relocatable object (no program headers): -ENOENT");
	ok(elfinfo_head((const unsigned char *)"\177ELF", 4, &h, &shoff,
	    &need) == -EAGAIN && need == 16, "4 bytes: -EAGAIN, 16 wanted");
	ok(elfinfo_head((const unsigned char *)"#!/bin/sh\nexit 0\n\n", 18,
	    &h, &shoff, &need) == -ENOEXEC, "not ELF: -ENOEXEC");
	/* ELFCLASS64, LSB, program headers far past anything sent. */
	junk[4] = 2;
	junk[5] = 1;
	junk[32] = 0xff;
	junk[36] = 0xff;
	junk[54] = 56;
	junk[56] = 1;
	ok(elfinfo_head(junk, sizeof(junk), &h, &shoff, &need) == -ENOENT,
	    "program headers past 4 GiB: -ENOENT");
}

static void
test_section(void)
{
	struct buf	 b, ref, raw;
	Elf64_Chdr	 ch;
	unsigned char	*want;
	size_t		 wantlen;
	int		 fd, rc;

	want = readfile("prog.text", &wantlen);
	rc = section("prog", ".text", &b);
	ok(rc == 0 && want != NULL && b.len == wantlen && wantlen > 0 &&
	    memcmp(b.p, want, wantlen) == 0,
	    ".text equals objcopy -O binary (%zu bytes)", b.len);
	free(b.p);
	rc = section("prog.stripped", ".text", &b);
	ok(rc == 0 && want != NULL && b.len == wantlen &&
	    memcmp(b.p, want, wantlen) == 0, "stripped .text is the same");
	free(b.p);
	free(want);

	rc = section("prog.debug", ".text", &b);
	ok(rc == -ENOENT && b.calls == 0, ".debug NOBITS .text: -ENOENT");
	free(b.p);
	rc = section("prog", ".no_such_section", &b);
	ok(rc == -ENOENT && b.calls == 0, "missing section: -ENOENT");
	free(b.p);
	rc = section("prog", "", &b);
	ok(rc == -ENOENT, "empty name (the null section): -ENOENT");
	free(b.p);
	rc = section("prog.stripped", ".debug_info", &b);
	ok(rc == -ENOENT, "stripped .debug_info: -ENOENT");
	free(b.p);

	/* The .debug file's .debug_info is the unstripped one's. */
	rc = section("prog", ".debug_info", &ref);
	ok(rc == 0 && ref.len > 0, "unstripped .debug_info (%zu bytes)",
	    ref.len);
	rc = section("prog.debug", ".debug_info", &b);
	ok(rc == 0 && b.len == ref.len && memcmp(b.p, ref.p, b.len) == 0,
	    ".debug .debug_info equals unstripped");
	free(b.p);

	/* Compressed stays compressed: a zlib Chdr, then the stream. */
	memset(&ch, 0, sizeof(ch));
	rc = section("prog.gz", ".debug_info", &raw);
	if (raw.len >= sizeof(ch))
		memcpy(&ch, raw.p, sizeof(ch));
	ok(rc == 0 && ch.ch_type == ELFCOMPRESS_ZLIB,
	    "-gz .debug_info is served raw with its zlib header");
	ok(ch.ch_size == ref.len && raw.len != ref.len,
	    "-gz .debug_info: ch_size %llu is the uncompressed size",
	    (unsigned long long)ch.ch_size);
	free(raw.p);
	free(ref.p);

	/* 3 MiB of .rodata arrives in pieces, and whole. */
	want = readfile("big.rodata", &wantlen);
	rc = section("big", ".rodata", &b);
	ok(rc == 0 && want != NULL && wantlen > 3 * 1024 * 1024 &&
	    b.len == wantlen && memcmp(b.p, want, wantlen) == 0 && b.calls > 1,
	    "3 MiB .rodata equals objcopy -O binary, in %d pieces", b.calls);
	free(b.p);
	free(want);

	fd = openf("prog");
	ok(elfinfo_section(fd, ".text", sink_stop, NULL) == 42,
	    "a sink's non-zero return stops the copy and is returned");
	close(fd);
}

static void
test_sources(void)
{
	struct srcs	s;
	char		c[PATH_MAX], h[PATH_MAX];
	int		rc;

	path(c, sizeof(c), "prog.c");
	path(h, sizeof(h), "inc/fix.h");

	rc = sources("prog.debug", &s, 0);
	ok(rc == 0 && srcs_count(&s, c) == 1, ".debug sources name %s once",
	    c);
	ok(srcs_count(&s, h) == 1, ".debug sources name %s (relative "
	    "include joined with comp_dir)", h);
	ok(s.n > 2 && srcs_alldistinct_abs(&s),
	    ".debug sources: %d, all absolute and distinct", s.n);
	srcs_free(&s);

	rc = sources("prog", &s, 0);
	ok(rc == 0 && srcs_count(&s, c) == 1 && srcs_alldistinct_abs(&s),
	    "unstripped sources name the .c file");
	srcs_free(&s);

	rc = sources("prog4", &s, 0);
	ok(rc == 0 && srcs_count(&s, c) == 1 && srcs_count(&s, h) == 1 &&
	    srcs_alldistinct_abs(&s), "DWARF 4 sources: %d, .c and .h", s.n);
	ok(srcs_count(&s, "???") == 0, "DWARF 4: no placeholder entry 0");
	srcs_free(&s);

	rc = sources("prog.gz", &s, 0);
	ok(rc == 0 && srcs_count(&s, c) == 1, "-gz sources name the .c file");
	srcs_free(&s);

	rc = sources("prog2", &s, 0);
	ok(rc == 0 && srcs_count(&s, c) == 1 && srcs_alldistinct_abs(&s),
	    "two units naming the same files: each reported once (%d)", s.n);
	srcs_free(&s);

	rc = sources("prog.stripped", &s, 0);
	ok(rc == 0 && s.n == 0, "stripped: no DWARF, 0 and no callbacks");
	srcs_free(&s);

	rc = sources("prog.debug", &s, 1);
	ok(rc == 7 && s.n == 1, "a callback's non-zero return stops the walk");
	srcs_free(&s);
}

static void
check_bad(const char *name, const char *what)
{
	struct elfinfo	ei;
	struct buf	b;
	struct srcs	s;
	int		rc;

	rc = readinfo(name, &ei);
	ok(rc == -ENOEXEC && ei.buildid_len == 0 && ei.quality == 0 &&
	    !ei.is_executable && !ei.is_debuginfo,
	    "%s: read -ENOEXEC (%d), *out zeroed", what, rc);
	rc = section(name, ".text", &b);
	ok(rc == -ENOEXEC && b.calls == 0, "%s: section -ENOEXEC (%d)", what,
	    rc);
	free(b.p);
	rc = sources(name, &s, 0);
	ok(rc == -ENOEXEC && s.n == 0, "%s: sources -ENOEXEC (%d)", what, rc);
	srcs_free(&s);
}

/* Damage a copy of prog: the ELF header, or section header i. */
static int
damage(const char *name, int what)
{
	unsigned char	*p;
	size_t		 len, i, at;
	Elf64_Ehdr	 eh;
	Elf64_Shdr	 sh;
	int		 rc;

	if ((p = readfile("prog", &len)) == NULL || len < sizeof(eh))
		goto fail;
	memcpy(&eh, p, sizeof(eh));
	switch (what) {
	case 0:		/* section table pushed past the end of the file */
		eh.e_shoff = len - 64;
		break;
	case 1:		/* section name table index out of range */
		eh.e_shstrndx = eh.e_shnum + 5;
		break;
	case 2:		/* a PROGBITS section running past the end */
		for (i = 1; i < eh.e_shnum; i++) {
			at = eh.e_shoff + i * sizeof(sh);
			if (at + sizeof(sh) > len)
				goto fail;
			memcpy(&sh, p + at, sizeof(sh));
			if (sh.sh_type == SHT_PROGBITS && sh.sh_size > 16) {
				sh.sh_offset = len - 8;
				memcpy(p + at, &sh, sizeof(sh));
				break;
			}
		}
		if (i == eh.e_shnum)
			goto fail;
		break;
	}
	memcpy(p, &eh, sizeof(eh));
	rc = writefile(name, p, len);
	free(p);
	return rc;
fail:
	free(p);
	return -1;
}

static void
test_bad(void)
{
	unsigned char	*p;
	size_t		 len;

	if ((p = readfile("prog", &len)) == NULL || len < 4096) {
		ok(0, "read prog for the broken-file tests");
		free(p);
		return;
	}
	writefile("notelf", prog_c, sizeof(prog_c) - 1);
	writefile("empty", "", 0);
	writefile("magic", "\177ELF", 4);
	writefile("t100", p, 100);
	writefile("half", p, len / 2);
	free(p);
	ok(damage("badshoff", 0) == 0 && damage("badstrndx", 1) == 0 &&
	    damage("badscn", 2) == 0, "damaged copies written");

	check_bad("notelf", "text file");
	check_bad("empty", "empty file");
	check_bad("magic", "bare ELF magic");
	check_bad("t100", "first 100 bytes");
	check_bad("half", "first half");
	check_bad("badshoff", "e_shoff past the end");
	check_bad("badstrndx", "e_shstrndx out of range");
	check_bad("badscn", "a section past the end");
}

/*
 * Hostile headers: flip bytes of the ELF header, the program and section
 * header tables and the build-id note, one at a time.  Any answer is fine
 * as long as nothing crashes (ASan watches) and failures are -ENOEXEC.
 */
static void
test_mutations(void)
{
	unsigned char	*orig, *p;
	size_t		 len, off, i, n = 0;
	Elf64_Ehdr	 eh;
	struct elfinfo	 ei;
	struct buf	 b;
	struct srcs	 s;
	int		 fd, rc, bad = 0;
	static const unsigned char vals[] = { 0x00, 0xff, 0x7f, 0x80, 0x01 };

	if ((orig = readfile("prog.stripped", &len)) == NULL ||
	    (p = malloc(len)) == NULL) {
		ok(0, "read prog.stripped for mutations");
		free(orig);
		return;
	}
	memcpy(&eh, orig, sizeof(eh));
	for (i = 0; i < 64 + 56 * 4 + (size_t)eh.e_shnum * 64; i += 3) {
		off = i < 64 + 56 * 4 ? i : eh.e_shoff + (i - 64 - 56 * 4);
		if (off >= len)
			continue;
		memcpy(p, orig, len);
		p[off] = vals[i % sizeof(vals)];
		if (writefile("mut", p, len) != 0 || (fd = openf("mut")) == -1)
			break;
		rc = elfinfo_read(fd, &ei);
		if (rc != 0 && rc != -ENOEXEC)
			bad++;
		memset(&b, 0, sizeof(b));
		rc = elfinfo_section(fd, ".text", sink, &b);
		if (rc != 0 && rc != -ENOEXEC && rc != -ENOENT)
			bad++;
		free(b.p);
		memset(&s, 0, sizeof(s));
		rc = elfinfo_sources(fd, srccb, &s);
		if (rc != 0 && rc != -ENOEXEC)
			bad++;
		srcs_free(&s);
		close(fd);
		n++;
	}
	ok(n > 300 && bad == 0, "%zu mutated headers: no crash, only "
	    "-ENOEXEC/-ENOENT (%d other)", n, bad);
	free(p);
	free(orig);
}

/* The DWARF 5 line tables alone give what libdw gives. */
static void
test_sources_lines(void)
{
	static const char *const v5[] = { "prog.debug", "prog", "prog.gz",
	    "prog2" };
	struct srcs	a, b;
	size_t		i;
	int		ra, rb;

	for (i = 0; i < sizeof(v5) / sizeof(v5[0]); i++) {
		ra = sources_how(v5[i], ELFINFO_SOURCES_LIBDW, &a);
		rb = sources_how(v5[i], ELFINFO_SOURCES_LINES, &b);
		ok(ra == 0 && rb == 0 && a.n > 0 && srcs_same(&a, &b),
		    "%s: line tables alone give libdw's %d sources (%d)",
		    v5[i], a.n, b.n);
		srcs_free(&a);
		srcs_free(&b);
	}
	rb = sources_how("prog4", ELFINFO_SOURCES_LINES, &b);
	ok(rb == -ENOTSUP, "DWARF 4: the line tables alone say no (%d)", rb);
	srcs_free(&b);
	/* A unit of each: the line tables give some, libdw the rest, none
	 * twice. */
	ra = sources_how("prog45", ELFINFO_SOURCES_LIBDW, &a);
	rb = sources_how("prog45", 0, &b);
	ok(ra == 0 && rb == 0 && a.n > 0 && srcs_same(&a, &b) &&
	    srcs_alldistinct_abs(&b),
	    "DWARF 4 and 5 units: libdw's %d sources, each once", a.n);
	srcs_free(&a);
	srcs_free(&b);
}

static int
build(void)
{
	char	pb[PATH_MAX];

	path(pb, sizeof(pb), "inc");
	if (mkdir(pb, 0755) != 0 ||
	    writefile("prog.c", prog_c, sizeof(prog_c) - 1) != 0 ||
	    writefile("inc/fix.h", fix_h, sizeof(fix_h) - 1) != 0 ||
	    writefile("big.c", big_c, sizeof(big_c) - 1) != 0)
		return -1;
	/* A relative source name, so comp_dir joining is exercised. */
	return run("cd '%s' && gcc -g -O0 prog.c -o prog && "
	    "objcopy --only-keep-debug prog prog.debug && "
	    "strip -o prog.stripped prog && "
	    "gcc -g -O0 -Wl,--build-id=none prog.c -o prog.noid && "
	    "gcc -g -O0 -gz=zlib prog.c -o prog.gz && "
	    "gcc -g -gdwarf-4 -O0 prog.c -o prog4 && "
	    "gcc -g -O0 -c prog.c -o a.o && "
	    "gcc -g -O0 -Dmain=main2 -Dcounter=counter2 -c prog.c -o b.o && "
	    "gcc -g a.o b.o -o prog2 && "
	    "gcc -g -gdwarf-4 -O0 -Dmain=main2 -Dcounter=counter2 -c prog.c "
	    "-o b4.o && gcc -g a.o b4.o -o prog45 && "
	    "objcopy -O binary --only-section=.text prog prog.text && "
	    "gcc -O0 big.c -o big && "
	    "objcopy -O binary --only-section=.rodata big big.rodata",
	    dir);
}

int
main(void)
{
	const char	*tmp;
	char		 tmpl[PATH_MAX];

	if (run("gcc --version >/dev/null 2>&1 && "
	    "objcopy --version >/dev/null 2>&1 && "
	    "readelf --version >/dev/null 2>&1") != 0) {
		printf("SKIP: gcc/binutils not available\n1..0 # SKIP\n");
		return 77;
	}
	if ((tmp = getenv("TMPDIR")) == NULL || *tmp == '\0')
		tmp = "/tmp";
	snprintf(tmpl, sizeof(tmpl), "%s/test_elfinfo.XXXXXX", tmp);
	if (mkdtemp(tmpl) == NULL || realpath(tmpl, dir) == NULL) {
		printf("Bail out! mkdtemp %s: %s\n", tmpl, strerror(errno));
		return 1;
	}

	ok(elfinfo_init() == 0, "elfinfo_init");
	ok(build() == 0, "fixtures built in %s", dir);

	test_quality_names();
	test_fileid();
	test_read();
	test_head();
	test_section();
	test_sources();
	test_sources_lines();
	test_bad();
	test_mutations();

	rmtree(dir);
	return done();
}
