/*
 * dwimage: the DWARF sections of an ELF file, inflated, as a small ELF
 * image in memory for libdw.
 *
 * libdw has libelf inflate every compressed debug section, one after the
 * other with zlib, when it opens a file: for libceph-common (278 MB of
 * DWARF) that was 1.5 s, a quarter of a conversion to GSYM.  Here
 * libdeflate inflates them (2.4 times zlib's speed on .debug_info), on
 * several threads, and the location lists, which nothing here reads,
 * are left out.
 *
 * Library-like: returns 0 or a negative errno and never logs.
 */
#ifndef SYMHUB_DWIMAGE_H
#define SYMHUB_DWIMAGE_H

#include <libelf.h>

struct dwimage;		/* opaque */

/*
 * Build the image of elf's .debug_* sections (and .gnu_debugaltlink).
 * @param threads  how many threads inflate (at least 1).
 * @param out      the image, freed with dwimage_free(); NULL on failure.
 * @return 0; -ENOTSUP when there is nothing to gain or the file is of a
 *         kind left to libelf (no section compressed with zlib, GNU
 *         .zdebug sections, another compression, a relocatable file, a
 *         byte order not the host's); -ENOEXEC for a corrupt section;
 *         -ENOMEM.
 */
int	dwimage_create(Elf *elf, unsigned threads, struct dwimage **out);

/* The image as a libelf handle, valid until dwimage_free(); so is the
 * data of its sections. */
Elf	*dwimage_elf(const struct dwimage *im);

/* Accepts NULL.  Whatever libdw opened on the image must be closed
 * first. */
void	dwimage_free(struct dwimage *im);

#endif
