/*
 * dwscan: the DIEs of one DWARF unit, in one pass over its bytes.
 *
 * The converter needs each DIE's tag, parent and extent, and little else
 * of most of them: of libceph-common's 12 million DIEs, one in ten is a
 * function or an inlined call.  libdw answers through dwarf_child() and
 * dwarf_siblingof(), which decode every DIE's attributes twice or more
 * (a DIE without DW_AT_sibling is skipped by decoding its whole subtree,
 * once per level above it); that walk was a third of a conversion.  Here
 * the unit is read once, front to back, with its abbreviations decoded
 * once: an abbreviation whose attributes all have fixed sizes is skipped
 * in one step.  What a DIE's attributes say is still asked of libdw.
 *
 * The DIEs come out in the order of their bytes, which is the order of a
 * depth-first walk; a subtree is the run of DIEs [i, next).  A pass is
 * bounded by the unit's bytes, so no file, however corrupt, makes it
 * revisit a DIE (issue 11).
 *
 * Library-like: returns 0 or a negative errno and never logs.  Pure: no
 * I/O, no allocation outside the struct dwscan given.
 */
#ifndef SYMHUB_DWSCAN_H
#define SYMHUB_DWSCAN_H

#include <stddef.h>
#include <stdint.h>

/* What an abbreviation's attributes include (struct dwscan_abbrev.has). */
#define DWSCAN_PC	0x1	/* DW_AT_low_pc, DW_AT_high_pc or DW_AT_ranges */

struct dwscan_abbrev {
	uint64_t	code;
	uint32_t	tag;
	uint8_t		children;
	uint8_t		has;		/* DWSCAN_* */
	uint8_t		bad;		/* a form unknown: no DIE may use it */
	int32_t		fixed;		/* bytes of its attributes when every
					 * form has a fixed size, else -1 */
	uint32_t	first, nforms;	/* its forms: forms[first..+nforms) */
};

struct dwscan_die {
	uint32_t	off;		/* from the unit's first byte */
	uint32_t	next;		/* index past its subtree */
	uint32_t	parent;		/* index; UINT32_MAX for the first */
	uint32_t	abbrev;		/* index in abbrevs */
};

/* The unit to scan: where it is and what its header says. */
struct dwscan_unit {
	const unsigned char	*info;		/* the section holding it */
	size_t			 info_len;
	uint64_t		 unit_off;	/* its header, in info */
	uint64_t		 die_off;	/* its first DIE, in info */
	uint64_t		 end;		/* its end, in info */
	unsigned		 version;	/* 2 to 5 */
	unsigned		 addr_size;	/* 1 to 8 */
	unsigned		 offset_size;	/* 4 or 8 */
	int			 big;		/* byte order */
	const unsigned char	*abbrev;	/* .debug_abbrev */
	size_t			 abbrev_len;
	uint64_t		 abbrev_off;	/* the unit's table in it */
	unsigned		 depth_max;	/* of nested DIEs */
	const int		*cancel;	/* NULL, or a flag another
						 * thread may set */
};

/* The result, reused from unit to unit: zero it before the first scan,
 * dwscan_free() it after the last.  A table of abbreviations is decoded
 * again only when a unit names another one. */
struct dwscan {
	struct dwscan_die	*dies;
	size_t			 ndies, capdies;
	struct dwscan_abbrev	*abbrevs;
	size_t			 nabbrevs, capabbrevs;
	uint16_t		*forms;		/* DW_FORM_*, of all abbrevs */
	size_t			 nforms, capforms;
	uint32_t		*bycode;	/* code -> abbrev index + 1 */
	size_t			 capbycode, nbycode;
	const unsigned char	*table;		/* decoded: (section, offset,
						 * and the forms' sizes) */
	uint64_t		 table_off;
	unsigned		 table_version, table_addr_size;
	unsigned		 table_offset_size;
	int			 sorted;	/* codes too sparse for bycode:
						 * abbrevs sorted by code */
	uint32_t		*open;		/* scratch: the DIEs whose
						 * children are being read */
	size_t			 capopen;
};

/*
 * Scan the unit u into s: s->dies[0] is its first DIE (the unit's), and
 * the DIEs of its subtree follow; bytes past that subtree are not read.
 * DIEs nested deeper than u->depth_max are read past but not kept (the
 * subtree of the deepest kept one holds them).
 * @return 0; -ENOEXEC for a unit or table that is not sound DWARF (a
 *         DIE of an abbreviation with a form unknown, a DIE past the
 *         unit's end, more than one DIE whose children never end, a unit
 *         over 4 GiB); -ENOMEM; -ECANCELED when *u->cancel was set.
 *         On failure s holds no unit but stays valid.
 */
int	dwscan_unit(struct dwscan *s, const struct dwscan_unit *u);

/* The tag of s->dies[i]. */
static inline uint32_t
dwscan_tag(const struct dwscan *s, size_t i)
{
	return s->abbrevs[s->dies[i].abbrev].tag;
}

/* The index of the DIE at offset off (from the unit's first byte), or
 * -1 when no DIE starts there. */
long	dwscan_find(const struct dwscan *s, uint32_t off);

/* Frees s's arrays; s is zeroed.  Accepts a zeroed s. */
void	dwscan_free(struct dwscan *s);

#endif
