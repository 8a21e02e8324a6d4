/*
 * gsym: the GSYM v1 reader (gsym.h, doc/gsym.md).
 *
 * The file is never trusted: every table is checked to fit at open, and
 * every record is decoded through a cursor that cannot pass the end of
 * the file.  A record is always decoded, and so checked, whole: its rows,
 * inline nodes and ranges go to growing arrays, which gsym_decode()
 * copies into one allocation and gsym_lookup() keeps on its stack when
 * they fit.  Both then answer with the same func_lookup(), so a server's
 * cache of decoded records answers exactly what a plain lookup answers.
 *
 * Where LLVM 19 and the format leave room, this follows LLVM 19's
 * reader (llvm/lib/DebugInfo/GSYM): the last line row at or below the
 * address wins, inline frames come from a post-order walk of the first
 * containing child at each level, a node whose ranges are all empty ends
 * its sibling list, and the error messages are LLVM's.
 */
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/hex.h"
#include "gsym.h"

struct gsym {
	const unsigned char	*data;
	size_t			 len;
	void			*map;		/* ours to munmap; NULL: borrowed */
	size_t			 maplen;
	int			 swapped;
	struct gsym_header	 hdr;
	const unsigned char	*addrs;		/* num_addresses x addr_off_size */
	const unsigned char	*offs;		/* num_addresses x u32 */
	const unsigned char	*files;		/* nfiles x {u32 dir, u32 base} */
	uint32_t		 nfiles;
	const char		*strtab;
	uint32_t		 strtab_size;
	uint32_t		 str_ok;	/* offsets below end in a NUL */
};

/* A decoded record: what gsym_decode() returns. */
struct row {
	uint64_t	addr;
	uint32_t	file;
	uint32_t	line;
};

struct range {
	uint64_t	start;
	uint64_t	end;
};

/* Inline nodes are kept in preorder; next is the index past a node's
 * subtree, so its children are i+1, nodes[i+1].next, ... below next. */
struct node {
	uint64_t	base;		/* lowest start: its children's base */
	uint32_t	name;
	uint32_t	call_file;
	uint32_t	call_line;
	uint32_t	next;
	uint32_t	range;		/* first of its ranges in ranges[] */
	uint32_t	nranges;	/* the non-empty ones */
};

struct gsym_func {
	size_t		 bytes;
	uint64_t	 start;
	uint32_t	 size;
	uint32_t	 name;
	uint32_t	 index;
	unsigned	 has_lines : 1;
	unsigned	 has_inline : 1;
	unsigned	 sorted : 1;	/* row addresses never go down */
	unsigned	 heap : 1;
	size_t		 nrows;
	size_t		 nnodes;
	size_t		 nranges;
	struct row	*rows;
	struct node	*nodes;
	struct range	*ranges;
};

/* Where a message goes; dump selects the wording of LLVM's full decode
 * (used by its dump) over that of its lookup, and makes an unknown chunk
 * type an error. */
struct ctx {
	const struct gsym	*g;
	char			*err;		/* GSYM_ERROR_MAX bytes, or NULL */
	int			 dump;
};

static int __attribute__((format(printf, 2, 3)))
fail(struct ctx *x, const char *fmt, ...)
{
	va_list ap;

	if (x->err != NULL) {
		va_start(ap, fmt);
		vsnprintf(x->err, GSYM_ERROR_MAX, fmt, ap);
		va_end(ap);
	}
	return -EBADMSG;
}

static uint16_t
get16(const unsigned char *p, int swapped)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return swapped ? __builtin_bswap16(v) : v;
}

static uint32_t
get32(const unsigned char *p, int swapped)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return swapped ? __builtin_bswap32(v) : v;
}

static uint64_t
get64(const unsigned char *p, int swapped)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return swapped ? __builtin_bswap64(v) : v;
}

/* A bounded reader: off never passes end; offsets in messages count from
 * base, as LLVM's DataExtractor over a record or chunk does. */
struct cur {
	const unsigned char	*base;
	size_t			 off;
	size_t			 end;
	int			 swapped;
};

static int
cur_u8(struct cur *c, uint8_t *v)
{
	if (c->off >= c->end)
		return -1;
	*v = c->base[c->off++];
	return 0;
}

static int
cur_u32(struct cur *c, uint32_t *v)
{
	if (c->end - c->off < 4)
		return -1;
	*v = get32(c->base + c->off, c->swapped);
	c->off += 4;
	return 0;
}

/* As LLVM's decodeULEB128: any number of zero continuation bytes, but
 * no set bit past bit 63. */
static int
cur_uleb_slow(struct cur *c, uint64_t *v)
{
	uint64_t val = 0, slice;
	unsigned shift = 0;
	unsigned char b;

	do {
		if (c->off >= c->end)
			return -1;
		b = c->base[c->off++];
		slice = b & 0x7f;
		if (shift >= 64) {
			if (slice != 0)
				return -1;
		} else {
			if ((slice << shift) >> shift != slice)
				return -1;
			val |= slice << shift;
			shift += 7;
		}
	} while (b & 0x80);
	*v = val;
	return 0;
}

static int
cur_sleb_slow(struct cur *c, int64_t *v)
{
	uint64_t val = 0, slice;
	unsigned shift = 0;
	unsigned char b;

	do {
		if (c->off >= c->end)
			return -1;
		b = c->base[c->off++];
		slice = b & 0x7f;
		if (shift >= 64) {
			if (slice != (((int64_t)val < 0) ? 0x7fu : 0))
				return -1;
		} else {
			if (shift == 63 && slice != 0 && slice != 0x7f)
				return -1;
			val |= slice << shift;
			shift += 7;
		}
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		val |= UINT64_MAX << shift;
	memcpy(v, &val, sizeof(*v));
	return 0;
}

/* Most LEBs in a GSYM file are one byte. */
static inline int
cur_uleb(struct cur *c, uint64_t *v)
{
	const unsigned char *p = c->base + c->off;

	if (c->end - c->off >= 2) {
		if (p[0] < 0x80) {
			*v = p[0];
			c->off++;
			return 0;
		}
		if (p[1] < 0x80) {
			*v = (p[0] & 0x7fu) | (uint64_t)p[1] << 7;
			c->off += 2;
			return 0;
		}
	}
	return cur_uleb_slow(c, v);
}

static inline int
cur_sleb(struct cur *c, int64_t *v)
{
	const unsigned char *p = c->base + c->off;
	int64_t x;

	if (c->end - c->off >= 2) {
		if (p[0] < 0x80) {
			*v = p[0] & 0x40 ? (int64_t)p[0] - 0x80 : p[0];
			c->off++;
			return 0;
		}
		if (p[1] < 0x80) {
			x = (int64_t)(p[0] & 0x7f) | (int64_t)p[1] << 7;
			*v = p[1] & 0x40 ? x - 0x4000 : x;
			c->off += 2;
			return 0;
		}
	}
	return cur_sleb_slow(c, v);
}

/* ---- Opening ---- */

static int
read_header(const unsigned char *p, size_t len, struct gsym_header *h,
    int *swapped)
{
	uint32_t magic;
	int sw;

	memset(h, 0, sizeof(*h));
	if (len < 6)
		return -EBADMSG;
	memcpy(&magic, p, 4);
	if (magic == GSYM_MAGIC)
		sw = 0;
	else if (magic == __builtin_bswap32(GSYM_MAGIC))
		sw = 1;
	else
		return -EBADMSG;
	h->magic = GSYM_MAGIC;
	h->version = get16(p + 4, sw);
	if (h->version != GSYM_VERSION)
		return -EPROTONOSUPPORT;
	if (len < GSYM_HEADER_SIZE)
		return -EBADMSG;
	h->addr_off_size = p[6];
	h->uuid_size = p[7];
	h->base_address = get64(p + 8, sw);
	h->num_addresses = get32(p + 16, sw);
	h->strtab_offset = get32(p + 20, sw);
	h->strtab_size = get32(p + 24, sw);
	memcpy(h->uuid, p + 28, GSYM_UUID_MAX);
	switch (h->addr_off_size) {
	case 1: case 2: case 4: case 8:
		break;
	default:
		return -EBADMSG;
	}
	if (h->uuid_size > GSYM_UUID_MAX)
		return -EBADMSG;
	if (swapped != NULL)
		*swapped = sw;
	return 0;
}

int
gsym_read_header(const void *buf, size_t len, struct gsym_header *out)
{
	return read_header(buf, len, out, NULL);
}

/* Find the tables as LLVM 19 does (address table right after the
 * header, then record offsets and the file table each 4-aligned, the
 * string table where the header says) and check that each fits. */
static int
setup(struct gsym *g)
{
	const struct gsym_header *h = &g->hdr;
	uint64_t n, off, len = g->len;
	const char *nul;
	int rc;

	if ((rc = read_header(g->data, g->len, &g->hdr, &g->swapped)) != 0)
		return rc;
	n = h->num_addresses;
	/* 48 is a multiple of every AddrOffSize: no padding. */
	off = GSYM_HEADER_SIZE;
	if (n * h->addr_off_size > len - off)
		return -EBADMSG;
	g->addrs = g->data + off;
	off = (off + n * h->addr_off_size + 3) & ~(uint64_t)3;
	if (off > len || n * 4 > len - off)
		return -EBADMSG;
	g->offs = g->data + off;
	off += n * 4;
	if (off > len || len - off < 4)
		return -EBADMSG;
	g->nfiles = get32(g->data + off, g->swapped);
	off += 4;
	if ((uint64_t)g->nfiles * 8 > len - off)
		return -EBADMSG;
	g->files = g->data + off;
	if (h->strtab_offset > len || h->strtab_size > len - h->strtab_offset)
		return -EBADMSG;
	g->strtab = (const char *)g->data + h->strtab_offset;
	g->strtab_size = h->strtab_size;
	nul = g->strtab_size ? memrchr(g->strtab, 0, g->strtab_size) : NULL;
	g->str_ok = nul != NULL ? (uint32_t)(nul - g->strtab) + 1 : 0;
	return 0;
}

int
gsym_open_mem(const void *buf, size_t len, struct gsym **out)
{
	struct gsym *g;
	int rc;

	*out = NULL;
	if ((g = calloc(1, sizeof(*g))) == NULL)
		return -ENOMEM;
	g->data = buf;
	g->len = len;
	if ((rc = setup(g)) != 0) {
		free(g);
		return rc;
	}
	*out = g;
	return 0;
}

int
gsym_open_fd(int fd, struct gsym **out)
{
	struct stat st;
	void *map;
	int rc;

	*out = NULL;
	if (fstat(fd, &st) == -1)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_size < GSYM_HEADER_SIZE) {
		/* Too short to map usefully; still tell a version 2 stub
		 * from garbage. */
		unsigned char hd[GSYM_HEADER_SIZE];
		struct gsym_header h;
		ssize_t r = pread(fd, hd, sizeof(hd), 0);

		if (r < 0)
			return -errno;
		rc = read_header(hd, (size_t)r, &h, NULL);
		return rc == -EPROTONOSUPPORT ? rc : -EBADMSG;
	}
	if ((uint64_t)st.st_size > SIZE_MAX)
		return -EFBIG;
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	if ((rc = gsym_open_mem(map, (size_t)st.st_size, out)) != 0) {
		munmap(map, (size_t)st.st_size);
		return rc;
	}
	(*out)->map = map;
	(*out)->maplen = (size_t)st.st_size;
	return 0;
}

int
gsym_open(const char *path, struct gsym **out)
{
	int fd, rc;

	*out = NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -errno;
	rc = gsym_open_fd(fd, out);
	close(fd);
	return rc;
}

void
gsym_free(struct gsym *g)
{
	if (g == NULL)
		return;
	if (g->map != NULL)
		munmap(g->map, g->maplen);
	free(g);
}

const struct gsym_header *
gsym_header(const struct gsym *g)
{
	return &g->hdr;
}

int
gsym_swapped(const struct gsym *g)
{
	return g->swapped;
}

/* ---- Tables ---- */

static uint64_t
addr_off(const struct gsym *g, uint32_t i)
{
	const unsigned char *p = g->addrs + (size_t)i * g->hdr.addr_off_size;

	switch (g->hdr.addr_off_size) {
	case 1:
		return *p;
	case 2:
		return get16(p, g->swapped);
	case 4:
		return get32(p, g->swapped);
	default:
		return get64(p, g->swapped);
	}
}

static uint32_t
rec_off(const struct gsym *g, uint32_t i)
{
	return get32(g->offs + (size_t)i * 4, g->swapped);
}

/* A string for a lookup result: it must end within the table. */
static int
str_get(struct ctx *x, uint32_t off, const char **s)
{
	if (off >= x->g->str_ok)
		return fail(x, "invalid string offset 0x%8.8" PRIx32, off);
	*s = x->g->strtab + off;
	return 0;
}

static void
file_get(const struct gsym *g, uint32_t i, uint32_t *dir, uint32_t *base)
{
	*dir = get32(g->files + (size_t)i * 8, g->swapped);
	*base = get32(g->files + (size_t)i * 8 + 4, g->swapped);
}

/* ---- Finding a record ---- */

static int
find(struct ctx *x, uint64_t addr, uint32_t *index)
{
	const struct gsym *g = x->g;
	uint32_t n = g->hdr.num_addresses, lo, len, half, i, size;
	uint64_t off, a, start;
	size_t roff;

	if (n == 0 || addr < g->hdr.base_address)
		return -ENOENT;
	off = addr - g->hdr.base_address;
	/* std::lower_bound, step for step, then LLVM's adjustments, so that
	 * even an unsorted table gives LLVM's answer. */
	lo = 0;
	len = n;
	while (len > 0) {
		half = len / 2;
		if (addr_off(g, lo + half) < off) {
			lo += half + 1;
			len -= half + 1;
		} else
			len = half;
	}
	if (lo == 0 && off < addr_off(g, 0))
		return -ENOENT;
	if (lo == n || off < addr_off(g, lo))
		lo--;
	i = lo;
	a = addr_off(g, i);
	while (i > 0 && addr_off(g, i - 1) == a)
		i--;
	start = g->hdr.base_address + a;
	for (; i < n; i++) {
		/* LLVM checks the record offset of the entry after a run
		 * before it sees that the run has ended. */
		roff = rec_off(g, i);
		if (roff >= g->len)
			return fail(x, "invalid address info offset 0x%" PRIx32,
			    (uint32_t)roff);
		if (addr_off(g, i) != a)
			break;
		/* LLVM reads a size it cannot have as 0. */
		size = g->len - roff >= 4 ? get32(g->data + roff, g->swapped)
		    : 0;
		if (size == 0 || (start <= addr && addr < start + size)) {
			*index = i;
			return 0;
		}
	}
	return -ENOENT;
}

int
gsym_find(const struct gsym *g, uint64_t addr, uint32_t *index)
{
	struct ctx x = { g, NULL, 0 };

	return find(&x, addr, index);
}

/* ---- Decoding a record ---- */

/*
 * What one decoding pass builds.  The arrays grow as needed; they may
 * start in the caller's (stack) memory, and move to the heap when they
 * outgrow it (*_heap set).
 */
struct dec {
	struct ctx	*x;
	struct row	*rows;
	struct node	*nodes;
	struct range	*ranges;
	size_t		 nrows, caprows;
	size_t		 nnodes, capnodes;
	size_t		 nranges, capranges;
	int		 rows_heap;
	int		 nodes_heap;
	int		 ranges_heap;
	int		 sorted;
};

/* Room for more than the *cap elements of the full array p: the array,
 * maybe moved to (or in) the heap, or NULL. */
static void *
grow(void *p, size_t *cap, int *heap, size_t elsize)
{
	/* Off the stack, go big at once: copying is what costs. */
	size_t ncap = *cap < 2048 ? 4096 : *cap * 2;
	void *q;

	if (ncap > SIZE_MAX / elsize)
		return NULL;
	if (*heap)
		q = realloc(p, ncap * elsize);
	else if ((q = malloc(ncap * elsize)) != NULL && *cap != 0)
		memcpy(q, p, *cap * elsize);
	if (q == NULL)
		return NULL;
	*cap = ncap;
	*heap = 1;
	return q;
}

static void
dec_free(struct dec *d)
{
	if (d->rows_heap)
		free(d->rows);
	if (d->nodes_heap)
		free(d->nodes);
	if (d->ranges_heap)
		free(d->ranges);
}

static int
add_row(struct dec *d, uint64_t addr, uint32_t file, uint32_t line)
{
	struct row *r;

	if (d->nrows == d->caprows) {
		if ((r = grow(d->rows, &d->caprows, &d->rows_heap,
		    sizeof(*r))) == NULL)
			return -ENOMEM;
		d->rows = r;
	}
	r = &d->rows[d->nrows++];
	r->addr = addr;
	r->file = file;
	r->line = line;
	return 0;
}

static int
line_table(struct dec *d, struct cur *c, uint64_t start)
{
	struct ctx *x = d->x;
	int64_t min, max, sdelta;
	uint64_t range, recip, u, adj, addr = start;
	uint32_t file = 1, line;
	uint8_t op;

	d->nrows = 0;
	d->sorted = 1;
	if (c->off >= c->end)
		return fail(x, "0x%8.8zx: missing LineTable MinDelta", c->off);
	if (cur_sleb(c, &min) != 0)
		return fail(x, "0x%8.8zx: malformed LineTable MinDelta",
		    c->off);
	if (c->off >= c->end)
		return fail(x, "0x%8.8zx: missing LineTable MaxDelta", c->off);
	if (cur_sleb(c, &max) != 0)
		return fail(x, "0x%8.8zx: malformed LineTable MaxDelta",
		    c->off);
	if (c->off >= c->end)
		return fail(x, "0x%8.8zx: missing LineTable FirstLine",
		    c->off);
	if (cur_uleb(c, &u) != 0)
		return fail(x, "0x%8.8zx: malformed LineTable FirstLine",
		    c->off);
	line = (uint32_t)u;
	/* LLVM computes Max - Min + 1 and divides by it unchecked. */
	range = (uint64_t)max - (uint64_t)min + 1;
	recip = range != 0 && range < 256 ? 65536 / range + 1 : 0;
	for (;;) {
		if (cur_u8(c, &op) != 0)
			return fail(x, "0x%8.8zx: EOF found before "
			    "EndSequence", c->off);
		switch (op) {
		case GSYM_LT_END:
			return 0;
		case GSYM_LT_SET_FILE:
			if (c->off >= c->end)
				return fail(x, "0x%8.8zx: EOF found before "
				    "SetFile value", c->off);
			if (cur_uleb(c, &u) != 0)
				return fail(x, "0x%8.8zx: malformed SetFile "
				    "value", c->off);
			file = (uint32_t)u;
			continue;
		case GSYM_LT_ADVANCE_PC:
			if (c->off >= c->end)
				return fail(x, "0x%8.8zx: EOF found before "
				    "AdvancePC value", c->off);
			if (cur_uleb(c, &u) != 0)
				return fail(x, "0x%8.8zx: malformed AdvancePC "
				    "value", c->off);
			break;
		case GSYM_LT_ADVANCE_LINE:
			if (c->off >= c->end)
				return fail(x, "0x%8.8zx: EOF found before "
				    "AdvanceLine value", c->off);
			if (cur_sleb(c, &sdelta) != 0)
				return fail(x, "0x%8.8zx: malformed "
				    "AdvanceLine value", c->off);
			line += (uint32_t)sdelta;
			continue;
		default:
			if (max < min || range == 0 || range > INT64_MAX)
				return fail(x, "0x%8.8zx: invalid LineTable "
				    "line range (MinDelta %" PRId64
				    ", MaxDelta %" PRId64 ")", c->off - 1,
				    min, max);
			adj = op - GSYM_LT_FIRST_SPECIAL;
			/* adj / range by a multiply: exact for adj and
			 * range below 256. */
			u = range < 256 ? (adj * recip) >> 16 : 0;
			line += (uint32_t)((uint64_t)min + (adj - u * range));
			break;
		}
		if (addr + u < addr)
			d->sorted = 0;
		addr += u;
		if (add_row(d, addr, file, line) != 0)
			return -ENOMEM;
	}
}

/*
 * One inline node and its subtree, based at base.
 * @return 1 for a node without a non-empty range (it ends its sibling
 *         list, only its ranges are read: LLVM's rule), 0 for a node,
 *         -EBADMSG or -ENOMEM.
 */
static int
inline_node(struct dec *d, struct cur *c, uint64_t base, unsigned depth)
{
	struct ctx *x = d->x;
	uint64_t n, i, off, size, lo = UINT64_MAX, u;
	size_t first = d->nranges, idx;
	struct range *r;
	struct node *nd;
	uint32_t name;
	uint8_t kids;
	int rc;

	if (c->off >= c->end)
		return fail(x, "0x%8.8zx: missing InlineInfo address ranges "
		    "data", c->off);
	if (cur_uleb(c, &n) != 0)
		return fail(x, "0x%8.8zx: malformed InlineInfo range count",
		    c->off);
	/* Each range takes at least two bytes. */
	if (n > (c->end - c->off) / 2)
		return fail(x, "0x%8.8zx: missing InlineInfo address ranges "
		    "data", c->off);
	for (i = 0; i < n; i++) {
		if (cur_uleb(c, &off) != 0 || cur_uleb(c, &size) != 0)
			return fail(x, "0x%8.8zx: malformed InlineInfo "
			    "address range", c->off);
		if (size == 0)
			continue;
		if (d->nranges == d->capranges) {
			if ((r = grow(d->ranges, &d->capranges,
			    &d->ranges_heap, sizeof(*r))) == NULL)
				return -ENOMEM;
			d->ranges = r;
		}
		d->ranges[d->nranges].start = base + off;
		d->ranges[d->nranges].end = base + off + size;
		d->nranges++;
		if (base + off < lo)
			lo = base + off;
	}
	if (d->nranges == first)
		return 1;
	/* At most one frame per level. */
	if (depth >= GSYM_FRAMES_MAX)
		return fail(x, "0x%8.8zx: InlineInfo nested more than %d deep",
		    c->off, GSYM_FRAMES_MAX);
	if (cur_u8(c, &kids) != 0)
		return fail(x, "0x%8.8zx: missing InlineInfo uint8_t "
		    "indicating children", c->off);
	if (cur_u32(c, &name) != 0)
		return fail(x, "0x%8.8zx: missing InlineInfo uint32_t for "
		    "name", c->off);
	if (c->off >= c->end || cur_uleb(c, &u) != 0)
		return fail(x, "0x%8.8zx: missing ULEB128 for InlineInfo "
		    "call file", c->off);
	if (d->nnodes == d->capnodes) {
		if ((nd = grow(d->nodes, &d->capnodes, &d->nodes_heap,
		    sizeof(*nd))) == NULL)
			return -ENOMEM;
		d->nodes = nd;
	}
	idx = d->nnodes++;
	nd = &d->nodes[idx];
	nd->base = lo;
	nd->name = name;
	nd->call_file = (uint32_t)u;
	nd->range = (uint32_t)first;
	nd->nranges = (uint32_t)(d->nranges - first);
	if (c->off >= c->end || cur_uleb(c, &u) != 0)
		return fail(x, "0x%8.8zx: missing ULEB128 for InlineInfo "
		    "call line", c->off);
	nd->call_line = (uint32_t)u;
	if (kids) {
		/* Children are based at this node's lowest start. */
		while ((rc = inline_node(d, c, lo, depth + 1)) == 0)
			;
		if (rc < 0)
			return rc;
	}
	/* nodes may have moved while the children were added. */
	d->nodes[idx].next = (uint32_t)d->nnodes;
	return 0;
}

/* Decode (and check) all of record index into f and d's arrays; f's
 * array pointers are d's. */
static int
parse(struct ctx *x, uint32_t index, struct gsym_func *f, struct dec *d)
{
	const struct gsym *g = x->g;
	struct cur c, cc, inl;
	uint32_t type = 0, len = 0;
	size_t roff, at;
	int rc;

	memset(f, 0, sizeof(*f));
	memset(&inl, 0, sizeof(inl));
	if (index >= g->hdr.num_addresses)
		return -EINVAL;
	f->index = index;
	f->start = g->hdr.base_address + addr_off(g, index);
	roff = rec_off(g, index);
	if (roff >= g->len)
		return fail(x, "invalid address info offset 0x%" PRIx32,
		    (uint32_t)roff);
	c.base = g->data + roff;
	c.off = 0;
	c.end = g->len - roff;
	c.swapped = g->swapped;
	if (x->dump) {
		if (cur_u32(&c, &f->size) != 0)
			return fail(x, "0x%8.8zx: missing FunctionInfo Size",
			    c.off);
		if (cur_u32(&c, &f->name) != 0)
			return fail(x, "0x%8.8zx: missing FunctionInfo Name",
			    c.off);
	} else if (c.end <= 8)
		return fail(x, "FunctionInfo data is truncated");
	else {
		cur_u32(&c, &f->size);
		cur_u32(&c, &f->name);
	}
	if (f->name == 0)
		return fail(x, "0x%8.8zx: invalid FunctionInfo Name value "
		    "0x00000000", c.off - 4);
	for (;;) {
		at = c.off;
		if (c.end - c.off < 8) {
			if (!x->dump)
				return fail(x, "FunctionInfo data is "
				    "truncated");
			if (c.end - c.off < 4)
				return fail(x, "0x%8.8zx: missing "
				    "FunctionInfo InfoType value", c.off);
			return fail(x, "0x%8.8zx: missing FunctionInfo "
			    "InfoType length", c.off + 4);
		}
		cur_u32(&c, &type);
		cur_u32(&c, &len);
		if (len > c.end - c.off) {
			if (!x->dump)
				return fail(x, "FunctionInfo data is "
				    "truncated");
			return fail(x, "0x%8.8zx: missing FunctionInfo data "
			    "for InfoType %" PRIu32, c.off, type);
		}
		cc = c;
		cc.base = c.base + c.off;
		cc.off = 0;
		cc.end = len;
		switch (type) {
		case GSYM_INFO_END:
			goto out;
		case GSYM_INFO_LINES:
			/* A second one replaces the first, as in LLVM. */
			if ((rc = line_table(d, &cc, f->start)) != 0)
				return rc;
			f->has_lines = 1;
			break;
		case GSYM_INFO_INLINE:
			/* A lookup reads the last one, after the rest. */
			f->has_inline = 1;
			inl = cc;
			if (!x->dump)
				break;
			d->nnodes = 0;
			d->nranges = 0;
			if ((rc = inline_node(d, &cc, f->start, 0)) < 0)
				return rc;
			break;
		default:
			if (x->dump)
				return fail(x, "0x%8.8zx: unsupported InfoType "
				    "%" PRIu32, at, type);
			break;
		}
		c.off += len;
	}
out:
	/* As LLVM's lookup, use inline info only with a line table. */
	if (!x->dump && f->has_inline) {
		if (!f->has_lines)
			f->has_inline = 0;
		else if ((rc = inline_node(d, &inl, f->start, 0)) < 0)
			return rc;
	}
	f->sorted = d->sorted;
	f->rows = d->rows;
	f->nrows = f->has_lines ? d->nrows : 0;
	f->nodes = d->nodes;
	f->nnodes = f->has_inline ? d->nnodes : 0;
	f->ranges = d->ranges;
	f->nranges = f->has_inline ? d->nranges : 0;
	f->bytes = sizeof(*f) + f->nrows * sizeof(struct row) +
	    f->nnodes * sizeof(struct node) +
	    f->nranges * sizeof(struct range);
	return 0;
}

/* Decode record index into one allocation of its own. */
static int
decode(struct ctx *x, uint32_t index, struct gsym_func **out)
{
	struct gsym_func tmp, *f;
	struct dec d;
	int rc;

	*out = NULL;
	memset(&d, 0, sizeof(d));
	d.x = x;
	if ((rc = parse(x, index, &tmp, &d)) != 0)
		goto out;
	if ((f = malloc(tmp.bytes)) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	*f = tmp;
	f->heap = 1;
	f->rows = (struct row *)(f + 1);
	f->nodes = (struct node *)(f->rows + f->nrows);
	f->ranges = (struct range *)(f->nodes + f->nnodes);
	if (f->nrows != 0)
		memcpy(f->rows, d.rows, f->nrows * sizeof(*f->rows));
	if (f->nnodes != 0)
		memcpy(f->nodes, d.nodes, f->nnodes * sizeof(*f->nodes));
	if (f->nranges != 0)
		memcpy(f->ranges, d.ranges, f->nranges * sizeof(*f->ranges));
	*out = f;
out:
	dec_free(&d);
	return rc;
}

int
gsym_decode(const struct gsym *g, uint32_t index, struct gsym_func **out)
{
	struct ctx x = { g, NULL, 0 };

	return decode(&x, index, out);
}

size_t
gsym_func_size(const struct gsym_func *f)
{
	return f->bytes;
}

void
gsym_func_free(struct gsym_func *f)
{
	if (f != NULL && f->heap)
		free(f);
}

/* ---- Lookup in a decoded record ---- */

static int
node_has(const struct gsym_func *f, const struct node *nd, uint64_t addr)
{
	const struct range *r = f->ranges + nd->range;
	uint32_t i;

	for (i = 0; i < nd->nranges; i++)
		if (r[i].start <= addr && addr < r[i].end)
			return 1;
	return 0;
}

/* The last row at or below addr, before the first row above it. */
static const struct row *
row_find(const struct gsym_func *f, uint64_t addr)
{
	size_t lo = 0, hi = f->nrows, mid;

	if (f->sorted) {
		while (lo < hi) {
			mid = lo + (hi - lo) / 2;
			if (f->rows[mid].addr <= addr)
				lo = mid + 1;
			else
				hi = mid;
		}
	} else {
		while (lo < f->nrows && f->rows[lo].addr <= addr)
			lo++;
	}
	return lo == 0 ? NULL : &f->rows[lo - 1];
}

/* LLVM's InlineInfo::lookup: descend into the first child holding addr
 * at each level; then, innermost first, each node whose call file is
 * known renames the innermost frame to itself and pushes its caller. */
static int
inline_frames(struct ctx *x, const struct gsym_func *f, uint64_t addr,
    struct gsym_result *res)
{
	const struct gsym *g = x->g;
	uint32_t path[GSYM_FRAMES_MAX], dir, base, c, stop;
	size_t np = 0, k;
	const struct node *nd;
	struct gsym_frame *last, *fr;
	int rc;

	if (f->nnodes == 0 || !node_has(f, &f->nodes[0], addr))
		return 0;
	path[np++] = 0;
	for (;;) {
		c = path[np - 1] + 1;
		stop = f->nodes[path[np - 1]].next;
		while (c < stop && !node_has(f, &f->nodes[c], addr))
			c = f->nodes[c].next;
		/* Depth is bounded by the decoder. */
		if (c >= stop || np == GSYM_FRAMES_MAX)
			break;
		path[np++] = c;
	}
	for (k = np; k-- > 0;) {
		nd = &f->nodes[path[k]];
		if (nd->call_file >= g->nfiles)
			return fail(x, "failed to extract file[%" PRIu32 "]",
			    nd->call_file);
		file_get(g, nd->call_file, &dir, &base);
		if (dir == 0 && base == 0)
			continue;
		if (res->nframes == GSYM_FRAMES_MAX)
			return fail(x, "more than %d inline frames",
			    GSYM_FRAMES_MAX);
		last = &res->frames[res->nframes - 1];
		fr = &res->frames[res->nframes];
		fr->name = last->name;
		fr->offset = last->offset;
		if ((rc = str_get(x, dir, &fr->dir)) != 0 ||
		    (rc = str_get(x, base, &fr->base)) != 0 ||
		    (rc = str_get(x, nd->name, &last->name)) != 0)
			return rc;
		fr->line = nd->call_line;
		fr->inlined = 0;
		last->offset = addr - nd->base;
		res->nframes++;
	}
	return 0;
}

static int
func_lookup(struct ctx *x, const struct gsym_func *f, uint64_t addr,
    struct gsym_result *res)
{
	const struct gsym *g = x->g;
	const struct row *r;
	struct gsym_frame *fr;
	uint32_t dir, base;
	size_t i;
	int rc;

	res->addr = addr;
	res->start = f->start;
	res->size = f->size;
	res->nframes = 0;
	if (addr < f->start ||
	    (f->size != 0 && addr - f->start >= f->size))
		return -ENOENT;
	fr = &res->frames[0];
	memset(fr, 0, sizeof(*fr));
	if ((rc = str_get(x, f->name, &fr->name)) != 0)
		return rc;
	fr->offset = addr - f->start;
	fr->dir = "";
	fr->base = NULL;
	if (!f->has_lines) {
		res->nframes = 1;
		return 0;
	}
	r = row_find(f, addr);
	if (r == NULL || r->file == 0)
		return fail(x, "address 0x%" PRIx64 " is not in the line "
		    "table", addr);
	if (r->file >= g->nfiles)
		return fail(x, "failed to extract file[%" PRIu32 "]",
		    r->file);
	file_get(g, r->file, &dir, &base);
	if ((rc = str_get(x, dir, &fr->dir)) != 0 ||
	    (rc = str_get(x, base, &fr->base)) != 0)
		return rc;
	fr->line = r->line;
	res->nframes = 1;
	if (f->has_inline &&
	    (rc = inline_frames(x, f, addr, res)) != 0) {
		res->nframes = 0;
		return rc;
	}
	for (i = 0; i < res->nframes; i++)
		res->frames[i].inlined = i + 1 < res->nframes;
	return 0;
}

int
gsym_func_lookup(const struct gsym *g, const struct gsym_func *f,
    uint64_t addr, struct gsym_result *res)
{
	struct ctx x = { g, res->error, 0 };

	res->error[0] = '\0';
	return func_lookup(&x, f, addr, res);
}

int
gsym_lookup(const struct gsym *g, uint64_t addr, struct gsym_result *res)
{
	/* Most records decode into these; bigger ones move to the heap. */
	struct row rows[256];
	struct node nodes[64];
	struct range ranges[128];
	struct ctx x = { g, res->error, 0 };
	struct gsym_func f;
	struct dec d;
	uint32_t index;
	int rc;

	res->error[0] = '\0';
	res->addr = addr;
	res->start = 0;
	res->size = 0;
	res->nframes = 0;
	if ((rc = find(&x, addr, &index)) != 0)
		return rc;
	memset(&d, 0, sizeof(d));
	d.x = &x;
	d.rows = rows;
	d.caprows = sizeof(rows) / sizeof(rows[0]);
	d.nodes = nodes;
	d.capnodes = sizeof(nodes) / sizeof(nodes[0]);
	d.ranges = ranges;
	d.capranges = sizeof(ranges) / sizeof(ranges[0]);
	if ((rc = parse(&x, index, &f, &d)) == 0)
		rc = func_lookup(&x, &f, addr, res);
	dec_free(&d);
	return rc;
}

/* ---- Printing ---- */

/* LLVM puts a backslash after a directory with backslashes only. */
static char
dir_sep(const char *dir, size_t len)
{
	return memchr(dir, '\\', len) != NULL && memchr(dir, '/', len) == NULL
	    ? '\\' : '/';
}

void
gsym_print_result(FILE *fp, uint64_t addr, int rc,
    const struct gsym_result *res)
{
	const struct gsym_frame *fr;
	size_t i;

	fprintf(fp, "0x%016" PRIx64 ": ", addr);
	if (rc != 0) {
		fputs("error: ", fp);
		if (rc == -ENOENT)
			fprintf(fp, "address 0x%" PRIx64 " is not in GSYM",
			    addr);
		else if (res != NULL && res->error[0] != '\0')
			fputs(res->error, fp);
		else if (rc == -EBADMSG)
			fputs("corrupt GSYM data", fp);
		else
			fputs(strerror(-rc), fp);
		putc('\n', fp);
		return;
	}
	for (i = 0; i < res->nframes; i++) {
		fr = &res->frames[i];
		if (i > 0)
			fprintf(fp, "\n%20s", "");
		fputs(fr->name, fp);
		/* LLVM keeps offsets in 32 bits. */
		if ((uint32_t)fr->offset != 0)
			fprintf(fp, " + %" PRIu32, (uint32_t)fr->offset);
		if (fr->base != NULL && (fr->dir[0] != '\0' ||
		    fr->base[0] != '\0')) {
			fputs(" @ ", fp);
			if (fr->dir[0] != '\0') {
				fputs(fr->dir, fp);
				putc(dir_sep(fr->dir, strlen(fr->dir)), fp);
			}
			fputs(fr->base[0] != '\0' ? fr->base :
			    "<invalid-file>", fp);
			fprintf(fp, ":%" PRIu32, fr->line);
		}
		if (i + 1 < res->nframes)
			fputs(" [inlined]", fp);
	}
	putc('\n', fp);
}

/* ---- Dump ---- */

/*
 * A dump can run to hundreds of megabytes: gsym_dump() holds the stream's
 * lock throughout and the hot lines are formatted by hand.
 */

static void
put(FILE *fp, const void *p, size_t n)
{
	fwrite_unlocked(p, 1, n, fp);
}

/* HEX64: "0x" and 16 lowercase hex digits. */
static char *
fmt_hex64(char *p, uint64_t v)
{
	int i;

	*p++ = '0';
	*p++ = 'x';
	for (i = 60; i >= 0; i -= 4)
		*p++ = hex_digits[(v >> i) & 0xf];
	return p;
}

static char *
fmt_dec(char *p, uint32_t v)
{
	char t[10];
	int n = 0;

	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0)
		*p++ = t[--n];
	return p;
}

/* "[start - end)", as LLVM prints an AddressRange. */
static void
put_range(FILE *fp, const char *pre, uint64_t start, uint64_t end)
{
	char buf[64], *p = buf;

	while (*pre != '\0')
		*p++ = *pre++;
	*p++ = '[';
	p = fmt_hex64(p, start);
	memcpy(p, " - ", 3);
	p = fmt_hex64(p + 3, end);
	*p++ = ')';
	put(fp, buf, (size_t)(p - buf));
}

/* ":LINE" and what follows it. */
static void
put_line(FILE *fp, uint32_t line, const char *post)
{
	char buf[32], *p = buf;

	*p++ = ':';
	p = fmt_dec(p, line);
	while (*post != '\0')
		*p++ = *post++;
	put(fp, buf, (size_t)(p - buf));
}

/* A string as LLVM's StringTable gives it: "" past the table, else up to
 * the next NUL or the table's end. */
static void
put_str(FILE *fp, const struct gsym *g, uint32_t off)
{
	const char *s;

	if (off >= g->strtab_size)
		return;
	s = g->strtab + off;
	put(fp, s, strnlen(s, g->strtab_size - off));
}

static size_t
str_len(const struct gsym *g, uint32_t off)
{
	return off >= g->strtab_size ? 0 :
	    strnlen(g->strtab + off, g->strtab_size - off);
}

/* GsymReader::dump(FileEntry): nothing for {0, 0}, "<invalid-file>"
 * for a missing entry or one whose strings are both empty. */
static void
put_file(FILE *fp, const struct gsym *g, uint32_t i)
{
	uint32_t dir, base;
	size_t dl, bl;

	if (i >= g->nfiles) {
		fputs_unlocked("<invalid-file>", fp);
		return;
	}
	file_get(g, i, &dir, &base);
	if (dir == 0 && base == 0)
		return;
	dl = str_len(g, dir);
	bl = str_len(g, base);
	if (dl != 0) {
		put(fp, g->strtab + dir, dl);
		putc_unlocked(dir_sep(g->strtab + dir, dl), fp);
	}
	if (bl != 0)
		put(fp, g->strtab + base, bl);
	if (dl == 0 && bl == 0)
		fputs_unlocked("<invalid-file>", fp);
}

static int
range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

/* A node's ranges as LLVM's AddressRanges holds them: sorted, with
 * overlapping and adjacent ones merged. */
static void
put_ranges(FILE *fp, const struct gsym_func *f, const struct node *nd)
{
	struct range *r, cur;
	uint32_t i;
	int first = 1;

	if (nd->nranges == 0)
		return;
	r = f->ranges + nd->range;
	/* Decoded memory is the caller's own; sorting in place is fine. */
	if (nd->nranges > 1)
		qsort(r, nd->nranges, sizeof(*r), range_cmp);
	cur = r[0];
	for (i = 1; i <= nd->nranges; i++) {
		if (i < nd->nranges && r[i].start <= cur.end) {
			if (r[i].end > cur.end)
				cur.end = r[i].end;
			continue;
		}
		put_range(fp, first ? "" : " ", cur.start, cur.end);
		first = 0;
		if (i < nd->nranges)
			cur = r[i];
	}
}

static void
put_inline(FILE *fp, const struct gsym *g, const struct gsym_func *f,
    uint32_t i, unsigned indent)
{
	const struct node *nd = &f->nodes[i];
	uint32_t c;

	if (indent == 0)
		fputs_unlocked("InlineInfo:\n", fp);
	else
		fprintf(fp, "%*s", (int)indent, "");
	put_ranges(fp, f, nd);
	putc_unlocked(' ', fp);
	put_str(fp, g, nd->name);
	if (nd->call_file != 0 && nd->call_file < g->nfiles) {
		fputs_unlocked(" called from ", fp);
		put_file(fp, g, nd->call_file);
		put_line(fp, nd->call_line, "");
	}
	putc_unlocked('\n', fp);
	/* Depth is bounded by the decoder. */
	for (c = i + 1; c < nd->next; c = f->nodes[c].next)
		put_inline(fp, g, f, c, indent + 2);
}

static void
put_func(FILE *fp, const struct gsym *g, const struct gsym_func *f)
{
	char buf[32], *p;
	size_t i;

	put_range(fp, "", f->start, f->start + f->size);
	fputs_unlocked(" \"", fp);
	put_str(fp, g, f->name);
	fputs_unlocked("\"\n", fp);
	if (f->has_lines) {
		fputs_unlocked("LineTable:\n", fp);
		for (i = 0; i < f->nrows; i++) {
			p = buf;
			*p++ = ' ';
			*p++ = ' ';
			p = fmt_hex64(p, f->rows[i].addr);
			*p++ = ' ';
			put(fp, buf, (size_t)(p - buf));
			if (f->rows[i].file != 0)
				put_file(fp, g, f->rows[i].file);
			put_line(fp, f->rows[i].line, "\n");
		}
	}
	if (f->has_inline) {
		if (f->nnodes != 0)
			put_inline(fp, g, f, 0, 0);
		else
			fputs_unlocked("InlineInfo:\n \n", fp);
	}
}

int
gsym_dump(FILE *fp, const struct gsym *g)
{
	const struct gsym_header *h = &g->hdr;
	char err[GSYM_ERROR_MAX];
	struct ctx x = { g, err, 1 };
	struct gsym_func *f;
	uint32_t i, dir, base, off;
	size_t n;
	int rc, ret = 0;

	flockfile(fp);
	fprintf(fp, "Header:\n"
	    "  Magic        = 0x%08" PRIx32 "\n"
	    "  Version      = 0x%04" PRIx16 "\n"
	    "  AddrOffSize  = 0x%02x\n"
	    "  UUIDSize     = 0x%02x\n"
	    "  BaseAddress  = 0x%016" PRIx64 "\n"
	    "  NumAddresses = 0x%08" PRIx32 "\n"
	    "  StrtabOffset = 0x%08" PRIx32 "\n"
	    "  StrtabSize   = 0x%08" PRIx32 "\n"
	    "  UUID         = ", h->magic, h->version, h->addr_off_size,
	    h->uuid_size, h->base_address, h->num_addresses,
	    h->strtab_offset, h->strtab_size);
	for (i = 0; i < h->uuid_size; i++)
		fprintf(fp, "%02x", h->uuid[i]);
	fprintf(fp, "\n\nAddress Table:\nINDEX  OFFSET%s (ADDRESS)\n"
	    "====== =============================== \n",
	    h->addr_off_size == 1 ? "8 " : h->addr_off_size == 2 ? "16" :
	    h->addr_off_size == 4 ? "32" : "64");
	for (i = 0; i < h->num_addresses; i++) {
		/* HEX8, HEX16, HEX32, and HEX32 again for 8-byte offsets. */
		fprintf(fp, "[%4" PRIu32 "] 0x%0*" PRIx64 " (0x%016" PRIx64
		    ")\n", i, h->addr_off_size == 1 ? 2 :
		    h->addr_off_size == 2 ? 4 : 8, addr_off(g, i),
		    h->base_address + addr_off(g, i));
	}
	fputs("\nAddress Info Offsets:\nINDEX  Offset\n"
	    "====== ==========\n", fp);
	for (i = 0; i < h->num_addresses; i++)
		fprintf(fp, "[%4" PRIu32 "] 0x%08" PRIx32 "\n", i,
		    rec_off(g, i));
	fputs("\nFiles:\nINDEX  DIRECTORY  BASENAME   PATH\n"
	    "====== ========== ========== ==============================\n",
	    fp);
	for (i = 0; i < g->nfiles; i++) {
		file_get(g, i, &dir, &base);
		fprintf(fp, "[%4" PRIu32 "] 0x%08" PRIx32 " 0x%08" PRIx32 " ",
		    i, dir, base);
		put_file(fp, g, i);
		putc('\n', fp);
	}
	fputs("\nString table:\n", fp);
	for (off = 0; off < g->strtab_size; off += (uint32_t)n + 1) {
		n = str_len(g, off);
		fprintf(fp, "0x%08" PRIx32 ": \"", off);
		put_str(fp, g, off);
		fputs("\"\n", fp);
		if (n >= g->strtab_size - off)
			break;
	}
	putc('\n', fp);
	for (i = 0; i < h->num_addresses; i++) {
		fprintf(fp, "FunctionInfo @ 0x%08" PRIx32 ": ", rec_off(g, i));
		err[0] = '\0';
		if ((rc = decode(&x, i, &f)) != 0) {
			fprintf(fp, "FunctionInfo:%s\n", rc == -EBADMSG ?
			    err : strerror(-rc));
			ret = rc;
			continue;
		}
		put_func(fp, g, f);
		gsym_func_free(f);
	}
	funlockfile(fp);
	return ret;
}
