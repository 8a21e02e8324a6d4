/*
 * metajson: the /metadata answer (see metajson.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/buf.h"
#include "base/strmap.h"
#include "base/utf8.h"
#include "metajson.h"

/* Nesting an upstream's answer needs: object, array, entry object. */
#define METAJSON_DEPTH	8

struct metajson {
	json_object	*root;		/* {"results": arr} until finished */
	json_object	*arr;		/* owned by root */
	struct strmap	 seen;		/* the four strings, NUL-joined */
	int		 full;		/* an entry was left out */
};

int
metajson_create(struct metajson **out)
{
	struct metajson *j;

	*out = NULL;
	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -ENOMEM;
	if ((j->root = json_object_new_object()) == NULL ||
	    (j->arr = json_object_new_array()) == NULL) {
		json_object_put(j->root);
		free(j);
		return -ENOMEM;
	}
	if (json_object_object_add(j->root, "results", j->arr) != 0) {
		json_object_put(j->arr);
		json_object_put(j->root);
		free(j);
		return -ENOMEM;
	}
	*out = j;
	return 0;
}

/* Add k: v to entry when v is not empty.  @return 0 or -ENOMEM. */
static int
put(json_object *entry, const char *k, const char *v)
{
	json_object *s;

	if (v == NULL || *v == '\0')
		return 0;
	if ((s = json_object_new_string(v)) == NULL)
		return -ENOMEM;
	if (json_object_object_add(entry, k, s) != 0) {
		json_object_put(s);
		return -ENOMEM;
	}
	return 0;
}

int
metajson_add(struct metajson *j, const char *type, const char *buildid,
    const char *file, const char *archive)
{
	json_object	*e;
	char		*key;
	size_t		 lt, lb, lf, la, dummy;
	int		 rc;

	lt = strlen(type);
	lb = strlen(buildid);
	lf = file ? strlen(file) : 0;
	la = archive ? strlen(archive) : 0;
	/* strmap keys are C strings: join with a byte no name holds
	 * (json-c's strings may hold a NUL, so 0x01 stands in, and a name
	 * with it cannot collide with another except by also holding it). */
	if ((key = malloc(lt + lb + lf + la + 4)) == NULL)
		return -ENOMEM;
	memcpy(key, type, lt);
	key[lt] = '\001';
	memcpy(key + lt + 1, buildid, lb);
	key[lt + 1 + lb] = '\001';
	if (lf)
		memcpy(key + lt + lb + 2, file, lf);
	key[lt + lb + 2 + lf] = '\001';
	if (la)
		memcpy(key + lt + lb + lf + 3, archive, la);
	key[lt + lb + lf + la + 3] = '\0';
	if (strmap_get(&j->seen, key, &dummy)) {
		free(key);
		return 0;
	}
	if (json_object_array_length(j->arr) >= METAJSON_ENTRIES_MAX) {
		free(key);
		j->full = 1;
		return 0;
	}
	rc = strmap_put(&j->seen, key, 0);
	free(key);
	if (rc < 0)
		return -ENOMEM;
	if ((e = json_object_new_object()) == NULL)
		return -ENOMEM;
	if (put(e, "type", type) < 0 || put(e, "buildid", buildid) < 0 ||
	    put(e, "file", file) < 0 || put(e, "archive", archive) < 0 ||
	    json_object_array_add(j->arr, e) != 0) {
		json_object_put(e);
		return -ENOMEM;
	}
	return 1;
}

/* A member of o that is a string, or NULL. */
static const char *
string_of(json_object *o, const char *k)
{
	json_object *v;

	if (!json_object_object_get_ex(o, k, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

long
metajson_merge(struct metajson *j, const char *body, size_t len,
    int *complete)
{
	json_tokener	*tok;
	json_object	*root = NULL, *arr, *c;
	size_t		 i, n, k;
	long		 added = 0;
	int		 rc;

	*complete = 0;
	if (len > INT32_MAX)
		return -EINVAL;
	if ((tok = json_tokener_new_ex(METAJSON_DEPTH)) == NULL)
		return -ENOMEM;
	root = json_tokener_parse_ex(tok, body, (int)len);
	/* Only blanks may follow the object. */
	k = root != NULL ? json_tokener_get_parse_end(tok) : len;
	while (k < len && (body[k] == ' ' || body[k] == '\t' ||
	    body[k] == '\r' || body[k] == '\n'))
		k++;
	json_tokener_free(tok);
	if (root == NULL || k != len ||
	    !json_object_is_type(root, json_type_object) ||
	    !json_object_object_get_ex(root, "results", &arr) ||
	    !json_object_is_type(arr, json_type_array) ||
	    !json_object_object_get_ex(root, "complete", &c) ||
	    !json_object_is_type(c, json_type_boolean)) {
		json_object_put(root);
		return -EINVAL;
	}
	*complete = json_object_get_boolean(c);
	n = json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		json_object	*e = json_object_array_get_idx(arr, i);
		const char	*type, *id;

		if (!json_object_is_type(e, json_type_object) ||
		    (type = string_of(e, "type")) == NULL || *type == '\0' ||
		    (id = string_of(e, "buildid")) == NULL || *id == '\0')
			continue;
		rc = metajson_add(j, type, id, string_of(e, "file"),
		    string_of(e, "archive"));
		if (rc < 0) {
			json_object_put(root);
			return rc;
		}
		added += rc;
	}
	json_object_put(root);
	return added;
}

int
metajson_full(const struct metajson *j)
{
	return j->full;
}

size_t
metajson_count(const struct metajson *j)
{
	return json_object_array_length(j->arr);
}

int
metajson_finish(struct metajson *j, int complete, char **buf, size_t *len)
{
	json_object	*b;
	const char	*s;
	size_t		 n;
	int		 rc = -ENOMEM;

	*buf = NULL;
	*len = 0;
	if ((b = json_object_new_boolean(complete != 0)) != NULL &&
	    json_object_object_add(j->root, "complete", b) != 0) {
		json_object_put(b);
		b = NULL;
	}
	/* json-c writes a name's bytes as they are: those that are not
	 * UTF-8 (a file name, another hub's answer) would make the whole
	 * answer unparsable.  They can only be inside strings, the rest is
	 * ASCII, so the text is mended as a whole. */
	if (b != NULL && (s = json_object_to_json_string_length(j->root,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
	    &n)) != NULL) {
		struct buf out = { 0 };

		if (utf8_add(&out, s, n) == 0 && buf_add(&out, "", 1) == 0) {
			*buf = (char *)out.p;
			*len = out.len - 1;
			rc = 0;
		} else {
			buf_free(&out);
		}
	}
	metajson_free(j);
	return rc;
}

void
metajson_free(struct metajson *j)
{
	if (j == NULL)
		return;
	json_object_put(j->root);
	strmap_free(&j->seen);
	free(j);
}
