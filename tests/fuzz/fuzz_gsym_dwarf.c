/*
 * Fuzz the DWARF to GSYM converter on whole ELF files.  The custom
 * mutator (libFuzzer only) mutates bytes inside one .debug_* section at
 * a time and keeps the ELF structure, so inputs reach the DIE walk, the
 * line programs and the inline trees instead of failing at the headers.
 */
#define _GNU_SOURCE 1
#include <sys/mman.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/elfinfo.h"
#include "fuzz.h"
#include "gsym/gsym_dwarf.h"

static int
null_sink(void *ctx, const void *buf, size_t len)
{
	(void)ctx;
	(void)buf;
	(void)len;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int	inited;
	int		fd;

	if (!inited) {
		if (elfinfo_init() < 0)
			abort();
		inited = 1;
	}
	if ((fd = memfd_create("fuzz", MFD_CLOEXEC)) < 0)
		return 0;
	if (write(fd, data, size) == (ssize_t)size)
		(void)gsym_dwarf_convert(fd, 1, null_sink, NULL, NULL);
	close(fd);
	return 0;
}

#ifdef SYMHUB_LIBFUZZER
size_t	LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max);
size_t	LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max,
	    unsigned int seed);

static uint64_t
get(const uint8_t *p, size_t n)
{
	uint64_t	v = 0;
	size_t		i;

	for (i = 0; i < n; i++)		/* little-endian ELF64 only */
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Is section header sh of d a .debug_* section with bytes in the file? */
static int
is_debug(const uint8_t *d, size_t size, const uint8_t *sh, uint64_t stroff,
    size_t *off, size_t *len)
{
	uint64_t o = get(sh + 0x18, 8), s = get(sh + 0x20, 8);
	uint64_t name = stroff + get(sh, 4);

	if (get(sh + 4, 4) == 8 /* SHT_NOBITS */ || s == 0 || o > size ||
	    s > size - o || name > size || size - name < 7 ||
	    memcmp(d + name, ".debug_", 7) != 0)
		return 0;
	*off = (size_t)o;
	*len = (size_t)s;
	return 1;
}

/* Offset and size of the (k mod count)-th .debug_* section; 0 if none. */
static int
debug_section(const uint8_t *d, size_t size, unsigned k, size_t *off,
    size_t *len)
{
	uint64_t	shoff, stroff;
	unsigned	shnum, shentsize, shstrndx, i, n = 0;

	if (size < 64 || memcmp(d, "\177ELF\2\1", 6) != 0)
		return 0;
	shoff = get(d + 0x28, 8);
	shentsize = (unsigned)get(d + 0x3a, 2);
	shnum = (unsigned)get(d + 0x3c, 2);
	shstrndx = (unsigned)get(d + 0x3e, 2);
	if (shentsize != 64 || shstrndx >= shnum || shoff > size ||
	    (uint64_t)shnum * 64 > size - shoff)
		return 0;
	stroff = get(d + shoff + (uint64_t)shstrndx * 64 + 0x18, 8);
	for (i = 0; i < shnum; i++)
		n += is_debug(d, size, d + shoff + (uint64_t)i * 64, stroff,
		    off, len);
	if (n == 0)
		return 0;
	k %= n;
	for (i = 0; i < shnum; i++)
		if (is_debug(d, size, d + shoff + (uint64_t)i * 64, stroff,
		    off, len) && k-- == 0)
			return 1;
	return 0;
}

size_t
LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max,
    unsigned int seed)
{
	uint8_t	*win;
	size_t	 off, len, wlen, start, got;

	if (!debug_section(data, size, seed, &off, &len))
		return LLVMFuzzerMutate(data, size, max);
	/* A window of at most 256 bytes somewhere in the section: the
	 * mutation stays local, the section keeps its size. */
	wlen = len < 256 ? len : 256;
	start = off + (len > wlen ? (seed / 7) % (len - wlen + 1) : 0);
	if ((win = malloc(wlen)) == NULL)
		return size;
	memcpy(win, data + start, wlen);
	got = LLVMFuzzerMutate(win, wlen, wlen);
	memcpy(data + start, win, got < wlen ? got : wlen);
	free(win);
	return size;
}
#endif
