/*
 * text: bytes from files symhub was handed (a profile's module names, a
 * manifest's fields) checked before they are trusted, and escaped before
 * they reach a terminal, where an escape sequence in a name could move
 * the cursor, retitle the window or rewrite what was printed before.
 *
 * "Printable" is valid UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF) without a C0 control, DEL or a C1
 * control (U+0080 to U+009F, which terminals also obey).
 */
#ifndef SYMHUB_TEXT_H
#define SYMHUB_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* @return 1 when all of s (NUL-terminated) is printable, else 0. */
int	text_printable(const char *s);

/* @return 1 when s holds a C0 control byte (tab included) or DEL. */
int	text_has_control(const char *s);

/*
 * Replace, in place, every byte of s that is not part of a printable
 * character with '?'.  s keeps its length.
 */
void	text_sanitize(char *s);

/*
 * Write s to fp with every byte that is not part of a printable
 * character as \xHH, and a backslash as \\ (so that the escaped form
 * cannot be mistaken for what it escapes).  Printable text passes as it
 * is.
 */
void	text_put(FILE *fp, const char *s);

#endif
