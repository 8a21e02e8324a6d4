/*
 * symjson: the JSON of /symbolize and /symbolicate/v5, the addresses a
 * request body holds (symjson_read.c, yajl parses) and the answer
 * (symjson_write.c, base/utf8 escapes).  No I/O.
 */
#ifndef SYMHUB_SYMJSON_H
#define SYMHUB_SYMJSON_H

#include <stddef.h>
#include <stdint.h>

#include "common/webapi.h"
#include "gsym/gsym.h"

/*
 * The addresses of a request body: a JSON array of numbers or of hex
 * strings ("0x1f" or "1f"), or one hex address a line (an optional 0x,
 * blanks around it and empty lines allowed).
 * @param max  most addresses accepted.
 * @param out  the addresses, malloc'd, the caller's to free; NULL on
 *             failure and when there are none.
 * @param why  on failure, a static message for the client.
 * @return the count; -E2BIG more than max; -EINVAL malformed; -ENOMEM.
 */
long	symjson_parse(const char *body, size_t len, uint64_t max,
	    uint64_t **out, const char **why);

/*
 * POST /symbolize, many modules (symhubd(8), "Batches"):
 *   {"modules": [{"buildid": HEX, "addresses": [...]},
 *                {"fileid": HEX32, "offsets": [...]}, ...],
 *    "deadline_ms": N, "demangle": true}
 * Addresses as in symjson_parse()'s arrays; "offsets" are file offsets.
 */
struct symjson_module {
	char		 idhex[WEBAPI_ID_HEX_MAX + 1];
	unsigned char	 id[WEBAPI_ID_HEX_MAX / 2];
	size_t		 idlen;
	int		 by_fileid;	/* "fileid" */
	int		 offsets;	/* "offsets": file offsets */
	uint64_t	*addrs;		/* into symjson_batch.addrs */
	size_t		 naddrs;
};

struct symjson_batch {
	struct symjson_module	*mods;
	size_t			 nmods;
	uint64_t		*addrs;		/* every module's */
	size_t			 naddrs;
	int64_t			 deadline_ms;	/* -1: not given */
	int			 demangle;
};

/*
 * Read a batch request.  A malformed body, or more than max_addrs
 * addresses or max_modules modules in all, is refused whole.
 * @param why  on failure, a static message for the client.
 * @return the number of modules (out filled; symjson_batch_free() it);
 *         -E2BIG over a limit; -EINVAL malformed; -ENOMEM.
 */
long	symjson_parse_batch(const char *body, size_t len, uint64_t max_addrs,
	    size_t max_modules, struct symjson_batch *out, const char **why);

void	symjson_batch_free(struct symjson_batch *b);

/*
 * POST /symbolicate/v5, Mozilla's Tecken API (symhubd(8), "Tecken"):
 *   {"jobs": [{"memoryMap": [[DEBUGNAME, BREAKPADID], ...],
 *              "stacks": [[[MODULEINDEX, ADDRESS], ...], ...]}, ...]}
 * or one job without "jobs" around it.  ADDRESS is relative to the
 * module's first loadable segment.  A Breakpad id is 32 hex digits (the
 * GUID Breakpad and samply make of a build-id's first 16 bytes) and an
 * age; modules are gathered by it, and named by their 16 bytes.
 */
struct symjson_tlib {
	const char	*name;		/* DEBUGNAME, as sent */
	const char	*key;		/* BREAKPADID, as sent */
	size_t		 mod;		/* into symjson_tecken.mods */
	size_t		 name_off, key_off;	/* the reader's own */
};

struct symjson_tframe {
	uint32_t	 lib;		/* into its job's libs */
	uint64_t	 addr;		/* relative */
};

struct symjson_tjob {
	struct symjson_tlib	*libs;
	size_t			 nlibs;
	size_t			*stacks;	/* nstacks + 1 offsets into
						 * frames */
	size_t			 nstacks;
	struct symjson_tframe	*frames;
};

struct symjson_tecken {
	struct symjson_module	*mods;		/* id: the 16 bytes; no
						 * addresses */
	size_t			 nmods;
	struct symjson_tjob	*jobs;
	size_t			 njobs;
	size_t			 nframes;	/* in all */
	char			*strings;	/* the names and ids */
};

/*
 * Read a Tecken request: over max_frames frames or max_modules distinct
 * modules in all is -E2BIG; a frame whose module index is outside its
 * memoryMap, an address of 2^64 or more, a malformed id, a debugName
 * over 255 bytes (it is a file's name, and every frame of the answer
 * repeats it), or bytes yajl finds not UTF-8, -EINVAL.  More than
 * max_modules jobs, more than max_frames frames, or more than twice
 * that plus max_modules frames, stacks and memoryMap entries together
 * (each costs memory), is -E2BIG.
 * @return the number of modules (symjson_tecken_free() out); -E2BIG;
 *         -EINVAL; -ENOMEM; why set on failure.
 */
long	symjson_parse_tecken(const char *body, size_t len,
	    uint64_t max_frames, size_t max_modules, struct symjson_tecken *out,
	    const char **why);

void	symjson_tecken_free(struct symjson_tecken *t);

/* A build-id's Breakpad id, as Breakpad and samply make it (the first 16
 * bytes, zero-padded, as a little-endian GUID, then age 0): 33
 * uppercase hex digits and a NUL. */
void	symjson_breakpad_id(const unsigned char *id, size_t idlen,
	    char out[34]);

/* The build-id bytes a Breakpad id holds (symjson_breakpad_id()'s
 * inverse: 32 hex digits of either case and an age).
 * @return 0; -EINVAL. */
int	symjson_breakpad_prefix(const char *s, size_t len,
	    unsigned char out[16]);

/*
 * POST /source/v1 and /asm/v1, the Firefox Profiler's source and
 * assembly views (samply's API.md; symhubd(8), "Firefox Profiler"):
 *   {"debugName": NAME, "debugId": BREAKPADID, "moduleOffset": "0x1f",
 *    "file": PATH}
 *   {"debugName": NAME, "debugId": BREAKPADID, "name": NAME,
 *    "codeId": BUILDID, "startAddress": "0x1f", "size": "0x40",
 *    "continueUntilFunctionEnd": false}
 * Numbers are hex strings, "0x" optional, or JSON integers.  A module is
 * named by its debugId or its codeId (an ELF code id is the build-id
 * whole; one that is not hex is passed over, as samply does).  Other
 * keys are skipped; null is as if absent.
 */
#define SYMJSON_CODE_ID_MAX	64	/* bytes of a codeId kept */
#define SYMJSON_FILE_MAX	4096	/* bytes of "file" */

struct symjson_api {
	char		*debug_name;	/* malloc'd, or NULL */
	char		*name;		/* malloc'd, or NULL */
	char		*file;		/* malloc'd; /source/v1's */
	unsigned char	 debug_id[16];	/* the build-id's first bytes */
	int		 has_debug_id;
	unsigned char	 code_id[SYMJSON_CODE_ID_MAX];
	size_t		 code_idlen;	/* 0: none */
	uint64_t	 module_offset;
	int		 has_offset;
	uint64_t	 start, size;	/* /asm/v1's */
	int		 until_end;	/* continueUntilFunctionEnd */
};

/*
 * Read a /source/v1 request (asm_v1 0: "file" required) or an /asm/v1
 * one ("startAddress" and "size" required).  A name over 255 bytes, a
 * file over SYMJSON_FILE_MAX, a NUL in either, bytes yajl finds not
 * UTF-8, a key given twice, a known key's value of the wrong type, no
 * debugId nor codeId: -EINVAL.
 * @return 0 (symjson_api_free() out); -EINVAL; -ENOMEM; why set on
 *         failure.
 */
int	symjson_parse_api(const char *body, size_t len, int asm_v1,
	    struct symjson_api *out, const char **why);

/* Accepts a zeroed q. */
void	symjson_api_free(struct symjson_api *q);

struct symjson;		/* opaque: one answer being written */

/* symjson_create() flags. */
#define SYMJSON_DEMANGLE	0x1	/* function names demangled (demangle.h);
					 * a name libiberty does not read stays */

/*
 * Start the answer {"buildid":"IDHEX","results":[...]}.
 * @param idhex   the build-id in lowercase hex (written as it is).
 * @param naddrs  how many results are coming, to size the buffer.
 * @param flags   SYMJSON_* bits.
 * @param out     the writer, freed by symjson_finish() or symjson_free().
 * @return 0; -ENOMEM.
 */
int	symjson_create(const char *idhex, size_t naddrs, unsigned flags,
	    struct symjson **out);

/*
 * A writer that has written nothing yet: the caller writes the frame
 * around the results with symjson_text(), symjson_string() and
 * symjson_hex(), and ends with symjson_take().
 * @return 0; -ENOMEM.
 */
int	symjson_open(size_t naddrs, unsigned flags, struct symjson **out);

/* Append JSON text as it is; a string, escaped; a number as "0x1f".
 * @return 0; -ENOMEM (then only symjson_free()). */
int	symjson_text(struct symjson *j, const char *text);
int	symjson_string(struct symjson *j, const char *str);
int	symjson_hex(struct symjson *j, uint64_t v);

/* The next result is the first of a list (no comma before it). */
void	symjson_list(struct symjson *j);

/*
 * symjson_add(), with the file offset the address came from (NULL:
 * none), written as "offset" before it.  rc -ERANGE: the offset is in no
 * loadable segment; -ENOEXEC: no file with the module's code is here to
 * map it with; both without "address".
 */
int	symjson_result(struct symjson *j, uint64_t addr,
	    const uint64_t *offset, int rc, const struct gsym_result *res);

/*
 * One frame of a Tecken answer: "frame" index, "module_offset" and
 * "module", then, when rc is 0, the outermost function of res with
 * "function_offset", "function_size" (when known), its "file" and "line",
 * and "inlines", the frames inlined at the address, innermost first.
 */
int	symjson_tecken_frame(struct symjson *j, size_t index, uint64_t offset,
	    const char *module, int rc, const struct gsym_result *res);

/* Streaming: how many bytes are written and not drained yet; move up to
 * max of them to dst (the rest moves to the front of the writer's
 * buffer, which is reused).
 * @return the bytes moved. */
size_t	symjson_pending(const struct symjson *j);
size_t	symjson_drain(struct symjson *j, void *dst, size_t max);

/* Hand the bytes written over, as they are; j is freed.  @return 0. */
int	symjson_take(struct symjson *j, char **buf, size_t *len);

/*
 * Append the result for addr: res's frames, innermost first, when rc is
 * 0; else no frames and an error, "address 0x... is not in GSYM" for
 * -ENOENT and "corrupt record" for anything else (res is then unused).
 * A frame gives its function, the start of its range ("start", the
 * address less "offset"), and its file and line when known.
 * Each distinct string is escaped once per answer: strings are known by
 * their address, so those res points to must stay valid and unchanged
 * until the writer is freed (the GSYM's string table does).
 * @return 0; -ENOMEM, after which only symjson_free() may be called.
 */
int	symjson_add(struct symjson *j, uint64_t addr, int rc,
	    const struct gsym_result *res);

/*
 * Close the answer and hand its bytes over.  j is freed in every case.
 * @param buf  the JSON, malloc'd, the caller's to free (not
 *             NUL-terminated); NULL on failure.
 * @return 0; -ENOMEM.
 */
int	symjson_finish(struct symjson *j, char **buf, size_t *len);

/* Accepts NULL. */
void	symjson_free(struct symjson *j);

/*
 * The answers of POST /symbolize and /symbolicate/v5, written a piece at
 * a time from the request read above and what became of its modules;
 * the lookups are the caller's (symjson_lookup_fn), so the writer does
 * no I/O.
 */

/* What an answer says of a module, as the batch made it ready
 * (batch.h).  The strings and bytes are borrowed. */
struct symjson_state {
	const char		*status;	/* its status's name */
	int			 ready;		/* its GSYM is open */
	int			 placed;	/* ready, with program headers
						 * (Tecken's relative addresses
						 * can be placed) */
	const char		*how;		/* ready: how it was made so */
	const char		*why;		/* not: why not; NULL:
						 * "unknown" */
	const unsigned char	*bid;		/* asked by FileID: the
						 * build-id it has */
	size_t			 bidlen;	/* 0: none known */
};

/* What the address handed to a symjson_lookup_fn is. */
#define SYMJSON_AT_ADDR		0	/* an address of the GSYM */
#define SYMJSON_AT_OFFSET	1	/* a file offset: *addr is set to
					 * the address it maps to */
#define SYMJSON_AT_RELATIVE	2	/* relative to the module's first
					 * loadable segment (Tecken) */

/*
 * Look up an address of module mod (an index into the states).
 * @return 0 with res filled; what derive_gsym_lookup() returns;
 *         -ENOEXEC or -ERANGE for an offset that cannot be mapped.
 */
typedef int (*symjson_lookup_fn)(void *ctx, size_t mod, int at,
	    uint64_t *addr, struct gsym_result *res);

struct symjson_answer;	/* opaque: where an answer is at */

/*
 * Start the answer to a POST /symbolize request (symjson_parse_batch())
 * or to a Tecken one (symjson_parse_tecken()): its first bytes go to j.
 * in or tk, st (one a module, in the request's order) and ctx are
 * borrowed until symjson_answer_free().
 * @param out  the answer, freed with symjson_answer_free().
 * @return 0; -ENOMEM.
 */
int	symjson_answer_batch(struct symjson *j, const struct symjson_batch *in,
	    const struct symjson_state *st, symjson_lookup_fn lookup,
	    void *ctx, struct symjson_answer **out);
int	symjson_answer_tecken(struct symjson *j,
	    const struct symjson_tecken *tk, const struct symjson_state *st,
	    symjson_lookup_fn lookup, void *ctx, struct symjson_answer **out);

/*
 * Write the next piece of the answer to j: a module's head, up to 256
 * results (stopping once 64 KB are pending), or a Tecken job's head, a
 * stack's bracket, up to 256 of its frames or the modules it found.
 * @param done  set once the answer is whole.
 * @return 0; -ENOMEM.
 */
int	symjson_answer_step(struct symjson_answer *a, struct symjson *j,
	    int *done);

/* Accepts NULL. */
void	symjson_answer_free(struct symjson_answer *a);

/*
 * The least bytes the answer to a request takes, known before any
 * lookup (for --symbolize-max-answer): a /symbolize module's head, a
 * Tecken frame without a function.  Either of in and tk may be empty.
 */
uint64_t symjson_answer_least(const struct symjson_batch *in,
	    const struct symjson_tecken *tk);

#endif
