/*
 * symjson: the JSON of POST /buildid/ID/symbolize, the addresses a
 * request body holds and the answer.  No I/O; json-c parses and escapes.
 */
#ifndef SYMHUB_SYMJSON_H
#define SYMHUB_SYMJSON_H

#include <stddef.h>
#include <stdint.h>

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
 * Append the result for addr: res's frames, innermost first, when rc is
 * 0; else no frames and an error, "address 0x... is not in GSYM" for
 * -ENOENT and "corrupt record" for anything else (res is then unused).
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

#endif
