/*
 * dwimage: the image is an ELF header, the sections' data and their
 * headers, nothing else: libdw needs no program header, and the symbol
 * table and text sections stay in the caller's Elf.  Headers are written
 * in the host's byte order only; other files keep going through libelf.
 */
#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "dwimage.h"

struct sec {
	const char		*name;
	const unsigned char	*src;	/* file bytes, past any Chdr */
	size_t			 srclen;
	size_t			 size;	/* inflated */
	size_t			 off;	/* in the image */
	uint64_t		 type, flags, align, entsize;
	int			 zlib;
	int			 err;
};

struct dwimage {
	unsigned char	*p;
	size_t		 len;
	Elf		*elf;
};

struct work {
	struct sec	**order;	/* largest first */
	size_t		  n, next;
	unsigned char	 *image;
};

/* Location lists: nothing that reads the image asks for them. */
static int
wanted(const char *name)
{
	if (strncmp(name, ".debug_", 7) == 0)
		return strcmp(name, ".debug_loc") != 0 &&
		    strcmp(name, ".debug_loclists") != 0;
	return strcmp(name, ".gnu_debugaltlink") == 0;
}

static void *
fill(void *arg)
{
	struct work *w = arg;
	struct libdeflate_decompressor *d = NULL;
	struct sec *s;
	size_t k, got;

	while ((k = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED)) <
	    w->n) {
		s = w->order[k];
		if (!s->zlib) {
			memcpy(w->image + s->off, s->src, s->size);
			continue;
		}
		if (d == NULL && (d = libdeflate_alloc_decompressor()) == NULL) {
			s->err = -ENOMEM;
			continue;
		}
		if (libdeflate_zlib_decompress(d, s->src, s->srclen,
		    w->image + s->off, s->size, &got) != LIBDEFLATE_SUCCESS ||
		    got != s->size)
			s->err = -ENOEXEC;
	}
	libdeflate_free_decompressor(d);
	return NULL;
}

static int
by_size(const void *a, const void *b)
{
	const struct sec *x = *(struct sec *const *)a;
	const struct sec *y = *(struct sec *const *)b;
	size_t wx = x->zlib ? x->srclen * 4 : x->size / 8;
	size_t wy = y->zlib ? y->srclen * 4 : y->size / 8;

	return wx < wy ? 1 : wx > wy ? -1 : 0;
}

/* Read the compression header of s (host byte order). */
static int
chdr(struct sec *s, int is64)
{
	uint64_t type, size, align;

#define READ_CHDR(Chdr) do {					\
	Chdr c;								\
									\
	if (s->srclen < sizeof(c))					\
		return -ENOEXEC;					\
	memcpy(&c, s->src, sizeof(c));					\
	type = c.ch_type;						\
	size = c.ch_size;						\
	align = c.ch_addralign;						\
	s->src += sizeof(c);						\
	s->srclen -= sizeof(c);						\
} while (0)

	if (is64)
		READ_CHDR(Elf64_Chdr);
	else
		READ_CHDR(Elf32_Chdr);
#undef READ_CHDR
	if (type != ELFCOMPRESS_ZLIB)
		return -ENOTSUP;
	/* Deflate expands 1032 times at most: a larger claim is a lie that
	 * would have the image allocate it all the same. */
	if (size > SIZE_MAX / 2 || size / 1032 > s->srclen)
		return -ENOEXEC;
	s->size = (size_t)size;
	s->align = align;
	s->zlib = 1;
	return 0;
}

/* The headers: an Ehdr, then at shoff the Shdrs (null, secs, shstrtab). */
#define HEADERS(Ehdr, Shdr) do {					\
	Ehdr *e = (Ehdr *)(void *)im->p;				\
	Shdr *sh = (Shdr *)(void *)(im->p + shoff);			\
									\
	memset(e, 0, sizeof(*e));					\
	memcpy(e->e_ident, eh.e_ident, EI_NIDENT);			\
	e->e_type = eh.e_type;						\
	e->e_machine = eh.e_machine;					\
	e->e_version = EV_CURRENT;					\
	e->e_flags = eh.e_flags;					\
	e->e_ehsize = sizeof(Ehdr);					\
	e->e_shoff = shoff;						\
	e->e_shentsize = sizeof(Shdr);					\
	e->e_shnum = (uint16_t)(n + 2);					\
	e->e_shstrndx = (uint16_t)(n + 1);				\
	memset(sh, 0, (n + 2) * sizeof(*sh));				\
	for (i = 0, name = 1; i < n; i++) {				\
		sh[i + 1].sh_name = (uint32_t)name;			\
		sh[i + 1].sh_type = (uint32_t)s[i].type;		\
		sh[i + 1].sh_flags = s[i].flags;			\
		sh[i + 1].sh_offset = s[i].off;				\
		sh[i + 1].sh_size = s[i].size;				\
		sh[i + 1].sh_addralign = s[i].align;			\
		sh[i + 1].sh_entsize = s[i].entsize;			\
		name += strlen(s[i].name) + 1;				\
	}								\
	sh[n + 1].sh_name = (uint32_t)name;				\
	sh[n + 1].sh_type = SHT_STRTAB;					\
	sh[n + 1].sh_offset = stroff;					\
	sh[n + 1].sh_size = strsz;					\
	sh[n + 1].sh_addralign = 1;					\
} while (0)

int
dwimage_create(Elf *elf, unsigned threads, struct dwimage **out)
{
	static const union { uint16_t u; unsigned char c[2]; } host = { 1 };
	struct dwimage *im = NULL;
	struct sec *s = NULL, **order = NULL;
	struct work w = { 0 };
	pthread_t tid[8];
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t shstrndx, n = 0, cap = 0, i, nz = 0, name;
	size_t strsz = 1 + sizeof(".shstrtab");
	size_t ehsz, shsz, off, stroff, shoff;
	unsigned started = 0;
	int is64, rc = -ENOTSUP;

	*out = NULL;
	if (gelf_getehdr(elf, &eh) == NULL ||
	    elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -ENOEXEC;
	is64 = eh.e_ident[EI_CLASS] == ELFCLASS64;
	if (eh.e_type == ET_REL || eh.e_ident[EI_DATA] !=
	    (host.c[0] == 1 ? ELFDATA2LSB : ELFDATA2MSB))
		return -ENOTSUP;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *nm;
		Elf_Data *d;

		if (gelf_getshdr(scn, &sh) == NULL ||
		    (nm = elf_strptr(elf, shstrndx, sh.sh_name)) == NULL)
			continue;
		if (strncmp(nm, ".zdebug", 7) == 0)
			goto out;	/* -ENOTSUP */
		if (!wanted(nm) || sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
			continue;
		if (array_grow(&s, &cap, n + 1, sizeof(*s)) != 0) {
			rc = -ENOMEM;
			goto out;
		}
		if ((d = elf_rawdata(scn, NULL)) == NULL || d->d_buf == NULL) {
			rc = -ENOEXEC;
			goto out;
		}
		memset(&s[n], 0, sizeof(s[n]));
		s[n].name = nm;
		s[n].src = d->d_buf;
		s[n].srclen = s[n].size = d->d_size;
		s[n].type = sh.sh_type;
		s[n].flags = sh.sh_flags & ~(uint64_t)SHF_COMPRESSED;
		s[n].align = sh.sh_addralign;
		s[n].entsize = sh.sh_entsize;
		if ((sh.sh_flags & SHF_COMPRESSED) &&
		    (rc = chdr(&s[n], is64)) < 0)
			goto out;
		nz += s[n].zlib;
		strsz += strlen(nm) + 1;
		n++;
	}
	rc = -ENOTSUP;
	if (nz == 0 || n + 2 >= SHN_LORESERVE)
		goto out;

	ehsz = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	shsz = is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	rc = -ENOMEM;
	off = ehsz;
	for (i = 0; i < n; i++) {
		size_t a = s[i].align;

		if (a < 8 || a > 4096 || (a & (a - 1)) != 0)
			a = 8;
		off = (off + a - 1) & ~(a - 1);
		s[i].off = off;
		if (SIZE_MAX / 2 - off < s[i].size)
			goto out;
		off += s[i].size;
	}
	stroff = off;
	shoff = (stroff + strsz + 7) & ~(size_t)7;
	if ((im = calloc(1, sizeof(*im))) == NULL ||
	    (order = malloc(n * sizeof(*order))) == NULL)
		goto out;
	im->len = shoff + (n + 2) * shsz;
	if ((im->p = malloc(im->len)) == NULL)
		goto out;

	/* Padding between the sections, then the names. */
	for (i = 0, off = ehsz; i < n; i++) {
		memset(im->p + off, 0, s[i].off - off);
		off = s[i].off + s[i].size;
	}
	memset(im->p + stroff, 0, shoff - stroff);
	for (i = 0, name = 1; i < n; i++) {
		memcpy(im->p + stroff + name, s[i].name, strlen(s[i].name) + 1);
		name += strlen(s[i].name) + 1;
	}
	memcpy(im->p + stroff + name, ".shstrtab", sizeof(".shstrtab"));
	if (is64)
		HEADERS(Elf64_Ehdr, Elf64_Shdr);
	else
		HEADERS(Elf32_Ehdr, Elf32_Shdr);

	for (i = 0; i < n; i++)
		order[i] = &s[i];
	qsort(order, n, sizeof(*order), by_size);
	w.order = order;
	w.n = n;
	w.image = im->p;
	if (threads > sizeof(tid) / sizeof(tid[0]))
		threads = sizeof(tid) / sizeof(tid[0]);
	while (started + 1 < threads && started + 1 < nz &&
	    pthread_create(&tid[started], NULL, fill, &w) == 0)
		started++;
	fill(&w);
	while (started > 0)
		pthread_join(tid[--started], NULL);
	for (i = 0; i < n; i++)
		if ((rc = s[i].err) < 0)
			goto out;

	if ((im->elf = elf_memory((char *)im->p, im->len)) == NULL ||
	    elf_kind(im->elf) != ELF_K_ELF) {
		rc = -ENOEXEC;
		goto out;
	}
	*out = im;
	im = NULL;
	rc = 0;
out:
	dwimage_free(im);
	free(order);
	free(s);
	return rc;
}

Elf *
dwimage_elf(const struct dwimage *im)
{
	return im->elf;
}

void
dwimage_free(struct dwimage *im)
{
	if (im == NULL)
		return;
	if (im->elf != NULL)
		elf_end(im->elf);
	free(im->p);
	free(im);
}
