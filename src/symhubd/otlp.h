/*
 * otlp: the profiles of POST /symbolize/otlp (symhubd(8), "Profiles").
 * An OpenTelemetry ProfilesData, or an ExportProfilesServiceRequest,
 * which is the same message on the wire (opentelemetry-proto v1.11.0,
 * profiles/v1development: still a "development" format, read by
 * protobuf-c's code generated from it), gzip-compressed or not, is
 * checked whole; the locations of its dictionary are then filled in
 * from their modules' GSYMs, and the message is written back.
 * No I/O, no HTTP: a failure is an errno and a static message.
 */
#ifndef SYMHUB_OTLP_H
#define SYMHUB_OTLP_H

#include <stddef.h>
#include <stdint.h>

#include "pprof.h"

struct otlp;		/* opaque: one message read */

/* A module the mappings name: a GNU build-id, an OTel FileID (the
 * "htlhash"), or both; an idlen of 0 is none. */
struct otlp_module {
	struct pprof_module	gnu;
	struct pprof_module	fileid;
};

/*
 * Read and check a message: len bytes at body, gzip-compressed (by their
 * magic; with gzip set, they must be) or not.  Refused: a corrupt
 * protobuf or gzip stream; messages nested deeper than a limit; a
 * dictionary without one, or whose string_table does not start with "";
 * an index out of its dictionary table (or negative); a mapping ending
 * before it starts; a location address outside its mapping; a build-id
 * attribute that is not a hex build-id, an htlhash that is not a hex
 * FileID (on a mapping to symbolize).  Mappings may overlap: one
 * dictionary serves the profiles of many processes.
 * @param lim  max_bytes inflated, max_locations of the location_table.
 * @param why  on failure, a static message for the client.
 * @return 0 (out set: otlp_free() it); -EINVAL refused; -E2BIG over a
 *         limit; -ENOMEM.
 */
int	otlp_read(const void *body, size_t len, int gzip,
	    const struct pprof_limits *lim, struct otlp **out,
	    const char **why);

/* The modules of the mappings to symbolize (those of a location without
 * lines); valid until otlp_free(). */
size_t	otlp_modules(const struct otlp *o, const struct otlp_module **mods);

/* Locations of the location_table, its zero value (index 0) left out. */
size_t	otlp_nlocations(const struct otlp *o);

/*
 * Fill in every location without lines of a mapping to symbolize: a
 * Line a frame, innermost first (the function it was inlined into
 * last); Function entries with the demangled name, the linkage name as
 * system_name and the file, their strings added to the string_table
 * (a string already there is used again).  fn gets the module's index
 * in otlp_modules() and the ELF file offset: the address less
 * memory_start plus file_offset.
 * @return 0; -E2BIG a table would pass 2^31 entries; -ENOMEM (o then
 *         half done: only otlp_free() it).
 */
int	otlp_symbolize(struct otlp *o, pprof_lookup_fn fn, void *ctx,
	    struct pprof_stats *st);

/*
 * Write o as a ProfilesData, gzip-compressed if gzip.
 * @param out  malloc'd, the caller's to free.
 * @return 0; -E2BIG larger than max bytes; -ENOMEM.
 */
int	otlp_write(const struct otlp *o, int gzip, size_t max, void **out,
	    size_t *outlen);

/* Accepts NULL. */
void	otlp_free(struct otlp *o);

#endif
