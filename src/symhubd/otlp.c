/*
 * otlp: read, check, fill in and write an OTLP ProfilesData (otlp.h).
 *
 * As pprof.c does for a Profile, protobuf-c decodes the message through
 * an allocator that stops it past a budget, the frames are added to its
 * structs in place, and everything not named here (resources, unknown
 * fields) is written back as it came.  Samples, stacks and links are
 * not even decoded (otlp_view.proto reads each as its bytes): a million
 * of each decoded and encoded again took three quarters of the time.
 * Each is read alone for its checks, into scratch memory.  The
 * allocator is pprof.c's arena (arena.h): a profile is
 * millions of small messages, and malloc() for each (then free() for
 * each) took two thirds of a large request's time.  What the answer
 * adds comes from the same arena, a table that grows is copied (the old
 * one left in it), and the arena is let go whole: free_unpacked is never
 * called.  What differs: the tables are one dictionary shared by every
 * profile of the message, addressed by index (0 the zero value) rather
 * than by id, and a mapping names its module by attributes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>

#include "arena.h"
#include "otlp.h"
#include "proftab.h"
/* (its own includes are found under src/symhubd/otlp/: -I) */
#include "symhubd/otlp/otlp_view.pb-c.h"

/* protobuf-c's names of the messages, shortened: the view's
 * (otlp_view.proto), whose samples, stacks and links are bytes */
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDataView	Data;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionaryView
									Dict;
typedef Opentelemetry__Proto__Profiles__V1development__ResourceProfilesView
									RProf;
typedef Opentelemetry__Proto__Profiles__V1development__ScopeProfilesView
									SProf;
typedef Opentelemetry__Proto__Profiles__V1development__ProfileView	Profile;
typedef Opentelemetry__Proto__Profiles__V1development__Stack		Stack;
typedef Opentelemetry__Proto__Profiles__V1development__ValueType	VType;
typedef Opentelemetry__Proto__Profiles__V1development__Sample		Sample;
typedef Opentelemetry__Proto__Profiles__V1development__Mapping		Mapping;
typedef Opentelemetry__Proto__Profiles__V1development__Location	Location;
typedef Opentelemetry__Proto__Profiles__V1development__Line		Line;
typedef Opentelemetry__Proto__Profiles__V1development__Function	Function;
typedef Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit	Attr;
typedef Opentelemetry__Proto__Common__V1__AnyValue			AnyValue;
typedef Opentelemetry__Proto__Common__V1__KeyValue			KeyValue;

/* protobuf-c's names of the functions, shortened */
#define V1(name)	opentelemetry__proto__profiles__v1development__##name

#define ANY_STRING	OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE
#define ANY_STRINDEX	OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE_STRINDEX
#define ANY_BYTES	OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_BYTES_VALUE
#define ANY_ARRAY	OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_ARRAY_VALUE
#define ANY_KVLIST	OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_KVLIST_VALUE

/*
 * The attributes of a mapping that name its module (OTel semantic
 * conventions): the GNU build-id and the profiling FileID, in hex; the
 * last is the deprecated name of the second.  A Go build-id
 * (process.executable.build_id.go) keys nothing the hub stores.
 */
static const char key_gnu[] = "process.executable.build_id.gnu";
static const char key_htlhash[] = "process.executable.build_id.htlhash";
static const char key_profiling[] = "process.executable.build_id.profiling";

/* AnyValue nests in itself: protobuf-c's reader, writer and free
 * recurse without a bound, so deeper messages are refused first. */
#define NEST_MAX	64

/* Decoding may take at most this many times the bytes (pprof.c's
 * reasons).  Measured: 1 M samples and stacks over 200 k locations (the
 * bench's shape, 52 MB) 2.4, their bytes kept encoded (otlp_view.proto);
 * 19 M empty strings 20, empty locations or mappings 52, empty stacks
 * or samples 8: refused, 413. */
#define DECODE_FACTOR	8
#define DECODE_SLACK	(1u << 20)

/* Index i into a table of n entries: 0, the zero value, is taken even
 * where a table leaves it out (the proto says it MUST be there). */
#define IDX_OK(i, n)	((i) == 0 || ((i) > 0 && (uint64_t)(i) < (uint64_t)(n)))

struct otlp {
	struct arena		 ar;
	Data			*d;
	Dict			*dict;		/* d's, never NULL */
	struct otlp_module	*mods;
	size_t			 nmods;
	size_t			*modof;		/* a mapping's module + 1,
						 * or 0: left alone */
	size_t			 strcap, funccap;
	struct proftab		 stab;		/* strings added: (a, b) of
						 * proftab_text() -> index */
	int32_t			*ctab;		/* a string's text -> index */
	size_t			 ccap, cused;
	struct proftab		 ftab;		/* functions added: a frame's
						 * name, dir, base -> index */
};

/* Grow a table of n pointers to cap: a copy in the arena. */
static void *
table_grow(struct arena *ar, void *old, size_t n, size_t cap)
{
	void *p;

	if ((p = arena_calloc(ar, cap, sizeof(void *))) != NULL && n > 0)
		memcpy(p, old, n * sizeof(void *));
	return p;
}

/*
 * The depth of the messages in len bytes of message md, by protobuf-c's
 * own descriptors: only the framing is read here (tags and lengths),
 * protobuf-c reads the fields after.  A field numbered 0 is refused
 * too: protobuf-c keeps it as an unknown field and then writes what it
 * cannot read back (pprof.c's tags_ok()).  The dictionary's locations
 * are counted on the way (*nloc), to refuse too many before decoding
 * them.
 */
static int
nest_ok(const uint8_t *p, size_t len, const ProtobufCMessageDescriptor *md,
    int depth, size_t *nloc)
{
	const ProtobufCFieldDescriptor	*fd;
	size_t				 i = 0;
	uint64_t			 key, n;
	int				 rc;

	while (i < len) {
		if (proftab_varint(p, len, &i, &key) != 0 || key >> 3 == 0 ||
		    key >> 3 > 0x1fffffff)
			return -EINVAL;
		switch (key & 7) {
		case 0:
			if (proftab_varint(p, len, &i, &n) != 0)
				return -EINVAL;
			break;
		case 1:
			if (len - i < 8)
				return -EINVAL;
			i += 8;
			break;
		case 5:
			if (len - i < 4)
				return -EINVAL;
			i += 4;
			break;
		case 2:
			if (proftab_varint(p, len, &i, &n) != 0 || n > len - i)
				return -EINVAL;
			fd = md != NULL ? protobuf_c_message_descriptor_get_field(
			    md, (unsigned)(key >> 3)) : NULL;
			if (md == &V1(profiles_dictionary_view__descriptor) &&
			    key >> 3 == 2)
				(*nloc)++;
			if (fd != NULL && fd->type == PROTOBUF_C_TYPE_MESSAGE) {
				if (depth >= NEST_MAX)
					return -E2BIG;
				if ((rc = nest_ok(p + i, (size_t)n,
				    fd->descriptor, depth + 1, nloc)) != 0)
					return rc;
			}
			i += (size_t)n;
			break;
		default:
			return -EINVAL;	/* groups: nothing OTLP sends */
		}
	}
	return 0;
}

/* ---- checks ---- */

/*
 * A sample or a stack (they stay encoded, otlp_view.proto) is read
 * alone for its checks, into scratch memory used again for the next:
 * a few hundred bytes, what does not fit taken from the profile's
 * arena (within its budget).
 */
struct scratch {
	ProtobufCAllocator	 a;
	struct arena		*spill;
	size_t			 used;
	max_align_t		 buf[4096 / sizeof(max_align_t)];
};

static void *
scratch_alloc(void *ctx, size_t n)
{
	struct scratch	*s = ctx;
	size_t		 r = (n + sizeof(max_align_t) - 1) &
			    ~(sizeof(max_align_t) - 1);

	if (n <= sizeof(s->buf) && r <= sizeof(s->buf) - s->used) {
		void *v = (char *)s->buf + s->used;

		s->used += r;
		return v;
	}
	return arena_alloc(s->spill, n);
}

static void
scratch_free(void *ctx, void *p)
{
	(void)ctx;
	(void)p;	/* all of it goes with the next reading, or the arena */
}

static void
scratch_init(struct scratch *s, struct arena *spill)
{
	s->a.alloc = scratch_alloc;
	s->a.free = scratch_free;
	s->a.allocator_data = s;
	s->spill = spill;
	s->used = 0;
}

static int
idx_all_ok(const int32_t *v, size_t n, size_t tab)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!IDX_OK(v[i], tab))
			return 0;
	return 1;
}

static int
any_ok(const Dict *t, const AnyValue *v)
{
	size_t i;

	if (v == NULL)
		return 1;
	switch ((int)v->value_case) {
	case ANY_STRINDEX:
		return IDX_OK(v->string_value_strindex, t->n_string_table);
	case ANY_ARRAY:
		if (v->array_value != NULL)
			for (i = 0; i < v->array_value->n_values; i++)
				if (!any_ok(t, v->array_value->values[i]))
					return 0;
		return 1;
	case ANY_KVLIST:
		if (v->kvlist_value != NULL)
			for (i = 0; i < v->kvlist_value->n_values; i++) {
				const KeyValue *kv =
				    v->kvlist_value->values[i];

				if (!IDX_OK(kv->key_strindex,
				    t->n_string_table) || !any_ok(t, kv->value))
					return 0;
			}
		return 1;
	default:
		return 1;
	}
}

static int
kvs_ok(const Dict *t, KeyValue *const *kv, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!IDX_OK(kv[i]->key_strindex, t->n_string_table) ||
		    !any_ok(t, kv[i]->value))
			return 0;
	return 1;
}

static int
vtype_ok(const Dict *t, const VType *v)
{
	return v == NULL || (IDX_OK(v->type_strindex, t->n_string_table) &&
	    IDX_OK(v->unit_strindex, t->n_string_table));
}

/* A sample's indices into the dictionary: 1, 0 not, -1 corrupt. */
static int
sample_ok(struct scratch *sc, const Dict *t, const ProtobufCBinaryData *b)
{
	Sample *s;

	sc->used = 0;
	if ((s = V1(sample__unpack)(&sc->a, b->len, b->data)) == NULL)
		return -1;
	return IDX_OK(s->stack_index, t->n_stack_table) &&
	    IDX_OK(s->link_index, t->n_link_table) &&
	    idx_all_ok(s->attribute_indices, s->n_attribute_indices,
	    t->n_attribute_table);
}

/* The profiles' indices into the dictionary: 1, 0 not, -1 corrupt. */
static int
profiles_ok(struct scratch *sc, const Data *d, const Dict *t)
{
	size_t i, j, k, l;

	for (i = 0; i < d->n_resource_profiles; i++) {
		const RProf *rp = d->resource_profiles[i];

		if (rp->resource != NULL && !kvs_ok(t,
		    rp->resource->attributes, rp->resource->n_attributes))
			return 0;
		for (j = 0; j < rp->n_scope_profiles; j++) {
			const SProf *sp = rp->scope_profiles[j];

			if (sp->scope != NULL && !kvs_ok(t,
			    sp->scope->attributes, sp->scope->n_attributes))
				return 0;
			for (k = 0; k < sp->n_profiles; k++) {
				const Profile *p = sp->profiles[k];

				if (!vtype_ok(t, p->sample_type) ||
				    !vtype_ok(t, p->period_type) ||
				    !idx_all_ok(p->attribute_indices,
				    p->n_attribute_indices,
				    t->n_attribute_table))
					return 0;
				for (l = 0; l < p->n_samples; l++) {
					int ok = sample_ok(sc, t,
					    &p->samples[l]);

					if (ok != 1)
						return ok;
				}
			}
		}
	}
	return 1;
}

/* The dictionary's indices into itself: 1, 0 not, -1 corrupt. */
static int
dict_ok(struct scratch *sc, const Dict *t)
{
	Stack *s;

	size_t i, j;

	for (i = 0; i < t->n_mapping_table; i++) {
		const Mapping *m = t->mapping_table[i];

		if (!IDX_OK(m->filename_strindex, t->n_string_table) ||
		    !idx_all_ok(m->attribute_indices, m->n_attribute_indices,
		    t->n_attribute_table))
			return 0;
	}
	for (i = 0; i < t->n_location_table; i++) {
		const Location *l = t->location_table[i];

		if (!IDX_OK(l->mapping_index, t->n_mapping_table) ||
		    !idx_all_ok(l->attribute_indices, l->n_attribute_indices,
		    t->n_attribute_table))
			return 0;
		for (j = 0; j < l->n_lines; j++)
			if (!IDX_OK(l->lines[j]->function_index,
			    t->n_function_table))
				return 0;
	}
	for (i = 0; i < t->n_function_table; i++) {
		const Function *f = t->function_table[i];

		if (!IDX_OK(f->name_strindex, t->n_string_table) ||
		    !IDX_OK(f->system_name_strindex, t->n_string_table) ||
		    !IDX_OK(f->filename_strindex, t->n_string_table))
			return 0;
	}
	for (i = 0; i < t->n_attribute_table; i++) {
		const Attr *a = t->attribute_table[i];

		if (!IDX_OK(a->key_strindex, t->n_string_table) ||
		    !IDX_OK(a->unit_strindex, t->n_string_table) ||
		    !any_ok(t, a->value))
			return 0;
	}
	for (i = 0; i < t->n_stack_table; i++) {
		sc->used = 0;
		if ((s = V1(stack__unpack)(&sc->a, t->stack_table[i].len,
		    t->stack_table[i].data)) == NULL)
			return -1;
		if (!idx_all_ok(s->location_indices, s->n_location_indices,
		    t->n_location_table))
			return 0;
	}
	/* a link has no index, but is read as before: well formed */
	for (i = 0; i < t->n_link_table; i++) {
		sc->used = 0;
		if (V1(link__unpack)(&sc->a, t->link_table[i].len,
		    t->link_table[i].data) == NULL)
			return -1;
	}
	return 1;
}

static int
check(struct otlp *o, const struct pprof_limits *lim, const char **why)
{
	const Dict	*t = o->dict;
	struct scratch	 sc;
	size_t		 i;
	int		 ok;

	if (t->n_location_table > lim->max_locations) {
		*why = "too many locations";
		return -E2BIG;
	}
	if (t->n_string_table == 0 || t->string_table[0][0] != '\0') {
		*why = "the dictionary's string_table does not start with \"\"";
		return -EINVAL;
	}
	scratch_init(&sc, &o->ar);
	if ((ok = dict_ok(&sc, t)) == 1)
		ok = profiles_ok(&sc, o->d, t);
	if (ok != 1) {
		*why = ok == 0 ? "an index out of its dictionary table" :
		    o->ar.over ? "the profile takes too much memory to decode" :
		    "a corrupt or truncated protobuf";
		return ok == 0 || !o->ar.over ? -EINVAL : -E2BIG;
	}
	for (i = 0; i < t->n_mapping_table; i++)
		if (t->mapping_table[i]->memory_limit <
		    t->mapping_table[i]->memory_start) {
			*why = "a mapping whose memory_limit is below its "
			    "memory_start";
			return -EINVAL;
		}
	for (i = 0; i < t->n_location_table; i++) {
		const Location	*l = t->location_table[i];
		const Mapping	*m;

		if (l->mapping_index == 0 || l->address == 0)
			continue;
		m = t->mapping_table[l->mapping_index];
		if (m->memory_limit > m->memory_start &&
		    (l->address < m->memory_start ||
		    l->address >= m->memory_limit)) {
			*why = "a location address outside its mapping";
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- modules ---- */

/* The id an attribute's value holds, hex or raw bytes, into m. */
static int
attr_id(const Dict *t, const AnyValue *v, struct pprof_module *m)
{
	const char *s;

	if (v == NULL)
		return -EINVAL;
	switch ((int)v->value_case) {
	case ANY_STRING:
		s = v->string_value;
		break;
	case ANY_STRINDEX:
		s = t->string_table[v->string_value_strindex];
		break;
	case ANY_BYTES:
		if (v->bytes_value.len == 0 ||
		    v->bytes_value.len > sizeof(m->id))
			return -EINVAL;
		memcpy(m->id, v->bytes_value.data, v->bytes_value.len);
		m->idlen = v->bytes_value.len;
		m->maybe_fileid = 0;
		return 0;
	default:
		return -EINVAL;
	}
	if (pprof_parse_id(s, m) != 0)
		return -EINVAL;
	m->maybe_fileid = 0;
	return 0;
}

/* The module of mapping m: 1 with mod set, 0 when it names none. */
static int
mapping_module(const Dict *t, const Mapping *m, struct otlp_module *mod,
    const char **why)
{
	size_t i;

	memset(mod, 0, sizeof(*mod));
	for (i = 0; i < m->n_attribute_indices; i++) {
		const Attr	*a;
		const char	*key;

		if (m->attribute_indices[i] == 0)
			continue;	/* the zero value */
		a = t->attribute_table[m->attribute_indices[i]];
		key = t->string_table[a->key_strindex];
		if (strcmp(key, key_gnu) == 0) {
			if (attr_id(t, a->value, &mod->gnu) != 0) {
				*why = "a mapping's process.executable."
				    "build_id.gnu is not a build-id in hex";
				return -EINVAL;
			}
		} else if (strcmp(key, key_htlhash) == 0 ||
		    strcmp(key, key_profiling) == 0) {
			if (attr_id(t, a->value, &mod->fileid) != 0 ||
			    mod->fileid.idlen != CACHE_FILEID_LEN) {
				*why = "a mapping's process.executable."
				    "build_id.htlhash is not a FileID in hex";
				return -EINVAL;
			}
		}
	}
	return mod->gnu.idlen > 0 || mod->fileid.idlen > 0;
}

static size_t
mod_hash(const struct otlp_module *m)
{
	uint64_t	h = 0xcbf29ce484222325ULL;
	size_t		i;

	for (i = 0; i < m->gnu.idlen; i++)
		h = (h ^ m->gnu.id[i]) * 0x100000001b3ULL;
	h = (h ^ 0xff) * 0x100000001b3ULL;
	for (i = 0; i < m->fileid.idlen; i++)
		h = (h ^ m->fileid.id[i]) * 0x100000001b3ULL;
	return (size_t)(h ^ (h >> 29));
}

static int
mod_eq(const struct otlp_module *a, const struct otlp_module *b)
{
	return a->gnu.idlen == b->gnu.idlen && a->fileid.idlen ==
	    b->fileid.idlen && memcmp(a->gnu.id, b->gnu.id, a->gnu.idlen) ==
	    0 && memcmp(a->fileid.id, b->fileid.id, a->fileid.idlen) == 0;
}

/*
 * Add mod to the distinct modules unless there: its index + 1 in *at.
 * The tables grow with the modules, not with the mappings: a mapping
 * is a few bytes on the wire, a module's ids far more.
 */
static int
mod_add(struct otlp *o, size_t **slot, size_t *cap, size_t *mcap,
    const struct otlp_module *mod, size_t *at)
{
	struct otlp_module	*nm;
	size_t			*ns, ncap, i, k;

	if (o->nmods * 2 >= *cap) {
		ncap = *cap ? 2 * *cap : 64;
		if ((ns = calloc(ncap, sizeof(*ns))) == NULL)
			return -ENOMEM;
		for (i = 0; i < o->nmods; i++) {
			k = mod_hash(&o->mods[i]) & (ncap - 1);
			while (ns[k] != 0)
				k = (k + 1) & (ncap - 1);
			ns[k] = i + 1;
		}
		free(*slot);
		*slot = ns;
		*cap = ncap;
	}
	k = mod_hash(mod) & (*cap - 1);
	while ((*slot)[k] != 0 && !mod_eq(&o->mods[(*slot)[k] - 1], mod))
		k = (k + 1) & (*cap - 1);
	if ((*slot)[k] == 0) {
		if (o->nmods == *mcap) {
			ncap = *mcap ? 2 * *mcap : 16;
			if ((nm = reallocarray(o->mods, ncap,
			    sizeof(*nm))) == NULL)
				return -ENOMEM;
			o->mods = nm;
			*mcap = ncap;
		}
		o->mods[o->nmods++] = *mod;
		(*slot)[k] = o->nmods;
	}
	*at = (*slot)[k];
	return 0;
}

/* The modules of the mappings a location without lines is in, one a
 * distinct pair of ids. */
static int
modules(struct otlp *o, const char **why)
{
	const Dict		*t = o->dict;
	struct otlp_module	 mod;
	size_t			*slot = NULL, cap = 0, mcap = 0, i;
	char			*want = NULL;
	int			 rc = -ENOMEM;

	if ((o->modof = calloc(t->n_mapping_table + 1,
	    sizeof(*o->modof))) == NULL ||
	    (want = calloc(t->n_mapping_table + 1, 1)) == NULL)
		goto out;
	for (i = 0; i < t->n_location_table; i++)
		if (t->location_table[i]->n_lines == 0)
			want[t->location_table[i]->mapping_index] = 1;
	for (i = 1; i < t->n_mapping_table; i++) {
		if (!want[i])
			continue;
		if ((rc = mapping_module(t, t->mapping_table[i], &mod,
		    why)) < 0)
			goto out;
		if (rc == 0)
			continue;	/* nothing to ask */
		if ((rc = mod_add(o, &slot, &cap, &mcap, &mod,
		    &o->modof[i])) != 0)
			goto out;
	}
	rc = 0;
out:
	free(want);
	free(slot);
	return rc;
}

int
otlp_read(const void *body, size_t len, int gzip,
    const struct pprof_limits *lim, struct otlp **out, const char **why)
{
	const unsigned char	*in = body;
	unsigned char		*raw = NULL;
	size_t			 rawlen = len, rawcap = 0, nloc = 0;
	struct otlp		*o = NULL;
	int			 rc;

	*out = NULL;
	*why = "out of memory";
	arena_pool_begin(lim->own);	/* held to --profile-memory-max */
	if (len >= 2 && in[0] == 0x1f && in[1] == 0x8b) {
		if ((rc = pprof_inflate(in, len, lim->max_bytes, &raw,
		    &rawlen, &rawcap, why)) != 0)
			goto out;
		in = raw;
	} else if (gzip) {
		*why = "Content-Encoding: gzip, but the body is not gzip";
		rc = -EINVAL;
		goto out;
	} else if (len > lim->max_bytes) {
		*why = "the profile is larger than the limit";
		rc = -E2BIG;
		goto out;
	}
	if ((rc = nest_ok(in, rawlen,
	    &V1(profiles_data_view__descriptor), 0, &nloc)) != 0) {
		*why = rc == -E2BIG ? "messages nested too deep" :
		    "a corrupt or truncated protobuf";
		rc = -EINVAL;
		goto out;
	}
	/* as check() counts them, but before decoding them */
	if (nloc > lim->max_locations) {
		*why = "too many locations";
		rc = -E2BIG;
		goto out;
	}
	if ((o = calloc(1, sizeof(*o))) == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	arena_init(&o->ar, rawlen > (SIZE_MAX - DECODE_SLACK) / DECODE_FACTOR ?
	    SIZE_MAX : rawlen * DECODE_FACTOR + DECODE_SLACK);
	o->d = V1(profiles_data_view__unpack)(&o->ar.a, rawlen, in);
	if (o->d == NULL) {
		if (o->ar.over) {
			*why = "the profile takes too much memory to decode";
			rc = -E2BIG;
		} else {
			*why = "a corrupt or truncated protobuf";
			rc = -EINVAL;
		}
		goto out;
	}
	if ((o->dict = o->d->dictionary) == NULL) {
		*why = "no dictionary";
		rc = -EINVAL;
		goto out;
	}
	o->strcap = o->dict->n_string_table;
	o->funccap = o->dict->n_function_table;
	if ((rc = check(o, lim, why)) != 0 || (rc = modules(o, why)) != 0)
		goto out;
	o->ar.left = SIZE_MAX;	/* what the answer adds: its own limits */
	*out = o;
	o = NULL;
out:
	pprof_inflate_free(raw, rawcap);
	otlp_free(o);
	if (arena_pool_end() && rc != 0) {
		*why = "the profiles being read take all of "
		    "--profile-memory-max; try again";
		rc = -EBUSY;
	}
	return rc;
}

size_t
otlp_modules(const struct otlp *o, const struct otlp_module **mods)
{
	*mods = o->mods;
	return o->nmods;
}

size_t
otlp_nlocations(const struct otlp *o)
{
	return o->dict->n_location_table > 0 ? o->dict->n_location_table - 1 :
	    0;
}

/* ---- filling in ---- */

static size_t
str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s != '\0')
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return (size_t)(h ^ (h >> 29));
}

/* Put index idx in the text table (which has room). */
static void
ctab_put(struct otlp *o, int32_t idx)
{
	size_t k = str_hash(o->dict->string_table[idx]) & (o->ccap - 1);

	while (o->ctab[k] != 0)
		k = (k + 1) & (o->ccap - 1);
	o->ctab[k] = idx;
	o->cused++;
}

/* The index of a string whose text is s, or 0; the text table made
 * from the string_table on first use, and grown. */
static int
ctab_find(struct otlp *o, const char *s, int32_t *idx)
{
	const Dict	*t = o->dict;
	size_t		 k, i, cap;

	if (o->cused * 2 >= o->ccap) {
		for (cap = 4096; cap < 4 * t->n_string_table; cap *= 2)
			;
		free(o->ctab);
		if ((o->ctab = calloc(cap, sizeof(*o->ctab))) == NULL)
			return -ENOMEM;
		o->ccap = cap;
		o->cused = 0;
		for (i = 1; i < t->n_string_table; i++)
			ctab_put(o, (int32_t)i);
	}
	k = str_hash(s) & (o->ccap - 1);
	while (o->ctab[k] != 0) {
		if (strcmp(t->string_table[o->ctab[k]], s) == 0) {
			*idx = o->ctab[k];
			return 0;
		}
		k = (k + 1) & (o->ccap - 1);
	}
	*idx = 0;
	return 0;
}

/* The index of text s (in the arena): one there already, else s
 * appended. */
static int
str_add(struct otlp *o, char *s, int32_t *idx)
{
	Dict	*t = o->dict;
	char	**nt;
	int	  rc;

	if (*s == '\0') {
		*idx = 0;
		return 0;
	}
	if ((rc = ctab_find(o, s, idx)) != 0 || *idx != 0)
		return rc;
	if (t->n_string_table >= INT32_MAX)
		return -E2BIG;
	if (t->n_string_table == o->strcap) {
		size_t cap = o->strcap < 64 ? 128 : 2 * o->strcap;

		if ((nt = table_grow(&o->ar, t->string_table,
		    t->n_string_table, cap)) == NULL)
			return -ENOMEM;
		t->string_table = nt;
		o->strcap = cap;
	}
	*idx = (int32_t)t->n_string_table;
	t->string_table[t->n_string_table++] = s;
	ctab_put(o, *idx);
	return 0;
}

/* The index of the string (a, b) stands for (proftab_text()), added
 * once. */
static int
str_of(struct otlp *o, const char *a, const char *b, int32_t *idx)
{
	struct proftab_ent	*e;
	char			*s;
	int			 rc;

	if (proftab_find(&o->stab, a, b, NULL, &e) != 0)
		return -ENOMEM;
	if (e->v != 0) {
		*idx = (int32_t)e->v;
		return 0;
	}
	if ((s = proftab_text(&o->ar, a, b)) == NULL)
		return -ENOMEM;
	if ((rc = str_add(o, s, idx)) != 0)
		return rc;
	if (*idx != 0)		/* "": nothing to remember */
		proftab_set(&o->stab, e, a, b, NULL, *idx);
	return 0;
}

/* Append fn (in the arena) to the function_table. */
static int
func_append(struct otlp *o, Function *fn)
{
	Dict		*d = o->dict;
	Function	**ft;

	if (d->n_function_table >= INT32_MAX)
		return -E2BIG;
	if (d->n_function_table == o->funccap) {
		size_t cap = o->funccap < 64 ? 128 : 2 * o->funccap;

		if ((ft = table_grow(&o->ar, d->function_table,
		    d->n_function_table, cap)) == NULL)
			return -ENOMEM;
		d->function_table = ft;
		o->funccap = cap;
	}
	d->function_table[d->n_function_table++] = fn;
	return 0;
}

/* The index of the function of frame f, added when new. */
static int
func_of(struct otlp *o, const struct gsym_frame *f, int32_t *idx,
    size_t *added)
{
	Dict			*d = o->dict;
	struct proftab_ent	*e;
	Function		*fn;
	int32_t			 name, sys, file = 0;
	int			 rc;

	if (proftab_find(&o->ftab, f->name, f->dir, f->base, &e) != 0)
		return -ENOMEM;
	if (e->v != 0) {
		*idx = (int32_t)e->v;
		return 0;
	}
	if ((rc = str_of(o, f->name, proftab_demangled, &name)) != 0 ||
	    (rc = str_of(o, f->name, proftab_asis, &sys)) != 0 ||
	    (f->base != NULL && (rc = str_of(o, f->dir, f->base,
	    &file)) != 0))
		return rc;
	/* Index 0 is the zero value: a table without it gets it first. */
	if (d->n_function_table == 0) {
		if ((fn = arena_alloc(&o->ar, sizeof(*fn))) == NULL)
			return -ENOMEM;
		opentelemetry__proto__profiles__v1development__function__init(
		    fn);
		if ((rc = func_append(o, fn)) != 0)
			return rc;
	}
	if ((fn = arena_alloc(&o->ar, sizeof(*fn))) == NULL)
		return -ENOMEM;
	opentelemetry__proto__profiles__v1development__function__init(fn);
	fn->name_strindex = name;
	fn->system_name_strindex = sys;
	fn->filename_strindex = file;
	/* start_line stays 0, "unset": a GSYM keeps no DW_AT_decl_line */
	*idx = (int32_t)d->n_function_table;
	if ((rc = func_append(o, fn)) != 0)
		return rc;
	proftab_set(&o->ftab, e, f->name, f->dir, f->base, *idx);
	(*added)++;
	return 0;
}

/* Give l the lines of res, innermost first. */
static int
fill(struct otlp *o, Location *l, const struct gsym_result *res,
    size_t *added)
{
	Line	**lines;
	size_t	 i;
	int32_t	 idx;
	int	 rc;

	if ((lines = arena_calloc(&o->ar, res->nframes,
	    sizeof(*lines))) == NULL)
		return -ENOMEM;
	l->lines = lines;
	for (i = 0; i < res->nframes; i++) {
		const struct gsym_frame *f = &res->frames[i];

		if ((rc = func_of(o, f, &idx, added)) != 0)
			return rc;
		if ((lines[i] = arena_alloc(&o->ar, sizeof(*lines[i]))) ==
		    NULL)
			return -ENOMEM;
		l->n_lines = i + 1;
		opentelemetry__proto__profiles__v1development__line__init(
		    lines[i]);
		lines[i]->function_index = idx;
		if (f->base != NULL)
			lines[i]->line = f->line;
	}
	return 0;
}

int
otlp_symbolize(struct otlp *o, pprof_lookup_fn fn, void *ctx,
    struct pprof_stats *st)
{
	Dict			*t = o->dict;
	struct gsym_result	 res;
	char			*dead = NULL, *used = NULL;
	size_t			 i;
	int			 rc = -ENOMEM;

	memset(st, 0, sizeof(*st));
	if ((dead = calloc(t->n_mapping_table + 1, 1)) == NULL ||
	    (used = calloc(t->n_mapping_table + 1, 1)) == NULL)
		goto out;
	for (i = 0; i < t->n_location_table; i++) {
		Location	*l = t->location_table[i];
		const Mapping	*m;
		size_t		 k = (size_t)l->mapping_index;

		if (k == 0 || l->n_lines > 0 || o->modof[k] == 0 || dead[k])
			continue;
		m = t->mapping_table[k];
		rc = fn(ctx, o->modof[k] - 1, l->address - m->memory_start +
		    m->file_offset, &res);
		if (rc == -ENODEV) {
			dead[k] = 1;
			continue;
		}
		used[k] = 1;
		if (rc != 0 || res.nframes == 0)
			continue;
		if ((rc = fill(o, l, &res, &st->functions)) != 0)
			goto out;
		st->locations++;
	}
	for (i = 1; i < t->n_mapping_table; i++)
		st->mappings += used[i] && !dead[i];
	rc = 0;
out:
	free(dead);
	free(used);
	return rc;
}

int
otlp_write(const struct otlp *o, int gzip, size_t max, void **out,
    size_t *outlen)
{
	struct libdeflate_compressor	*c = NULL;
	unsigned char			*raw = NULL, *z = NULL;
	size_t				 n, bound, zn;
	int				 rc = -ENOMEM;

	*out = NULL;
	n = V1(profiles_data_view__get_packed_size)(o->d);
	if (!gzip && n > max)
		return -E2BIG;
	if ((raw = malloc(n + 1)) == NULL)
		goto out;
	(void)V1(profiles_data_view__pack)(o->d, raw);
	if (!gzip) {
		*out = raw;
		*outlen = n;
		return 0;
	}
	if ((c = libdeflate_alloc_compressor(1)) == NULL)
		goto out;
	bound = libdeflate_gzip_compress_bound(c, n);
	if ((z = malloc(bound)) == NULL)
		goto out;
	if ((zn = libdeflate_gzip_compress(c, raw, n, z, bound)) == 0)
		goto out;
	if (zn > max) {
		rc = -E2BIG;
		goto out;
	}
	*out = z;
	*outlen = zn;
	z = NULL;
	rc = 0;
out:
	libdeflate_free_compressor(c);
	free(raw);
	free(z);
	return rc;
}

void
otlp_free(struct otlp *o)
{
	if (o == NULL)
		return;
	arena_free(&o->ar);	/* o->d and all it holds */
	free(o->mods);
	free(o->modof);
	proftab_free(&o->stab);
	free(o->ctab);
	proftab_free(&o->ftab);
	free(o);
}
