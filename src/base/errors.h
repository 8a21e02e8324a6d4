/*
 * errors: what a negative errno means anywhere in symhub.
 *
 * Every function below the HTTP front returns 0 (or a count) on success
 * and a negative errno on failure; none sets errno for its caller, none
 * logs (the caller that holds the request or the command line does).
 * Only the HTTP front turns these into status codes
 * (src/symhubd/http.c); only the CLI turns them into exit codes.
 *
 * One meaning per errno, in every module:
 *
 *   -ENOENT     not there: no such record, file, route or id.  A miss is
 *               a result, not an error.
 *   -ENODATA    there, but with nothing of what was asked: a file with no
 *               build-id or nothing to convert to GSYM, a negative entry
 *               (upstreams recently said "not found").
 *   -EINVAL     malformed input from whoever called: a client's URL or
 *               body, a configuration value, an argument out of range.
 *   -ENOEXEC    a file that should be ELF (or a perf.data profile) is
 *               not, or its ELF, DWARF or profile is corrupt (foreign
 *               input).
 *   -EBADMSG    a file in a format of our own is corrupt: a GSYM file, a
 *               store record, a catalog entry.
 *   -EPROTONOSUPPORT  a GSYM file of a version or byte order not read.
 *   -EUCLEAN    the store's index is damaged; rebuild it from its blobs.
 *   -ESTALE     a record refers to a file that changed or vanished.
 *   -EIO        reading or writing failed, or bytes read back are not
 *               the bytes written (a checksum).
 *   -EFBIG      bytes past a size limit (an upload, a GSYM past 4 GiB).
 *   -E2BIG      items past a count limit (addresses in one request).
 *   -ENOSPC, -EDQUOT, -EROFS, -EACCES, -EPERM
 *               the store refused a write: full, read-only, forbidden.
 *   -EEXIST     there already, and left alone.
 *   -EXDEV      two files that must belong together do not (an
 *               executable and a debuginfo of different build-ids).
 *   -ENAMETOOLONG  a path, URL or line past its buffer.
 *   -EBUSY      held by another: the store is open in another process.
 *   -EADDRINUSE the listening address is taken.
 *   -EAGAIN     transient: the same call may succeed later (a server's
 *               500 or 503).
 *   -EPROTO     a server's answer that is not what its protocol sends
 *               (an S3 listing that is not ListObjectsV2 XML, a status
 *               no S3 call answers), or TLS failed.
 *   -ETIMEDOUT  a server did not connect, answer or go on in time.
 *   -ECONNREFUSED  no connection to a server could be made.
 *   -ECONNRESET the connection to a server broke mid-request.
 *   -ECANCELED  stopped on request (shutdown), not failed; also what a
 *               stopped engine answers to new work.
 *   -ENOTSUP    valid input this build does not handle (a byte order not
 *               the host's, an old libelf, a file with nothing to gain).
 *   -ENOMEM     out of memory.
 *
 * A module may narrow these (its header says which it returns) but never
 * give one of them another meaning.
 */
#ifndef SYMHUB_ERRORS_H
#define SYMHUB_ERRORS_H

#include <errno.h>

#endif
