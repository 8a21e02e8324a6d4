/*
 * proftab: what pprof.c and otlp.c share to fill in a profile's tables
 * from GSYM frames: "add a string, add a function, once each".  A GSYM's
 * strings are interned, so a string or function already added is found
 * by the GSYM pointers it came from, not by its text.  No I/O, no HTTP.
 */
#ifndef SYMHUBD_PROFTAB_H
#define SYMHUBD_PROFTAB_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"

/* One key (up to three pointers) and what it stands for (0: free). */
struct proftab_ent {
	const void	*k[3];
	int64_t		 v;
};

/* Keys to values, open addressing; zeroed is empty. */
struct proftab {
	struct proftab_ent	*t;
	size_t			 cap, used;
};

/*
 * The entry of key (a, b, c): its value, or a free one (v 0) where the
 * key goes: give it with proftab_set() before the next proftab_find()
 * on t.  Grows t as needed.
 * @return 0; -ENOMEM.
 */
int	proftab_find(struct proftab *t, const void *a, const void *b,
	    const void *c, struct proftab_ent **e);
/* Give the free entry e of t key (a, b, c) and value v (not 0). */
void	proftab_set(struct proftab *t, struct proftab_ent *e, const void *a,
	    const void *b, const void *c, int64_t v);
/* Accepts a zeroed t. */
void	proftab_free(struct proftab *t);

/*
 * The string (a, b) stands for, made in ar: the name a as it is (b is
 * proftab_asis), demangled (b is proftab_demangled: as it is when it
 * does not demangle), or the path dir a + "/" + base b (a "" : base b).
 * @return it; NULL out of memory.
 */
extern const char	proftab_demangled[], proftab_asis[];
char	*proftab_text(struct arena *ar, const char *a, const char *b);

/*
 * A protobuf varint at b[*i] (at most 10 bytes, none past len), for the
 * readers that walk a message's framing before protobuf-c decodes it.
 * @return 0 with *v, *i past it; -1 when cut short or too long.
 */
int	 proftab_varint(const unsigned char *b, size_t len, size_t *i,
	    uint64_t *v);

#endif
