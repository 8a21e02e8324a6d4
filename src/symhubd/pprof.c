/*
 * pprof: read, check, fill in and write a pprof profile (pprof.h).
 *
 * protobuf-c decodes the Profile through profile_view.proto, which reads
 * each sample as the bytes it came in: the hub never changes a sample,
 * and a million of them decoded and encoded again cost more than all
 * the rest.  Everything decoded, and everything the answer adds, comes
 * from one arena freed at once; decoding stops past a budget (a hostile
 * body of tiny repeated messages costs far more decoded than on the
 * wire).  Everything not named here (samples, labels, comments, unknown
 * fields) is written back as it came.
 *
 * The answer is gzip-compressed, and mostly the profile that came in:
 * protobuf writers put the sample types and samples (fields 1 and 2)
 * before the mappings, locations, functions and strings the hub changes.
 * Those leading fields are found by their tags and lengths alone, never
 * decoded (but the sample types, to check their strings), and are the
 * answer's first bytes as they came; only the fields after them are
 * decoded and written anew.  The compressed blocks of a gzip input that
 * hold only those first bytes are the answer's as they came too, sent
 * from the request's body (a block may refer back only to bytes before
 * it, the same in both), and only the rest is compressed (spliced in at
 * the copied blocks' last bit, as zlib's gzjoin.c does); the CRC of the
 * whole is the input's up to there combined with the new bytes', so the
 * copied bytes are never read again.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>
#include <zlib.h>

#include "common/webapi.h"
#include "arena.h"
#include "pprof.h"
#include "proftab.h"
#include "symhubd/profile_view.pb-c.h"

/* protobuf-c's names of the messages, shortened */
typedef Perftools__Profiles__ProfileView	Profile;
typedef Perftools__Profiles__Mapping	Mapping;
typedef Perftools__Profiles__Location	Location;
typedef Perftools__Profiles__Function	Function;
typedef Perftools__Profiles__Line	Line;
typedef Perftools__Profiles__ValueType	ValueType;

/* An id and where it is, sorted by id. */
struct ident {
	uint64_t	id;
	size_t		i;
};

/* Where a deflate block of the input ends: the bytes inflated before
 * it, the bits of the gzip member before it, and the CRC-32 of those
 * bytes (zlib's, kept as it inflates). */
struct bound {
	size_t		out;
	uint64_t	bit;
	uint32_t	crc;
};

struct pprof {
	Profile			*pf;
	struct arena		 ar;
	unsigned char		*raw;		/* the profile inflated, or */
	size_t			 rawcap;
	const unsigned char	*plain;		/* as it came */
	size_t			 plainlen;
	const unsigned char	*gz;		/* the body, gzip'd, or NULL */
	struct bound		*bounds;	/* of its deflate blocks, the
						 * first the deflate stream's
						 * start; none when it is not
						 * one gzip member */
	size_t			 nbounds;
	size_t			 reuse_min;
	size_t			 lead;		/* the leading sample types and
						 * samples: bytes, never
						 * written anew */
	size_t			 nlead;		/* the sample types among them,
						 * the first of pf's */
	struct ident		*locs, *maps, *funcs;
	struct pprof_module	*mods;
	size_t			 nmods;
	size_t			*modof;		/* a mapping's module + 1, or
						 * 0: left alone */
	size_t			 strcap;	/* of pf->string_table */
	struct proftab		 stab;		/* strings added: (a, b) of
						 * proftab_text() -> index */
	struct proftab		 ftab;		/* functions added: a frame's
						 * name, dir, base -> id */
	size_t			 funccap;
	uint64_t		 nextfunc;
};

/*
 * Decoding may take at most this many times the bytes decoded, counted
 * at its peak (protobuf-c's scratch too).  Measured (arena bytes over
 * profile bytes, 38 MB profiles): unsymbolized, 1 M samples over 200 k
 * locations, 2.5; symbolized already as Go writes it, three lines a
 * location, 4.6, the most a real profile took.  Tiny messages cost
 * far more than their bytes (a struct of 48-88 bytes, a pointer and
 * scratch for two bytes on the wire): 19 M empty strings 20 (36 at the
 * peak), 10 M minimal locations 16, one location of 9 M lines 18,
 * empty mappings or locations 52: refused, 413, at 8 times their bytes
 * (at most 8 x 40 MB at the defaults, was 24 x).  Every profile being
 * read draws on --profile-memory-max too (arena.h).
 */
#define DECODE_FACTOR	8
#define DECODE_SLACK	(1u << 20)

/* Copy no fewer bytes of the input than this: less saves nothing. */
#define REUSE_MIN	(64u << 10)

/* The large buffers a profile freed are kept mapped for the next one
 * (arena.c), up to this many times the largest profile inflated. */
#define KEEP_FACTOR	8

/*
 * Inflate a gzip stream of len bytes into at most max bytes.  Where each
 * deflate block of its first member ends goes to bounds (none when more
 * members follow: the answer then copies none of it).
 */
static int
inflate_all(const unsigned char *in, size_t len, size_t max,
    unsigned char **out, size_t *outlen, size_t *outcap,
    struct bound **bounds, size_t *nbounds, const char **why)
{
	z_stream	 z;
	unsigned char	*b = NULL, *nb;
	struct bound	*bt = NULL, *nbt;
	size_t		 cap = 0, ncap, have = 0, bcap = 0, nb_ = 0;
	int		 rc, zr = Z_OK, first = 1;

	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return -ENOMEM;
	z.next_in = (unsigned char *)(uintptr_t)in;
	for (;;) {
		size_t chunk = len - (size_t)((const unsigned char *)z.next_in -
		    in);

		z.avail_in = chunk > UINT32_MAX ? UINT32_MAX : (uInt)chunk;
		if (have == cap) {
			if (cap >= max + 1) {
				*why = "the profile inflates past the limit";
				rc = -E2BIG;
				goto out;
			}
			/* The first member's ISIZE, when it is the only one
			 * (else it grows); room for one byte more, to see
			 * the end without growing. */
			ncap = cap != 0 ? 2 * cap : len < 18 ? 16384 :
			    (size_t)in[len - 4] | (size_t)in[len - 3] << 8 |
			    (size_t)in[len - 2] << 16 |
			    (size_t)in[len - 1] << 24;
			if (ncap < 16384)
				ncap = 16384;
			if (ncap > max + 1)
				ncap = max + 1;
			if ((nb = arena_big_alloc(ncap)) == NULL) {
				rc = -ENOMEM;
				goto out;
			}
			if (have > 0)
				memcpy(nb, b, have);
			arena_big_free(b, cap);
			b = nb;
			cap = ncap;
		}
		z.next_out = b + have;
		z.avail_out = (uInt)(cap - have > UINT32_MAX ? UINT32_MAX :
		    cap - have);
		zr = inflate(&z, first ? Z_BLOCK : Z_NO_FLUSH);
		have = (size_t)(z.next_out - b);
		if (have > max) {
			*why = "the profile inflates past the limit";
			rc = -E2BIG;
			goto out;
		}
		if (zr == Z_STREAM_END) {
			size_t used = (size_t)((const unsigned char *)
			    z.next_in - in);

			/* Another member: read it too, as gzip(1) does. */
			if (len - used < 2 || in[used] != 0x1f ||
			    in[used + 1] != 0x8b)
				break;
			if (inflateReset(&z) != Z_OK) {
				rc = -ENOMEM;
				goto out;
			}
			first = 0;
			nb_ = 0;
			continue;
		}
		if (zr != Z_OK && !(zr == Z_BUF_ERROR && z.avail_out == 0)) {
			*why = "a corrupt or truncated gzip stream";
			rc = -EINVAL;
			goto out;
		}
		/* At the end of a block not the last, or of the header. */
		if (first && (z.data_type & 128) && !(z.data_type & 64)) {
			if (nb_ == bcap) {
				bcap = bcap == 0 ? 256 : 2 * bcap;
				if ((nbt = reallocarray(bt, bcap,
				    sizeof(*bt))) == NULL) {
					rc = -ENOMEM;
					goto out;
				}
				bt = nbt;
			}
			bt[nb_].out = have;
			bt[nb_].crc = (uint32_t)z.adler;
			bt[nb_++].bit = 8 * (uint64_t)((const unsigned char *)
			    z.next_in - in) - (uint64_t)(z.data_type & 7);
		}
	}
	*out = b;
	*outlen = have;
	*outcap = cap;
	*bounds = bt;
	*nbounds = nb_;
	b = NULL;
	bt = NULL;
	rc = 0;
out:
	inflateEnd(&z);
	arena_big_free(b, cap);
	free(bt);
	return rc;
}

static int
ident_cmp(const void *a, const void *b)
{
	const struct ident *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Sort n ids (ids of 0, and an id twice, refused). */
static int
ident_make(size_t n, uint64_t (*idof)(const Profile *, size_t),
    const Profile *pf, struct ident **out)
{
	struct ident	*t;
	size_t		 i;

	*out = NULL;
	if ((t = calloc(n + 1, sizeof(*t))) == NULL)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		t[i].id = idof(pf, i);
		t[i].i = i;
	}
	qsort(t, n, sizeof(*t), ident_cmp);
	*out = t;
	for (i = 0; i < n; i++)
		if (t[i].id == 0 || (i > 0 && t[i].id == t[i - 1].id))
			return -EINVAL;
	return 0;
}

/* Where id is: its index + 1, or 0.  Ids 1..n (what every writer makes)
 * are found at once. */
static size_t
ident_find(const struct ident *t, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	if (id - 1 < n && t[id - 1].id == id)
		return t[id - 1].i + 1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t[mid].id == id)
			return t[mid].i + 1;
		if (t[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static uint64_t
loc_id(const Profile *pf, size_t i)
{
	return pf->location[i]->id;
}

static uint64_t
map_id(const Profile *pf, size_t i)
{
	return pf->mapping[i]->id;
}

static uint64_t
func_id(const Profile *pf, size_t i)
{
	return pf->function[i]->id;
}

#define STR_OK(pf, x)	((x) >= 0 && (uint64_t)(x) < (pf)->n_string_table)

/* Every string index of the profile in the table?  (A sample's, the
 * hub does not read: the strings it adds come after the table's.) */
static int
strings_ok(const Profile *pf)
{
	size_t i;

	for (i = 0; i < pf->n_sample_type; i++)
		if (!STR_OK(pf, pf->sample_type[i]->type) ||
		    !STR_OK(pf, pf->sample_type[i]->unit))
			return 0;
	for (i = 0; i < pf->n_mapping; i++)
		if (!STR_OK(pf, pf->mapping[i]->filename) ||
		    !STR_OK(pf, pf->mapping[i]->build_id))
			return 0;
	for (i = 0; i < pf->n_function; i++)
		if (!STR_OK(pf, pf->function[i]->name) ||
		    !STR_OK(pf, pf->function[i]->system_name) ||
		    !STR_OK(pf, pf->function[i]->filename))
			return 0;
	for (i = 0; i < pf->n_comment; i++)
		if (!STR_OK(pf, pf->comment[i]))
			return 0;
	if (!STR_OK(pf, pf->drop_frames) || !STR_OK(pf, pf->keep_frames) ||
	    !STR_OK(pf, pf->default_sample_type) || !STR_OK(pf, pf->doc_url))
		return 0;
	if (pf->period_type != NULL && (!STR_OK(pf, pf->period_type->type) ||
	    !STR_OK(pf, pf->period_type->unit)))
		return 0;
	return 1;
}

/*
 * protobuf-c keeps a field it does not know, to write it back, but takes
 * one numbered 0 (a tag of two bytes, say 0x80 0x00) that it then
 * refuses to read once written: the answer would not read back.
 */
static int
tags_ok(const ProtobufCMessage *m)
{
	size_t i;

	for (i = 0; i < m->n_unknown_fields; i++)
		if (m->unknown_fields[i].tag == 0)
			return 0;
	return 1;
}

/* Every message of the profile without a field numbered 0? */
static int
all_tags_ok(const Profile *pf)
{
	size_t i, j;

	if (!tags_ok(&pf->base) || (pf->period_type != NULL &&
	    !tags_ok(&pf->period_type->base)))
		return 0;
	for (i = 0; i < pf->n_sample_type; i++)
		if (!tags_ok(&pf->sample_type[i]->base))
			return 0;
	for (i = 0; i < pf->n_mapping; i++)
		if (!tags_ok(&pf->mapping[i]->base))
			return 0;
	for (i = 0; i < pf->n_location; i++) {
		if (!tags_ok(&pf->location[i]->base))
			return 0;
		for (j = 0; j < pf->location[i]->n_line; j++)
			if (!tags_ok(&pf->location[i]->line[j]->base))
				return 0;
	}
	for (i = 0; i < pf->n_function; i++)
		if (!tags_ok(&pf->function[i]->base))
			return 0;
	return 1;
}

/* The mapping that holds addr, by p->maps sorted by memory_start. */
static const Mapping *
map_at(const struct pprof *p, const struct ident *bystart, size_t n,
    uint64_t addr)
{
	const Profile	*pf = p->pf;
	size_t		 lo = 0, hi = n;

	while (lo < hi) {
		size_t		 mid = lo + (hi - lo) / 2;
		const Mapping	*m = pf->mapping[bystart[mid].i];

		if (addr < m->memory_start)
			hi = mid;
		else if (addr >= m->memory_limit)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

/* Mappings: none ends before it starts, none overlaps another. */
static int
mappings_ok(const struct pprof *p, struct ident **bystart,
    const char **why)
{
	const Profile	*pf = p->pf;
	struct ident	*t;
	size_t		 i, n = 0;

	if ((t = calloc(pf->n_mapping + 1, sizeof(*t))) == NULL)
		return -ENOMEM;
	*bystart = t;
	for (i = 0; i < pf->n_mapping; i++) {
		const Mapping *m = pf->mapping[i];

		if (m->memory_limit < m->memory_start) {
			*why = "a mapping whose memory_limit is below its "
			    "memory_start";
			return -EINVAL;
		}
		if (m->memory_limit == m->memory_start)
			continue;	/* Go's fake mappings: no range */
		t[n].id = m->memory_start;
		t[n++].i = i;
	}
	qsort(t, n, sizeof(*t), ident_cmp);
	for (i = 1; i < n; i++)
		if (pf->mapping[t[i].i]->memory_start <
		    pf->mapping[t[i - 1].i]->memory_limit) {
			*why = "mappings that overlap";
			return -EINVAL;
		}
	return (int)n;
}

/* The module a mapping's build_id names: 0 with m set, or -EINVAL. */
static int
parse_id(const char *s, struct pprof_module *m)
{
	char	lower[WEBAPI_ID_HEX_MAX];
	size_t	i, len = strlen(s);
	int	n;

	if (len == 0 || len > sizeof(lower) || len % 2 != 0)
		return -EINVAL;
	for (i = 0; i < len; i++)
		lower[i] = s[i] >= 'A' && s[i] <= 'F' ? (char)(s[i] - 'A' +
		    'a') : s[i];
	if ((n = webapi_parse_hexid(lower, len, m->id)) < 0 ||
	    (size_t)n > CACHE_ID_MAX)
		return -EINVAL;
	m->idlen = (size_t)n;
	m->maybe_fileid = n == CACHE_FILEID_LEN;
	return 0;
}

static int
check(struct pprof *p, const struct pprof_limits *lim, const char **why)
{
	Profile		*pf = p->pf;
	struct ident	*bystart = NULL;
	size_t		 i, j, nranges;
	int		 rc;

	if (pf->n_location > lim->max_locations) {
		*why = "too many locations";
		return -E2BIG;
	}
	if (!all_tags_ok(pf)) {
		*why = "a corrupt protobuf: a field numbered 0";
		return -EINVAL;
	}
	if (pf->n_string_table == 0 || pf->string_table[0][0] != '\0') {
		*why = "the string table does not start with \"\"";
		return -EINVAL;
	}
	if (!strings_ok(pf)) {
		*why = "a string index out of the string table";
		return -EINVAL;
	}
	if ((rc = ident_make(pf->n_location, loc_id, pf, &p->locs)) != 0 ||
	    (rc = ident_make(pf->n_mapping, map_id, pf, &p->maps)) != 0 ||
	    (rc = ident_make(pf->n_function, func_id, pf, &p->funcs)) != 0) {
		if (rc == -EINVAL)
			*why = "an id of 0, or one id twice";
		return rc;
	}
	for (i = 0; i < pf->n_function; i++)
		if (pf->function[i]->id >= p->nextfunc)
			p->nextfunc = pf->function[i]->id + 1;
	if (pf->n_function > 0 && p->nextfunc == 0) {
		*why = "a function id of 2^64-1 leaves none to add";
		return -EINVAL;
	}
	if (p->nextfunc == 0)
		p->nextfunc = 1;
	if ((rc = mappings_ok(p, &bystart, why)) < 0)
		goto out;
	nranges = (size_t)rc;
	for (i = 0; i < pf->n_location; i++) {
		const Location	*l = pf->location[i];
		const Mapping	*m;
		size_t		 k;

		for (j = 0; j < l->n_line; j++)
			if (ident_find(p->funcs, pf->n_function,
			    l->line[j]->function_id) == 0) {
				*why = "a line names a function that is not "
				    "there";
				rc = -EINVAL;
				goto out;
			}
		if (l->mapping_id == 0) {
			if (l->address != 0 && nranges > 0 &&
			    map_at(p, bystart, nranges,
			    l->address) == NULL) {
				*why = "a location address outside every "
				    "mapping";
				rc = -EINVAL;
				goto out;
			}
			continue;
		}
		if ((k = ident_find(p->maps, pf->n_mapping,
		    l->mapping_id)) == 0) {
			*why = "a location names a mapping that is not there";
			rc = -EINVAL;
			goto out;
		}
		m = pf->mapping[k - 1];
		if (m->memory_limit > m->memory_start && l->address != 0 &&
		    (l->address < m->memory_start ||
		    l->address >= m->memory_limit)) {
			*why = "a location address outside its mapping";
			rc = -EINVAL;
			goto out;
		}
	}
	rc = 0;
out:
	free(bystart);
	return rc;
}

/* The modules of the mappings to symbolize, one a distinct id. */
static int
modules(struct pprof *p, const char **why)
{
	Profile	*pf = p->pf;
	size_t	 i, k;

	if ((p->modof = calloc(pf->n_mapping + 1, sizeof(*p->modof))) ==
	    NULL || (p->mods = calloc(pf->n_mapping + 1,
	    sizeof(*p->mods))) == NULL)
		return -ENOMEM;
	for (i = 0; i < pf->n_mapping; i++) {
		const Mapping		*m = pf->mapping[i];
		struct pprof_module	 pm;

		if (m->has_functions || m->build_id == 0)
			continue;	/* done already, or nothing to ask */
		if (parse_id(pf->string_table[m->build_id], &pm) != 0) {
			*why = "a mapping's build_id is neither a build-id "
			    "nor a FileID in hex";
			return -EINVAL;
		}
		for (k = 0; k < p->nmods; k++)
			if (p->mods[k].idlen == pm.idlen &&
			    memcmp(p->mods[k].id, pm.id, pm.idlen) == 0)
				break;
		if (k == p->nmods)
			p->mods[p->nmods++] = pm;
		p->modof[i] = k + 1;
	}
	return 0;
}

/* The tags of sample_type (1) and sample (2), both length-delimited. */
#define TAG_SAMPLE_TYPE	(1u << 3 | 2)
#define TAG_SAMPLE	(2u << 3 | 2)

/*
 * The bytes of the leading fields of b that are sample types or samples,
 * and the sample types among them (*n): the fields a tag and a length
 * each, read whole, up to the first other field or the first that is not
 * whole (the decoder then tells what is wrong with it).
 */
static size_t
lead_of(const unsigned char *b, size_t len, size_t *n)
{
	size_t		i = 0, j;
	uint64_t	tag, flen;

	*n = 0;
	while (i < len) {
		j = i;
		if (proftab_varint(b, len, &j, &tag) != 0 ||
		    (tag != TAG_SAMPLE_TYPE && tag != TAG_SAMPLE) ||
		    proftab_varint(b, len, &j, &flen) != 0 || flen > len - j)
			break;
		if (tag == TAG_SAMPLE_TYPE)
			(*n)++;
		i = j + (size_t)flen;
	}
	return i;
}

/*
 * Decode the profile after its p->lead leading bytes, and the sample
 * types among those (n), which go first in pf->sample_type, as they came.
 */
static int
decode(struct pprof *p, const unsigned char *in, size_t len, size_t n)
{
	ValueType	**vt;
	Profile		 *pf;
	size_t		  i = 0, j, k = 0;
	uint64_t	  tag, flen;

	pf = perftools__profiles__profile_view__unpack(&p->ar.a,
	    len - p->lead, in + p->lead);
	if ((p->pf = pf) == NULL)
		return -1;
	if (n == 0)
		return 0;
	if ((vt = arena_alloc(&p->ar, (n + pf->n_sample_type) *
	    sizeof(*vt))) == NULL)
		return -1;
	while (i < p->lead) {
		j = i;
		/* lead_of() read them whole. */
		(void)proftab_varint(in, p->lead, &j, &tag);
		(void)proftab_varint(in, p->lead, &j, &flen);
		if (tag == TAG_SAMPLE_TYPE && (vt[k++] =
		    perftools__profiles__value_type__unpack(&p->ar.a,
		    (size_t)flen, in + j)) == NULL)
			return -1;
		i = j + (size_t)flen;
	}
	if (pf->n_sample_type > 0)
		memcpy(vt + n, pf->sample_type, pf->n_sample_type *
		    sizeof(*vt));
	pf->sample_type = vt;
	pf->n_sample_type += n;
	p->nlead = n;
	return 0;
}

/*
 * The Profile's locations (field 4) in its len bytes at b, counted from
 * their framing alone: a profile of more is refused before decoding them
 * (they cost some ten times their bytes decoded).  -1 when the framing
 * is broken (protobuf-c then says so).
 */
static int64_t
count_locations(const unsigned char *b, size_t len)
{
	size_t		i = 0;
	int64_t		n = 0;
	uint64_t	key, v;

	while (i < len) {
		if (proftab_varint(b, len, &i, &key) != 0)
			return -1;
		switch (key & 7) {
		case 0:
			if (proftab_varint(b, len, &i, &v) != 0)
				return -1;
			break;
		case 1:
		case 5:
			v = (key & 7) == 1 ? 8 : 4;
			if (v > len - i)
				return -1;
			i += (size_t)v;
			break;
		case 2:
			if (proftab_varint(b, len, &i, &v) != 0 || v > len - i)
				return -1;
			i += (size_t)v;
			n += key >> 3 == 4;
			break;
		default:
			return -1;
		}
	}
	return n;
}

int
pprof_read(const void *body, size_t len, const struct pprof_limits *lim,
    struct pprof **out, const char **why)
{
	const unsigned char	*in = body;
	struct pprof		*p = NULL;
	size_t			 rawlen = len, n;
	int64_t			 nloc;
	int			 rc;

	*out = NULL;
	*why = "out of memory";
	arena_big_keep(lim->max_bytes > SIZE_MAX / KEEP_FACTOR ? SIZE_MAX :
	    lim->max_bytes * KEEP_FACTOR);
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return -ENOMEM;
	arena_pool_begin(lim->own);	/* held to --profile-memory-max */
	if (len >= 2 && in[0] == 0x1f && in[1] == 0x8b) {
		if ((rc = inflate_all(in, len, lim->max_bytes, &p->raw,
		    &rawlen, &p->rawcap, &p->bounds, &p->nbounds, why)) != 0)
			goto out;
		p->gz = in;
		in = p->raw;
		/* The first, the deflate stream's start, is a byte's. */
		if (p->nbounds > 0 && (p->bounds[0].out != 0 ||
		    p->bounds[0].bit % 8 != 0))
			p->nbounds = 0;
	} else if (len > lim->max_bytes) {
		*why = "the profile is larger than the limit";
		rc = -E2BIG;
		goto out;
	}
	p->plain = in;
	p->plainlen = rawlen;
	p->reuse_min = lim->reuse_min > 0 ? lim->reuse_min : REUSE_MIN;
	/* The leading samples hold no locations. */
	p->lead = lead_of(in, rawlen, &n);
	if ((nloc = count_locations(in + p->lead, rawlen - p->lead)) > 0 &&
	    (uint64_t)nloc > lim->max_locations) {
		*why = "too many locations";	/* as check() says */
		rc = -E2BIG;
		goto out;
	}
	arena_init(&p->ar, rawlen > (SIZE_MAX - DECODE_SLACK) / DECODE_FACTOR ?
	    SIZE_MAX : rawlen * DECODE_FACTOR + DECODE_SLACK);
	if (decode(p, in, rawlen, n) != 0) {
		if (p->ar.over) {
			*why = "the profile takes too much memory to decode";
			rc = -E2BIG;
		} else {
			*why = "a corrupt or truncated protobuf";
			rc = -EINVAL;
		}
		goto out;
	}
	/* What the answer adds is bounded by its locations instead. */
	p->ar.left = SIZE_MAX;
	p->strcap = p->pf->n_string_table;
	if ((rc = check(p, lim, why)) != 0 || (rc = modules(p, why)) != 0)
		goto out;
	*out = p;
	p = NULL;
out:
	pprof_free(p);
	if (arena_pool_end() && rc != 0) {
		*why = "the profiles being read take all of "
		    "--profile-memory-max; try again";
		rc = -EBUSY;
	}
	return rc;
}

size_t
pprof_modules(const struct pprof *p, const struct pprof_module **mods)
{
	*mods = p->mods;
	return p->nmods;
}

size_t
pprof_nlocations(const struct pprof *p)
{
	return p->pf->n_location;
}

/* Append s (the arena's) to the string table. */
static int64_t
str_add(struct pprof *p, char *s)
{
	Profile	*pf = p->pf;
	char	**t;

	if (pf->n_string_table == p->strcap) {
		size_t cap = p->strcap < 64 ? 128 : 2 * p->strcap;

		/* the old table stays in the arena: all of them are less
		 * than twice the last */
		if ((t = arena_alloc(&p->ar, cap * sizeof(*t))) == NULL)
			return -ENOMEM;
		memcpy(t, pf->string_table, pf->n_string_table * sizeof(*t));
		pf->string_table = t;
		p->strcap = cap;
	}
	pf->string_table[pf->n_string_table] = s;
	return (int64_t)pf->n_string_table++;
}

/* The index of the string (a, b) stands for (proftab_text()), added
 * once. */
static int64_t
str_of(struct pprof *p, const char *a, const char *b)
{
	struct proftab_ent	*e;
	char			*s;
	int64_t			 idx;

	if (proftab_find(&p->stab, a, b, NULL, &e) != 0)
		return -ENOMEM;
	if (e->v != 0)
		return e->v;
	if ((s = proftab_text(&p->ar, a, b)) == NULL)
		return -ENOMEM;
	if ((idx = str_add(p, s)) < 0)
		return idx;
	proftab_set(&p->stab, e, a, b, NULL, idx);
	return idx;
}

/* The id of the function of frame f, added when new. */
static int
func_of(struct pprof *p, const struct gsym_frame *f, uint64_t *id,
    size_t *added)
{
	Profile			*pf = p->pf;
	struct proftab_ent	*e;
	Function		*fn, **ft;
	int64_t			 name, sys, file = 0;

	if (proftab_find(&p->ftab, f->name, f->dir, f->base, &e) != 0)
		return -ENOMEM;
	if (e->v != 0) {
		*id = (uint64_t)e->v;
		return 0;
	}
	if ((name = str_of(p, f->name, proftab_demangled)) < 0 ||
	    (sys = str_of(p, f->name, proftab_asis)) < 0 ||
	    (f->base != NULL && (file = str_of(p, f->dir, f->base)) < 0))
		return -ENOMEM;
	if (pf->n_function == p->funccap) {
		size_t cap = p->funccap < 64 ? 128 : 2 * p->funccap;

		if ((ft = arena_alloc(&p->ar, cap * sizeof(*ft))) == NULL)
			return -ENOMEM;
		if (pf->n_function > 0)
			memcpy(ft, pf->function, pf->n_function *
			    sizeof(*ft));
		pf->function = ft;
		p->funccap = cap;
	}
	if ((fn = arena_alloc(&p->ar, sizeof(*fn))) == NULL)
		return -ENOMEM;
	perftools__profiles__function__init(fn);
	fn->id = p->nextfunc++;
	fn->name = name;
	fn->system_name = sys;
	fn->filename = file;
	pf->function[pf->n_function++] = fn;
	/* a uint64 id kept as its int64 bits: never 0, as read back */
	proftab_set(&p->ftab, e, f->name, f->dir, f->base, (int64_t)fn->id);
	(*added)++;
	*id = fn->id;
	return 0;
}

/* What a mapping's locations got (pprof_symbolize()). */
#define GOT_FILES	0x1
#define GOT_INLINES	0x2

/* Give l the lines of res, innermost first. */
static int
fill(struct pprof *p, Location *l, const struct gsym_result *res,
    size_t *added, int *got)
{
	Line	**lines;
	size_t	 i;
	int	 rc;

	if ((lines = arena_alloc(&p->ar, res->nframes * sizeof(*lines))) ==
	    NULL)
		return -ENOMEM;
	l->line = lines;
	for (i = 0; i < res->nframes; i++) {
		const struct gsym_frame	*f = &res->frames[i];
		uint64_t		 id;

		if ((rc = func_of(p, f, &id, added)) != 0)
			return rc;
		if ((lines[i] = arena_alloc(&p->ar, sizeof(*lines[i]))) ==
		    NULL)
			return -ENOMEM;
		l->n_line = i + 1;
		perftools__profiles__line__init(lines[i]);
		lines[i]->function_id = id;
		if (f->base != NULL) {
			lines[i]->line = f->line;
			*got |= GOT_FILES;
		}
	}
	if (res->nframes > 1)
		*got |= GOT_INLINES;
	return 0;
}

int
pprof_symbolize(struct pprof *p, pprof_lookup_fn fn, void *ctx,
    struct pprof_stats *st)
{
	Profile			*pf = p->pf;
	struct gsym_result	 res;
	char			*dead = NULL;
	int			*files = NULL;
	size_t			 i;
	int			 rc = -ENOMEM;

	memset(st, 0, sizeof(*st));
	p->funccap = pf->n_function;
	if ((dead = calloc(pf->n_mapping + 1, 1)) == NULL ||
	    (files = calloc(pf->n_mapping + 1, sizeof(*files))) == NULL)
		goto out;
	for (i = 0; i < pf->n_location; i++) {
		Location	*l = pf->location[i];
		const Mapping	*m;
		size_t		 k;

		if (l->mapping_id == 0 || l->n_line > 0)
			continue;
		k = ident_find(p->maps, pf->n_mapping, l->mapping_id) - 1;
		m = pf->mapping[k];
		if (p->modof[k] == 0 || dead[k])
			continue;
		rc = fn(ctx, p->modof[k] - 1, l->address - m->memory_start +
		    m->file_offset, &res);
		if (rc == -ENODEV) {
			dead[k] = 1;
			continue;
		}
		if (rc != 0 || res.nframes == 0)
			continue;
		if ((rc = fill(p, l, &res, &st->functions, &files[k])) != 0)
			goto out;
		st->locations++;
	}
	for (i = 0; i < pf->n_mapping; i++) {
		Mapping *m = pf->mapping[i];

		if (p->modof[i] == 0 || dead[i])
			continue;
		st->mappings++;
		m->has_functions = 1;
		m->has_filenames = m->has_line_numbers = !!(files[i] &
		    GOT_FILES);
		/* none from a .gopclntab, whose GSYM keeps no inline tree */
		m->has_inline_frames = !!(files[i] & GOT_INLINES);
	}
	rc = 0;
out:
	free(dead);
	free(files);
	return rc;
}

static void
put32le(unsigned char *d, uint32_t v)
{
	d[0] = (unsigned char)v;
	d[1] = (unsigned char)(v >> 8);
	d[2] = (unsigned char)(v >> 16);
	d[3] = (unsigned char)(v >> 24);
}

/* The last block of the input's that ends inside its leading fields, past
 * reuse_min bytes: its index in p->bounds, or 0 (none copied). */
static size_t
copy_to(const struct pprof *p)
{
	size_t i;

	for (i = p->nbounds; i > 1; i--)
		if (p->bounds[i - 1].out <= p->lead)
			return p->bounds[i - 1].out >= p->reuse_min ? i - 1 : 0;
	return 0;
}

int
pprof_answer(const struct pprof *p, size_t max, struct pprof_answer *a)
{
	static const unsigned char	 hdr[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0,
					    0, 0, 0xff };
	struct libdeflate_compressor	*c = NULL;
	Profile				 rest;
	unsigned char			*u = NULL, *z = NULL, *d;
	const unsigned char		*g = NULL;
	size_t				 from = 0, ulen = 0, n, bound = 0;
	size_t				 keep = 0, tn, i;
	uint64_t			 bit;
	unsigned			 sh = 0;
	uint32_t			 crc;
	int				 rc = -ENOMEM;

	memset(a, 0, sizeof(*a));
	/* The new bytes: the leading fields' past the blocks copied, then
	 * the rest of the profile written anew, without the sample types
	 * those leading fields have. */
	if ((i = copy_to(p)) > 0) {
		from = p->bounds[i].out;
		bit = p->bounds[i].bit - p->bounds[0].bit;
		keep = (size_t)(bit / 8);
		sh = (unsigned)(bit % 8);
		g = p->gz + p->bounds[0].bit / 8;
	}
	rest = *p->pf;
	rest.sample_type += p->nlead;
	rest.n_sample_type -= p->nlead;
	n = perftools__profiles__profile_view__get_packed_size(&rest);
	ulen = p->lead - from + n;
	if ((u = arena_big_alloc(ulen + 1)) == NULL)
		goto out;
	memcpy(u, p->plain + from, p->lead - from);
	if (perftools__profiles__profile_view__pack(&rest, u + p->lead -
	    from) != n)
		abort();
	if ((c = libdeflate_alloc_compressor(1)) == NULL)
		goto out;
	bound = libdeflate_deflate_compress_bound(c, ulen);
	/* up to 6 bytes to end the copied blocks, 8 of trailer */
	if ((z = malloc(6 + bound + 8)) == NULL)
		goto out;
	d = z;
	if (i > 0) {
		/*
		 * The new blocks start on a byte: the copied ones are ended
		 * by an empty stored block (what zlib's Z_SYNC_FLUSH
		 * writes), its 3 bits of header after the sh bits of the
		 * last byte copied (deflate fills a byte from its lowest
		 * bit), 0s up to the next byte, then LEN 0 and NLEN.
		 */
		*d++ = sh == 0 ? 0 : (unsigned char)(g[keep] &
		    ((1u << sh) - 1));
		if (sh > 5)
			*d++ = 0;
		memcpy(d, "\0\0\377\377", 4);
		d += 4;
	}
	if ((tn = libdeflate_deflate_compress(c, u, ulen, d, bound)) == 0)
		goto out;
	d += tn;
	crc = (uint32_t)libdeflate_crc32(0, u, ulen);
	if (from > 0)
		crc = (uint32_t)crc32_combine(p->bounds[i].crc, crc,
		    (z_off_t)ulen);
	put32le(d, crc);
	put32le(d + 4, (uint32_t)(from + ulen));
	d += 8;
	a->part[0].p = hdr;
	a->part[0].len = sizeof(hdr);
	a->part[1].p = g;
	a->part[1].len = keep;
	a->part[2].p = z;
	a->part[2].len = (size_t)(d - z);
	a->len = sizeof(hdr) + keep + a->part[2].len;
	if (a->len > max) {
		rc = -E2BIG;
		goto out;
	}
	a->own = z;
	z = NULL;
	rc = 0;
out:
	libdeflate_free_compressor(c);
	arena_big_free(u, ulen + 1);
	free(z);
	if (rc != 0)
		memset(a, 0, sizeof(*a));
	return rc;
}

int
pprof_write(const struct pprof *p, size_t max, void **out, size_t *outlen)
{
	struct pprof_answer	 a;
	unsigned char		*b;
	size_t			 i, at = 0;
	int			 rc;

	*out = NULL;
	if ((rc = pprof_answer(p, max, &a)) != 0)
		return rc;
	if ((b = malloc(a.len)) == NULL) {
		free(a.own);
		return -ENOMEM;
	}
	for (i = 0; i < PPROF_PARTS; i++) {
		if (a.part[i].len > 0)
			memcpy(b + at, a.part[i].p, a.part[i].len);
		at += a.part[i].len;
	}
	free(a.own);
	*out = b;
	*outlen = at;
	return 0;
}

void
pprof_free(struct pprof *p)
{
	if (p == NULL)
		return;
	arena_free(&p->ar);
	arena_big_free(p->raw, p->rawcap);
	free(p->bounds);
	free(p->locs);
	free(p->maps);
	free(p->funcs);
	free(p->mods);
	free(p->modof);
	proftab_free(&p->stab);
	proftab_free(&p->ftab);
	free(p);
}

/* What otlp.c shares (pprof.h). */
int
pprof_inflate(const void *in, size_t len, size_t max, unsigned char **out,
    size_t *outlen, size_t *outcap, const char **why)
{
	struct bound	*bt = NULL;
	size_t		 nbt = 0;
	int		 rc;

	rc = inflate_all(in, len, max, out, outlen, outcap, &bt, &nbt, why);
	free(bt);
	return rc;
}

void
pprof_inflate_free(unsigned char *out, size_t cap)
{
	arena_big_free(out, cap);
}

int
pprof_parse_id(const char *s, struct pprof_module *m)
{
	return parse_id(s, m);
}
