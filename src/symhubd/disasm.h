/*
 * disasm: a function's machine code, read from an ELF file and decoded
 * with Capstone, for the Firefox Profiler's assembly view (POST /asm/v1,
 * route_profiler.c).  Addresses are relative to the file's first
 * loadable segment, as Tecken's and samply's are.  No HTTP, no logging.
 */
#ifndef SYMHUB_DISASM_H
#define SYMHUB_DISASM_H

#include <stddef.h>
#include <stdint.h>

/* Most bytes of code one request decodes (some 10 times as many bytes
 * of JSON: about 4 bytes an instruction, 40 of answer). */
#define DISASM_MAX	(256u * 1024)

/* What was decoded. */
struct disasm {
	const char	*arch;		/* "x86_64", "i686", "aarch64" */
	const char	*syntax;	/* "Intel", "ARM" */
	uint64_t	 start;		/* relative; aarch64: 4-aligned */
	uint64_t	 size;		/* bytes decoded */
};

/* One instruction: its offset from start and its text. */
typedef int	(*disasm_insn_fn)(void *ctx, uint64_t offset,
		    const char *text);

/*
 * The end of the function whose code holds rel, from the ELF symbol
 * table (.symtab, else .dynsym) of the file open on fd.
 * @return 0 with *end (relative); -ENOENT: no sized function symbol
 *         holds it; -ENOEXEC: not ELF.
 */
int	disasm_function_end(int fd, uint64_t rel, uint64_t *end);

/*
 * Decode size bytes of code from rel (samply's ".byte 0x.." for bytes
 * that are no instruction, stepping one byte on x86, four on aarch64);
 * the last instruction may run past size.  cb gets each in order; its
 * non-zero result stops the walk and is returned.
 * @return 0 with *d set; -ENOEXEC: not ELF; -ENOTSUP: a machine other
 *         than x86-64, i386 and aarch64; -ERANGE: rel is in no section
 *         of code; -ENODATA: it is, but the file has not its bytes (a
 *         separate debuginfo: ask the executable); -EFBIG: size over
 *         DISASM_MAX; -ENOMEM; -errno of a read.
 */
int	disasm_code(int fd, uint64_t rel, uint64_t size, struct disasm *d,
	    disasm_insn_fn cb, void *ctx);

#endif
