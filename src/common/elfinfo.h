/*
 * elfinfo: what symhub needs to know about an ELF file, read with libelf
 * and libdw: its GNU build-id, whether it is an executable and/or carries
 * debug info, quality markers, named sections, source file names, and the
 * FileID of doc/protocol.md ("Keys").
 *
 * Library-like: returns 0 or a negative errno, never logs.  Every function
 * takes an open file descriptor, does not close it, and may move its file
 * offset.  Call elfinfo_init() once before the first use (elf_version()).
 */
#ifndef SYMHUB_ELFINFO_H
#define SYMHUB_ELFINFO_H

#include <stddef.h>
#include <stdint.h>

#define ELFINFO_BUILDID_MAX	64

/* Quality markers: which sections the file has with contents. */
#define ELFINFO_Q_DEBUG_INFO	0x01u	/* .debug_info or .zdebug_info */
#define ELFINFO_Q_DEBUG_LINE	0x02u	/* .debug_line or .zdebug_line */
#define ELFINFO_Q_SYMTAB	0x04u	/* .symtab (SHT_SYMTAB) */
#define ELFINFO_Q_DYNSYM	0x08u	/* .dynsym (SHT_DYNSYM) */
#define ELFINFO_Q_GOPCLNTAB	0x10u	/* .gopclntab */
#define ELFINFO_Q_COMPRESSED	0x20u	/* any SHF_COMPRESSED or .zdebug_ section */

struct elfinfo {
	unsigned char	buildid[ELFINFO_BUILDID_MAX];
	/* 0 when the file has no build-id note; a longer note is cut to
	 * ELFINFO_BUILDID_MAX bytes (longer than any client can ask for). */
	size_t		buildid_len;
	/* An executable or shared object (ET_EXEC, ET_DYN) whose code is
	 * present: an SHF_ALLOC|SHF_EXECINSTR section of type SHT_PROGBITS.
	 * Relocatable objects are not executables. */
	unsigned	is_executable : 1;
	/* Carries DWARF: a .debug_info/.zdebug_info section with contents. */
	unsigned	is_debuginfo : 1;
	uint32_t	quality;	/* ELFINFO_Q_* */
};

/*
 * How good a file is for symbolization: DWARF info outranks line tables,
 * which outrank a symbol table, which outranks dynamic symbols and Go's
 * pclntab.  Used wherever two copies of an artifact compete.
 */
unsigned elfinfo_score(uint32_t quality);

/*
 * Can ei serve as a debuginfo (debug != 0: DWARF or a symbol table) or as
 * an executable (code)?  The one rule for uploads and fetched files.
 * @return NULL when it can, else why not (a static string).
 */
const char *elfinfo_unfit(const struct elfinfo *ei, int debug);

/* Write the quality markers as "debug_info,symtab,..." ("none" for 0). */
void	elfinfo_quality_str(uint32_t quality, char *buf, size_t len);

/* Read such a list back ("," or blanks between names); unknown names
 * count for nothing.  @return the ELFINFO_Q_* bits. */
uint32_t elfinfo_quality_parse(const char *s);

/* Initialise libelf.  @return 0, or -ENOTSUP when libelf is too old. */
int	elfinfo_init(void);

/*
 * Read the identity and classification of the ELF file open on fd.
 * @return 0; -ENOEXEC when the file is not ELF or is truncated or corrupt
 *         (headers or section table out of bounds); -errno on read errors.
 *         *out is zeroed first in every case.
 */
int	elfinfo_read(int fd, struct elfinfo *out);

/*
 * Copy the raw bytes of section NAME (as stored: a compressed section stays
 * compressed, as elfutils debuginfod serves it) to sink, in one or more
 * calls.  A non-zero return from sink stops the copy and is returned.
 * The first section called NAME decides (elfutils debuginfod does the same).
 * @return 0; -ENOENT when there is no such section, or it is SHT_NOBITS or
 *         empty; -ENOEXEC when the file is not ELF or corrupt; -errno on
 *         read errors; or sink's value.
 */
int	elfinfo_section(int fd, const char *name,
	    int (*sink)(void *ctx, const void *buf, size_t len), void *ctx);

/*
 * Call cb once per distinct source file named in the DWARF line tables of
 * the file (all compilation units), with a relative name joined with its
 * directory and the unit's DW_AT_comp_dir as DWARF says.  A relative
 * compilation directory (Debian's DW_AT_comp_dir "./csu",
 * -fdebug-prefix-map=$PWD=.) leaves the name relative, joined once:
 * "./csu/version.c", "./csu/../sysdeps/x86/abi-note.c" (see
 * webapi_canon_source()).  Names are not canonicalized.
 * Relative names of a unit without a compilation directory, "<built-in>"
 * and empty names are skipped, as are units whose line table cannot be
 * read.  The order is unspecified.  The string passed to cb is valid only
 * during the call.  A non-zero return from cb stops the walk and is
 * returned.
 * @return 0 (also when the file has no DWARF); -ENOEXEC when the file is
 *         not ELF or its DWARF cannot be opened or walked; -ENOMEM; -errno
 *         on read errors; or cb's value.
 */
int	elfinfo_sources(int fd,
	    int (*cb)(void *ctx, const char *path), void *ctx);

/*
 * elfinfo_sources(), told how (for tests): 0 as it does (the DWARF 5 line
 * tables alone, which decompress no .debug_info, and libdw for the
 * older); ELFINFO_SOURCES_LIBDW through libdw only; ELFINFO_SOURCES_LINES
 * through the line tables only (-ENOTSUP where they do not say all).
 */
#define ELFINFO_SOURCES_LIBDW	1
#define ELFINFO_SOURCES_LINES	2
int	elfinfo_sources_how(int fd, int how,
	    int (*cb)(void *ctx, const char *path), void *ctx);

/*
 * The GNU build-id of an ELF file from its first len bytes alone, for a
 * file still arriving: the ELF header, the program headers and the
 * PT_NOTE segments they name.  Reads buf only (no libelf, no I/O).
 * @param head  out: the build-id (buildid, buildid_len; the rest zero)
 * @param shoff out: the section header table's offset (e_shoff), where
 *              what the checks of elfinfo_read() look at begins
 * @param need  out with -EAGAIN: how many bytes from the start would do
 * @return 0; -EAGAIN until enough bytes are there (*need); -ENOENT when
 *         no PT_NOTE holds a build-id (it may still be in a section:
 *         read the whole file); -ENOEXEC when it is not ELF.
 */
int	elfinfo_head(const unsigned char *buf, size_t len,
	    struct elfinfo *head, uint64_t *shoff, uint64_t *need);

/*
 * Call fn once with the line tables of the file: .debug_line,
 * .debug_line_str and .debug_str, decompressed (dwline.h), valid during
 * the call only.  For readers of what libdw does not give (dwsource.h).
 * @return fn's value; -ENOENT when the file has no .debug_line; -ENOEXEC
 *         when it is not ELF or is corrupt; -errno on read errors.
 */
struct dwline_sects;
int	elfinfo_line_sections(int fd,
	    int (*fn)(void *ctx, const struct dwline_sects *s), void *ctx);

/*
 * FileID (doc/protocol.md, "Keys"): SHA-256 over the first min(N,4096)
 * bytes, the last min(N,4096) bytes, then N as a big-endian u64; first 16
 * bytes.
 * Works on any file, ELF or not.  Reads with pread(); the offset is kept.
 * @return 0 or -errno.
 */
int	elfinfo_fileid(int fd, unsigned char out[16]);

/* A loadable segment (PT_LOAD): where its bytes are in the file and where
 * they are mapped, as the program headers say. */
struct elfinfo_load {
	uint64_t	offset;		/* p_offset */
	uint64_t	vaddr;		/* p_vaddr */
	uint64_t	filesz;		/* p_filesz */
	int		exec;		/* PF_X */
};

/* Most segments elfinfo_loads() reports (linkers make 2 to 5). */
#define ELFINFO_LOADS_MAX	16

/*
 * The PT_LOAD program headers of the ELF file open on fd, in their order.
 * @param out  room for ELFINFO_LOADS_MAX; segments past it are ignored.
 * @return how many (0: none); -ENOEXEC when the file is not ELF or its
 *         program headers are out of bounds; -errno on read errors.
 */
int	elfinfo_loads(int fd, struct elfinfo_load out[ELFINFO_LOADS_MAX]);

/*
 * Do these segments map file offsets (what /proc/PID/maps shows) to the
 * addresses the DWARF uses?  Only a file with its code's bytes does: a
 * separate debug file (objcopy --only-keep-debug) keeps the addresses but
 * rewrites the offsets and sizes (its code segment has no file bytes).
 * @return 1 or 0.
 */
int	elfinfo_loads_map(const struct elfinfo_load *loads, size_t n);

/*
 * The address of file offset off: in the first segment whose file bytes
 * hold it, off - offset + vaddr.
 * @return 0 with *addr; -ERANGE when no segment holds it.
 */
int	elfinfo_load_addr(const struct elfinfo_load *loads, size_t n,
	    uint64_t off, uint64_t *addr);

#endif
