/*
 * elfinfo: build-id, classification, sections, sources and FileID of an
 * ELF file, read with libelf and libdw.  See elfinfo.h for the contract.
 */
#include <sys/stat.h>

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <openssl/err.h>
#include <openssl/evp.h>

#include "base/buf.h"
#include "dwline.h"
#include "elfinfo.h"

/* Largest piece handed to a section sink at once. */
#define CHUNK		(1024 * 1024)
/* FileID: bytes hashed from each end of the file. */
#define FILEID_PART	4096

unsigned
elfinfo_score(uint32_t q)
{
	return (q & ELFINFO_Q_DEBUG_INFO ? 8u : 0) |
	    (q & ELFINFO_Q_DEBUG_LINE ? 4u : 0) |
	    (q & ELFINFO_Q_SYMTAB ? 2u : 0) |
	    (q & (ELFINFO_Q_DYNSYM | ELFINFO_Q_GOPCLNTAB) ? 1u : 0);
}

/* The quality markers' names, as X-Symhub-Quality and the logs spell them. */
static const struct {
	uint32_t	 bit;
	const char	*name;
} qnames[] = {
	{ ELFINFO_Q_DEBUG_INFO, "debug_info" },
	{ ELFINFO_Q_DEBUG_LINE, "debug_line" },
	{ ELFINFO_Q_SYMTAB, "symtab" },
	{ ELFINFO_Q_DYNSYM, "dynsym" },
	{ ELFINFO_Q_GOPCLNTAB, "gopclntab" },
	{ ELFINFO_Q_COMPRESSED, "compressed" },
};

uint32_t
elfinfo_quality_parse(const char *s)
{
	uint32_t	q = 0;
	size_t		i, len;

	while (*s) {
		s += strspn(s, " \t,");
		len = strcspn(s, " \t,");
		for (i = 0; i < sizeof(qnames) / sizeof(qnames[0]); i++)
			if (strlen(qnames[i].name) == len &&
			    strncmp(s, qnames[i].name, len) == 0)
				q |= qnames[i].bit;
		s += len;
	}
	return q;
}

void
elfinfo_quality_str(uint32_t q, char *buf, size_t len)
{
	size_t	i, n = 0;
	int	w;

	if (len == 0)
		return;
	buf[0] = '\0';
	for (i = 0; i < sizeof(qnames) / sizeof(qnames[0]); i++) {
		if (!(q & qnames[i].bit))
			continue;
		w = snprintf(buf + n, len - n, "%s%s", n ? "," : "",
		    qnames[i].name);
		if (w < 0 || (size_t)w >= len - n)
			break;
		n += (size_t)w;
	}
	if (n == 0)
		snprintf(buf, len, "none");
}

int
elfinfo_init(void)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	return 0;
}

static int
preadall(int fd, void *buf, size_t len, off_t off)
{
	unsigned char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		n = pread(fd, p, len, off);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;	/* the file shrank under us */
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/*
 * Whether a header table of n entries (the ELF header said raw) at off
 * lies inside the file.  libelf 0.188 quietly reports a table that does
 * not fit as empty, so a header that promises entries where libelf found
 * none is a truncated file.
 */
static int
tableok(uint64_t size, uint64_t off, size_t raw, size_t n, size_t entsize,
    size_t want)
{
	if (n == 0)
		return raw == 0;
	if (off == 0 || entsize != want || want == 0 || off > size)
		return 0;
	return n <= (size - off) / want;
}

/*
 * Open fd as ELF and check what libelf leaves to its callers: that every
 * section with file contents lies inside the file and that the section
 * and program header tables can be read.  libelf itself refuses to hand
 * out data beyond the file, but finding out here lets every entry point
 * answer -ENOEXEC for a truncated file instead of a partial result.
 * The program headers' segments are not checked: a debug file made by
 * eu-strip or objcopy keeps the original phdrs, which may point past its
 * end.
 */
static int
elfopen(int fd, Elf **ep, size_t *strndx)
{
	struct stat	 st;
	unsigned char	 ident[SELFMAG];
	Elf		*elf = NULL;
	Elf_Scn		*scn = NULL;
	GElf_Ehdr	 ehdr;
	GElf_Shdr	 shdr;
	GElf_Phdr	 phdr;
	uint64_t	 size;
	size_t		 n, i;
	int		 rc;

	*ep = NULL;
	if (fstat(fd, &st) == -1)
		return -errno;
	size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
	/* Read the magic ourselves, so a read error is not taken for
	 * "not ELF" (libelf does not tell the two apart). */
	if (size < SELFMAG)
		return -ENOEXEC;
	if ((rc = preadall(fd, ident, sizeof(ident), 0)) != 0)
		return rc;
	if (memcmp(ident, ELFMAG, SELFMAG) != 0)
		return -ENOEXEC;

	rc = -ENOEXEC;
	if ((elf = elf_begin(fd, ELF_C_READ_MMAP, NULL)) == NULL)
		goto out;
	if (elf_kind(elf) != ELF_K_ELF || gelf_getehdr(elf, &ehdr) == NULL)
		goto out;
	if (elf_getshdrnum(elf, &n) != 0 || elf_getshdrstrndx(elf, strndx) != 0)
		goto out;
	if (!tableok(size, ehdr.e_shoff, ehdr.e_shnum, n, ehdr.e_shentsize,
	    gelf_fsize(elf, ELF_T_SHDR, 1, EV_CURRENT)))
		goto out;
	if (n > 0 && *strndx >= n)
		goto out;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (gelf_getshdr(scn, &shdr) == NULL)
			goto out;
		if (shdr.sh_type == SHT_NOBITS || shdr.sh_size == 0)
			continue;
		if (shdr.sh_offset > size || shdr.sh_size > size - shdr.sh_offset)
			goto out;
	}
	if (elf_getphdrnum(elf, &n) != 0)
		goto out;
	if (!tableok(size, ehdr.e_phoff, ehdr.e_phnum, n, ehdr.e_phentsize,
	    gelf_fsize(elf, ELF_T_PHDR, 1, EV_CURRENT)))
		goto out;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &phdr) == NULL)
			goto out;
	*ep = elf;
	elf = NULL;
	rc = 0;
out:
	if (elf != NULL)
		elf_end(elf);
	return rc;
}

static const char *
scnname(Elf *elf, size_t strndx, const GElf_Shdr *shdr)
{
	const char	*s;

	s = elf_strptr(elf, strndx, shdr->sh_name);
	return s != NULL ? s : "";
}

/* Fill *out from an ELF that elfopen() accepted. */
static int
classify(Elf *elf, size_t strndx, struct elfinfo *out)
{
	Elf_Scn		*scn = NULL;
	GElf_Shdr	 shdr;
	GElf_Ehdr	 ehdr;
	const void	*id;
	const char	*name;
	ssize_t		 len;
	int		 full;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (gelf_getshdr(scn, &shdr) == NULL)
			return -ENOEXEC;
		name = scnname(elf, strndx, &shdr);
		full = shdr.sh_type != SHT_NOBITS && shdr.sh_size > 0;

		if (shdr.sh_type == SHT_PROGBITS &&
		    (shdr.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) ==
		    (SHF_ALLOC | SHF_EXECINSTR))
			out->is_executable = 1;
		if (shdr.sh_flags & SHF_COMPRESSED ||
		    strncmp(name, ".zdebug_", 8) == 0)
			out->quality |= ELFINFO_Q_COMPRESSED;
		if (!full)
			continue;
		if (strcmp(name, ".debug_info") == 0 ||
		    strcmp(name, ".zdebug_info") == 0) {
			out->is_debuginfo = 1;
			out->quality |= ELFINFO_Q_DEBUG_INFO;
		} else if (strcmp(name, ".debug_line") == 0 ||
		    strcmp(name, ".zdebug_line") == 0)
			out->quality |= ELFINFO_Q_DEBUG_LINE;
		else if (strcmp(name, ".gopclntab") == 0)
			out->quality |= ELFINFO_Q_GOPCLNTAB;
		if (shdr.sh_type == SHT_SYMTAB)
			out->quality |= ELFINFO_Q_SYMTAB;
		else if (shdr.sh_type == SHT_DYNSYM)
			out->quality |= ELFINFO_Q_DYNSYM;
	}

	/* Relocatable objects (.o) have code but are not what a client
	 * asks for as an executable; elfutils skips them too. */
	if (out->is_executable && (gelf_getehdr(elf, &ehdr) == NULL ||
	    (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN)))
		out->is_executable = 0;

	/* id points into libelf's mapping: copy it.  An id longer than any
	 * client can ask for is cut to what fits. */
	if ((len = dwelf_elf_gnu_build_id(elf, &id)) < 0)
		return -ENOEXEC;
	if (len > ELFINFO_BUILDID_MAX)
		len = ELFINFO_BUILDID_MAX;
	if (len > 0)
		memcpy(out->buildid, id, (size_t)len);
	out->buildid_len = (size_t)len;
	return 0;
}

int
elfinfo_read(int fd, struct elfinfo *out)
{
	Elf	*elf = NULL;
	size_t	 strndx;
	int	 rc;

	memset(out, 0, sizeof(*out));
	if ((rc = elfopen(fd, &elf, &strndx)) != 0)
		goto out;
	rc = classify(elf, strndx, out);
out:
	if (rc != 0)
		memset(out, 0, sizeof(*out));
	if (elf != NULL)
		elf_end(elf);
	return rc;
}

int
elfinfo_section(int fd, const char *name,
    int (*sink)(void *ctx, const void *buf, size_t len), void *ctx)
{
	Elf		*elf = NULL;
	Elf_Scn		*scn = NULL;
	Elf_Data	*data;
	GElf_Shdr	 shdr;
	const char	*p;
	size_t		 strndx, left, n;
	int		 rc;

	if ((rc = elfopen(fd, &elf, &strndx)) != 0)
		goto out;
	/* The first section of that name decides, as in elfutils
	 * debuginfod: a NOBITS one is a miss even if another follows. */
	rc = -ENOENT;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (gelf_getshdr(scn, &shdr) == NULL) {
			rc = -ENOEXEC;
			goto out;
		}
		if (strcmp(scnname(elf, strndx, &shdr), name) == 0)
			break;
	}
	if (scn == NULL || shdr.sh_type == SHT_NOBITS || shdr.sh_size == 0)
		goto out;
	/* Raw: a compressed section is served compressed. */
	if ((data = elf_rawdata(scn, NULL)) == NULL) {
		rc = -ENOEXEC;
		goto out;
	}
	if (data->d_buf == NULL || data->d_size == 0)
		goto out;
	rc = 0;
	for (p = data->d_buf, left = data->d_size; left > 0; p += n, left -= n) {
		n = left < CHUNK ? left : CHUNK;
		if ((rc = sink(ctx, p, n)) != 0)
			break;
	}
out:
	if (elf != NULL)
		elf_end(elf);
	return rc;
}

/*
 * A set of strings, open addressing with linear probing, so each source
 * path reaches the callback once however many units name it.
 */
struct strset {
	char	**v;
	size_t	  n;
	size_t	  cap;		/* a power of two, or 0 */
};

static uint64_t
strhash(const char *s)
{
	uint64_t	h = 0xcbf29ce484222325ULL;

	while (*s != '\0') {
		h ^= (unsigned char)*s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static int
strset_grow(struct strset *set)
{
	char	**v;
	size_t	  cap, i, j;

	cap = set->cap ? set->cap * 2 : 256;
	if ((v = calloc(cap, sizeof(*v))) == NULL)
		return -ENOMEM;
	for (i = 0; i < set->cap; i++) {
		if (set->v[i] == NULL)
			continue;
		for (j = strhash(set->v[i]) & (cap - 1); v[j] != NULL;
		    j = (j + 1) & (cap - 1))
			;
		v[j] = set->v[i];
	}
	free(set->v);
	set->v = v;
	set->cap = cap;
	return 0;
}

/*
 * Add s unless present.  @return 1 and *out the stored copy when added,
 * 0 when already present, -ENOMEM.
 */
static int
strset_add(struct strset *set, const char *s, const char **out)
{
	size_t	i;
	int	rc;

	if (2 * (set->n + 1) > set->cap && (rc = strset_grow(set)) != 0)
		return rc;
	for (i = strhash(s) & (set->cap - 1); set->v[i] != NULL;
	    i = (i + 1) & (set->cap - 1))
		if (strcmp(set->v[i], s) == 0)
			return 0;
	if ((set->v[i] = strdup(s)) == NULL)
		return -ENOMEM;
	set->n++;
	*out = set->v[i];
	return 1;
}

static void
strset_free(struct strset *set)
{
	size_t	i;

	for (i = 0; i < set->cap; i++)
		free(set->v[i]);
	free(set->v);
}

/*
 * Per unit: the line table's file names, joined with the unit's
 * DW_AT_comp_dir (or the line table's directory 0 when the attribute is
 * missing or unreadable, as with an unresolved dwz alt file).  A relative
 * name with no directory to anchor it cannot be asked for by a client and
 * is skipped, as elfutils debuginfod does.  A unit whose line table cannot
 * be read is skipped too.
 *
 * libdw has joined each name with its directory already, directory 0
 * being the compilation directory: a relative compilation directory
 * (Debian's "./csu") stays in front of the names of its own files
 * ("./csu/version.c"), which are whole as DWARF says; joining it again
 * would name "./csu/./csu/version.c", a file no build has.
 */
static int
unitsrcs(Dwarf_Die *cudie, struct strset *set, char **buf, size_t *bufsz,
    int (*cb)(void *, const char *), void *ctx)
{
	Dwarf_Attribute	 attr;
	Dwarf_Files	*files;
	const char	*const *dirs;
	const char	*dir = NULL, *name, *path;
	size_t		 nfiles, ndirs, dlen, nlen, i;
	int		 rc;

	if (dwarf_getsrcfiles(cudie, &files, &nfiles) != 0)
		return 0;
	if (dwarf_attr(cudie, DW_AT_comp_dir, &attr) != NULL)
		dir = dwarf_formstring(&attr);
	if ((dir == NULL || *dir == '\0') &&
	    dwarf_getsrcdirs(files, &dirs, &ndirs) == 0 && ndirs > 0)
		dir = dirs[0];
	dlen = dir != NULL ? strlen(dir) : 0;

	/* Entry 0 is a placeholder before DWARF 5 and the primary file
	 * (usually repeated as entry 1) from DWARF 5 on. */
	for (i = 0; i < nfiles; i++) {
		name = dwarf_filesrc(files, i, NULL, NULL);
		if (name == NULL || *name == '\0' ||
		    strcmp(name, "<built-in>") == 0 ||
		    strcmp(name, "???") == 0)
			continue;
		path = name;
		if (*name != '/' && !(dlen > 0 && *dir != '/' &&
		    strncmp(name, dir, dlen) == 0 && name[dlen] == '/')) {
			if (dlen == 0)
				continue;
			nlen = strlen(name);
			if (array_grow(buf, bufsz, dlen + nlen + 2, 1) != 0)
				return -ENOMEM;
			memcpy(*buf, dir, dlen);
			(*buf)[dlen] = '/';
			memcpy(*buf + dlen + 1, name, nlen + 1);
			path = *buf;
		}
		if ((rc = strset_add(set, path, &path)) < 0)
			return rc;
		if (rc == 1 && (rc = cb(ctx, path)) != 0)
			return rc;
	}
	return 0;
}

/*
 * Sources from DWARF 5 line tables alone.  A version 5 line table names
 * each file with its directory, directory 0 being the unit's compilation
 * directory, so .debug_line (with .debug_line_str and .debug_str) is all
 * it takes, and .debug_info, most of a debug file's bytes, need not be
 * decompressed (libdw decompresses every debug section it opens).
 */

/* A section's bytes, decompressed if need be.  @return 0, or -ENOENT. */
static int
lines_section(Elf *elf, size_t strndx, const char *name,
    struct dwline_sect *out)
{
	Elf_Scn		*scn = NULL;
	Elf_Data	*d;
	GElf_Shdr	 sh;
	const char	*n;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (gelf_getshdr(scn, &sh) == NULL ||
		    (n = elf_strptr(elf, strndx, sh.sh_name)) == NULL ||
		    strcmp(n, name) != 0)
			continue;
		if (sh.sh_type == SHT_NOBITS)
			return -ENOENT;
		if ((sh.sh_flags & SHF_COMPRESSED) &&
		    elf_compress(scn, 0, 0) < 0)
			return -ENOENT;
		if ((d = elf_getdata(scn, NULL)) == NULL || d->d_buf == NULL)
			return -ENOENT;
		out->p = d->d_buf;
		out->len = d->d_size;
		return 0;
	}
	return -ENOENT;
}

/*
 * The sources of every unit, as unitsrcs() gives them through libdw.
 * @return 0; -ENOTSUP when a unit is not DWARF 5 (then libdw reads them
 *         all); -EINVAL for a header dwline cannot read (libdw too);
 *         -ENOMEM; cb's value.
 */
static int
lines5_sources(Elf *elf, size_t strndx, struct strset *set, char **buf,
    size_t *bufsz, int (*cb)(void *, const char *), void *ctx)
{
	struct dwline_sects	 ls;
	struct dwline		 t;
	GElf_Ehdr		 eh;
	const char		*name, *dir, *comp, *path;
	uint64_t		 off;
	size_t			 i, clen, need;
	int			 rc = 0;

	memset(&ls, 0, sizeof(ls));
	memset(&t, 0, sizeof(t));
	if (gelf_getehdr(elf, &eh) == NULL ||
	    lines_section(elf, strndx, ".debug_line", &ls.line) < 0)
		return -ENOTSUP;
	(void)lines_section(elf, strndx, ".debug_line_str", &ls.line_str);
	(void)lines_section(elf, strndx, ".debug_str", &ls.str);
	ls.big = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	for (off = 0; rc == 0 && off < ls.line.len; off = t.next) {
		if ((rc = dwline_header(&ls, off, &t)) < 0)
			break;
		if (t.version != 5 || t.ndirs == 0) {
			rc = -ENOTSUP;	/* DWARF 2 to 4: libdw */
			break;
		}
		comp = t.dirs[0];	/* version 5: the unit's directory */
		clen = comp != NULL ? strlen(comp) : 0;
		for (i = 0; rc == 0 && i < t.nfiles; i++) {
			name = t.files[i].name;
			if (name == NULL || t.files[i].dir >= t.ndirs)
				continue;
			/* libdw: the directory's path, then the name. */
			dir = name[0] != '/' ? t.dirs[t.files[i].dir] : NULL;
			need = clen + (dir != NULL ? strlen(dir) : 0) +
			    strlen(name) + 3;
			if (array_grow(buf, bufsz, need, 1) != 0) {
				rc = -ENOMEM;
				break;
			}
			if (dir != NULL)
				snprintf(*buf, need, "%s/%s", dir, name);
			else
				snprintf(*buf, need, "%s", name);
			if (**buf == '\0' || strcmp(*buf, "<built-in>") == 0 ||
			    strcmp(*buf, "???") == 0)
				continue;
			/* unitsrcs: a relative one under the unit's
			 * compilation directory, unless its directory is that
			 * one (0): "./csu" stays relative, once. */
			if (**buf != '/' && t.files[i].dir != 0) {
				if (clen == 0)
					continue;
				memmove(*buf + clen + 1, *buf,
				    strlen(*buf) + 1);
				memcpy(*buf, comp, clen);
				(*buf)[clen] = '/';
			}
			if ((rc = strset_add(set, *buf, &path)) == 1)
				rc = cb(ctx, path);
		}
	}
	dwline_free(&t);
	return rc;
}

int
elfinfo_sources(int fd, int (*cb)(void *ctx, const char *path), void *ctx)
{
	return elfinfo_sources_how(fd, 0, cb, ctx);
}

int
elfinfo_sources_how(int fd, int how, int (*cb)(void *ctx, const char *path),
    void *ctx)
{
	struct elfinfo	 info;
	struct strset	 set = { NULL, 0, 0 };
	Elf		*elf = NULL;
	Dwarf		*dw = NULL;
	Dwarf_CU	*cu = NULL;
	Dwarf_Die	 cudie;
	char		*buf = NULL;
	size_t		 bufsz = 0, strndx;
	uint8_t		 unit_type;
	Dwarf_Half	 version;
	int		 rc;

	/* libdw does not say "no DWARF" apart from "bad DWARF" through
	 * its public API, so decide that from the section table. */
	memset(&info, 0, sizeof(info));
	if ((rc = elfopen(fd, &elf, &strndx)) != 0 ||
	    (rc = classify(elf, strndx, &info)) != 0 || !info.is_debuginfo)
		goto out;
	/* DWARF 5 line tables alone, when they say all: a source already
	 * given is not given again by libdw (the same set). */
	if (how != ELFINFO_SOURCES_LIBDW) {
		rc = lines5_sources(elf, strndx, &set, &buf, &bufsz, cb, ctx);
		/* Not all DWARF 5, or a table dwline does not take: libdw
		 * reads them all (what was given is not given twice). */
		if ((rc != -ENOTSUP && rc != -EINVAL) ||
		    how == ELFINFO_SOURCES_LINES)
			goto out;
	}
	rc = -ENOEXEC;
	if ((dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL)) == NULL)
		goto out;
	while ((rc = dwarf_get_units(dw, cu, &cu, &version, &unit_type,
	    &cudie, NULL)) == 0) {
		/* Unit type 0: libdw did not recognise the unit and cleared
		 * its DIE. */
		if (unit_type == 0)
			continue;
		if ((rc = unitsrcs(&cudie, &set, &buf, &bufsz, cb, ctx)) != 0)
			goto out;
	}
	/* 1 is the end of the units; -1 a unit header libdw cannot read. */
	rc = rc == 1 ? 0 : -ENOEXEC;
out:
	free(buf);
	strset_free(&set);
	if (dw != NULL)
		dwarf_end(dw);
	if (elf != NULL)
		elf_end(elf);
	return rc;
}

int
elfinfo_line_sections(int fd,
    int (*fn)(void *ctx, const struct dwline_sects *s), void *ctx)
{
	struct dwline_sects	 ls;
	GElf_Ehdr		 eh;
	Elf			*elf = NULL;
	size_t			 strndx;
	int			 rc;

	memset(&ls, 0, sizeof(ls));
	if ((rc = elfopen(fd, &elf, &strndx)) != 0)
		goto out;
	rc = -ENOEXEC;
	if (gelf_getehdr(elf, &eh) == NULL)
		goto out;
	rc = -ENOENT;
	if (lines_section(elf, strndx, ".debug_line", &ls.line) < 0)
		goto out;
	(void)lines_section(elf, strndx, ".debug_line_str", &ls.line_str);
	(void)lines_section(elf, strndx, ".debug_str", &ls.str);
	ls.big = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	rc = fn(ctx, &ls);
out:
	if (elf != NULL)
		elf_end(elf);
	return rc;
}

int
elfinfo_fileid(int fd, unsigned char out[16])
{
	struct stat	 st;
	EVP_MD_CTX	*md = NULL;
	unsigned char	 head[FILEID_PART], tail[FILEID_PART];
	unsigned char	 be[8], digest[EVP_MAX_MD_SIZE];
	unsigned int	 dlen;
	uint64_t	 size;
	size_t		 part;
	int		 i, rc;

	if (fstat(fd, &st) == -1)
		return -errno;
	size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
	part = size < FILEID_PART ? (size_t)size : FILEID_PART;
	if ((rc = preadall(fd, head, part, 0)) != 0 ||
	    (rc = preadall(fd, tail, part, (off_t)(size - part))) != 0)
		return rc;
	for (i = 0; i < 8; i++)
		be[i] = (unsigned char)(size >> (56 - 8 * i));

	rc = -ENOMEM;
	if ((md = EVP_MD_CTX_new()) == NULL)
		goto out;
	rc = -EIO;
	if (EVP_DigestInit_ex(md, EVP_sha256(), NULL) != 1 ||
	    EVP_DigestUpdate(md, head, part) != 1 ||
	    EVP_DigestUpdate(md, tail, part) != 1 ||
	    EVP_DigestUpdate(md, be, sizeof(be)) != 1 ||
	    EVP_DigestFinal_ex(md, digest, &dlen) != 1 || dlen < 16)
		goto out;
	memcpy(out, digest, 16);
	rc = 0;
out:
	/* Never log, but leave no stale entries for the next caller. */
	if (rc != 0)
		ERR_clear_error();
	EVP_MD_CTX_free(md);
	return rc;
}

const char *
elfinfo_unfit(const struct elfinfo *ei, int debug)
{
	if (debug && !(ei->quality & (ELFINFO_Q_DEBUG_INFO | ELFINFO_Q_SYMTAB)))
		return "no DWARF and no symbol table: nothing to debug with";
	if (!debug && !ei->is_executable)
		return "no code: not an executable or shared object (a "
		    "separate debug file is a debuginfo)";
	return NULL;
}

int
elfinfo_loads(int fd, struct elfinfo_load out[ELFINFO_LOADS_MAX])
{
	Elf		*elf = NULL;
	GElf_Phdr	 ph;
	size_t		 strndx, nph, i;
	int		 rc, n = 0;

	if ((rc = elfopen(fd, &elf, &strndx)) != 0)
		goto out;
	rc = -ENOEXEC;
	if (elf_getphdrnum(elf, &nph) != 0)
		goto out;
	for (i = 0; i < nph && n < ELFINFO_LOADS_MAX; i++) {
		if (gelf_getphdr(elf, (int)i, &ph) == NULL)
			goto out;
		if (ph.p_type != PT_LOAD)
			continue;
		out[n].offset = ph.p_offset;
		out[n].vaddr = ph.p_vaddr;
		out[n].filesz = ph.p_filesz;
		out[n].exec = (ph.p_flags & PF_X) != 0;
		n++;
	}
	rc = n;
out:
	if (elf != NULL)
		elf_end(elf);
	return rc;
}

int
elfinfo_loads_map(const struct elfinfo_load *loads, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		if (loads[i].exec && loads[i].filesz > 0)
			return 1;
	return 0;
}

int
elfinfo_load_addr(const struct elfinfo_load *loads, size_t n, uint64_t off,
    uint64_t *addr)
{
	size_t	i;

	for (i = 0; i < n; i++) {
		if (off >= loads[i].offset &&
		    off - loads[i].offset < loads[i].filesz) {
			*addr = off - loads[i].offset + loads[i].vaddr;
			return 0;
		}
	}
	return -ERANGE;
}

/*
 * elfinfo_head(): fields read by hand from a prefix of the file, in
 * either byte order, with every offset checked against len and against
 * overflow (the bytes come from an upstream, not yet verified).
 */
static uint64_t
head_get(const unsigned char *p, size_t n, int msb)
{
	uint64_t	v = 0;
	size_t		i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[msb ? i : n - 1 - i] << (8 * (n - 1 - i));
	return v;
}

/* Notes in buf[off, off + size): the build-id's, or -ENOENT. */
static int
head_notes(const unsigned char *buf, uint64_t off, uint64_t size, int msb,
    struct elfinfo *head)
{
	const unsigned char	*p = buf + off;
	uint64_t		 namesz, descsz, type, at = 0, dpos;

	while (size - at >= 12) {
		namesz = head_get(p + at, 4, msb);
		descsz = head_get(p + at + 4, 4, msb);
		type = head_get(p + at + 8, 4, msb);
		at += 12;
		if (namesz > size - at)
			break;
		dpos = at + ((namesz + 3) & ~(uint64_t)3);
		if (dpos > size || descsz > size - dpos)
			break;
		if (type == NT_GNU_BUILD_ID && namesz == 4 &&
		    memcmp(p + at, "GNU", 4) == 0 && descsz > 0) {
			head->buildid_len = descsz < ELFINFO_BUILDID_MAX ?
			    (size_t)descsz : ELFINFO_BUILDID_MAX;
			memcpy(head->buildid, p + dpos, head->buildid_len);
			return 0;
		}
		/* Aligned to 4 (all the notes symhub looks for are). */
		at = dpos + ((descsz + 3) & ~(uint64_t)3);
		if (at > size)
			break;
	}
	return -ENOENT;
}

int
elfinfo_head(const unsigned char *buf, size_t len, struct elfinfo *head,
    uint64_t *shoff, uint64_t *need)
{
	uint64_t	phoff, phentsize, phnum, i, e, off, size, most = 0;
	int		is64, msb, rc;

	memset(head, 0, sizeof(*head));
	*shoff = 0;
	*need = 0;
	if (len < EI_NIDENT) {
		*need = EI_NIDENT;
		return -EAGAIN;
	}
	if (memcmp(buf, ELFMAG, SELFMAG) != 0 ||
	    (buf[EI_CLASS] != ELFCLASS32 && buf[EI_CLASS] != ELFCLASS64) ||
	    (buf[EI_DATA] != ELFDATA2LSB && buf[EI_DATA] != ELFDATA2MSB))
		return -ENOEXEC;
	is64 = buf[EI_CLASS] == ELFCLASS64;
	msb = buf[EI_DATA] == ELFDATA2MSB;
	if (len < (is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr))) {
		*need = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
		return -EAGAIN;
	}
	if (is64) {
		phoff = head_get(buf + 32, 8, msb);
		*shoff = head_get(buf + 40, 8, msb);
		phentsize = head_get(buf + 54, 2, msb);
		phnum = head_get(buf + 56, 2, msb);
	} else {
		phoff = head_get(buf + 28, 4, msb);
		*shoff = head_get(buf + 32, 4, msb);
		phentsize = head_get(buf + 42, 2, msb);
		phnum = head_get(buf + 44, 2, msb);
	}
	/* PN_XNUM (the count in a section header) and odd entry sizes: the
	 * whole file will tell. */
	if (phnum == 0 || phnum == 0xffff ||
	    phentsize != (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		return -ENOENT;
	if (phoff > UINT32_MAX)
		return -ENOENT;
	e = phoff + phnum * phentsize;
	if (len < e) {
		*need = e;
		return -EAGAIN;
	}
	for (i = 0; i < phnum; i++) {
		const unsigned char *ph = buf + phoff + i * phentsize;

		if (head_get(ph, 4, msb) != PT_NOTE)
			continue;
		off = head_get(ph + (is64 ? 8 : 4), is64 ? 8 : 4, msb);
		size = head_get(ph + (is64 ? 32 : 16), is64 ? 8 : 4, msb);
		/* A note that far in is not a head's: store and forward. */
		if (off > UINT32_MAX || size > UINT32_MAX)
			continue;
		if (len < off + size) {
			if (off + size > most)
				most = off + size;
			continue;
		}
		if ((rc = head_notes(buf, off, size, msb, head)) == 0)
			return 0;
	}
	if (most > 0) {
		*need = most;
		return -EAGAIN;
	}
	return -ENOENT;
}
