/*
 * utf8: what symhub writes as JSON text is UTF-8, whatever it was given.
 * Names come from DWARF, file systems, packages and other hubs, any of
 * which may hold bytes that are not UTF-8; one such byte in a JSON
 * answer makes the whole answer unparsable (RFC 8259, section 8.1).
 * Each byte that does not begin a well-formed sequence (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF) is replaced by
 * U+FFFD, the replacement character, and the rest kept as it is.
 */
#ifndef SYMHUB_UTF8_H
#define SYMHUB_UTF8_H

#include <stddef.h>

#include "base/buf.h"

/* U+FFFD in UTF-8. */
#define UTF8_REPLACEMENT	"\xef\xbf\xbd"

/*
 * The length of the well-formed UTF-8 sequence at s, of at most n bytes.
 * @return 1 to 4; 0 when s[0] begins none (or n is 0).
 */
size_t	utf8_seq(const unsigned char *s, size_t n);

/* Are the n bytes at s well-formed UTF-8 throughout?  @return 1 or 0. */
int	utf8_valid(const void *s, size_t n);

/*
 * Append the n bytes at s to b, each byte that begins no well-formed
 * sequence replaced by U+FFFD.  @return 0 or -ENOMEM.
 */
int	utf8_add(struct buf *b, const void *s, size_t n);

/*
 * Append s (n bytes) to b as the inside of a JSON string: '"' and '\'
 * escaped, control characters as \b \f \n \r \t or \u00xx (lowercase,
 * as json-c writes them), '/' as it is, bytes that are not UTF-8
 * replaced as utf8_add() does.  @return 0 or -ENOMEM.
 */
int	utf8_json(struct buf *b, const void *s, size_t n);

#endif
