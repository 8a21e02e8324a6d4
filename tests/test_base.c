/*
 * test_base: hex, growable buffers, array growth and deadlines
 * (src/base/).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/fs.h"
#include "base/hex.h"
#include "base/strmap.h"
#include "tap.h"
#include "testlib.h"

static void
test_hex(void)
{
	unsigned char	in[] = { 0x00, 0x01, 0xab, 0xff }, out[4];
	char		s[9];

	hex_encode(in, sizeof(in), s);
	ok(strcmp(s, "0001abff") == 0, "hex_encode: %s", s);
	hex_encode(in, 0, s);
	ok(s[0] == '\0', "hex_encode of nothing is empty");
	ok(hex_decode("0001abff", 8, out) == 4 &&
	    memcmp(out, in, 4) == 0, "hex_decode round trip");
	ok(hex_decode("0001ABFF", 8, out) == -EINVAL, "uppercase refused");
	ok(hex_decode("000", 3, out) == -EINVAL, "odd length refused");
	ok(hex_decode("0g", 2, out) == -EINVAL, "non-hex refused");
	ok(hex_decode("", 0, out) == 0, "empty decodes to nothing");
	ok(hex_value('a') == 10 && hex_value('9') == 9 &&
	    hex_value('G') == -1 && hex_value('A') == -1, "hex_value");
}

static void
test_buf(void)
{
	struct buf	b = { 0 };
	size_t		i;
	int		rc = 0;

	ok(buf_add(&b, "", 0) == 0 && b.len == 0 && b.p == NULL,
	    "an empty add allocates nothing");
	for (i = 0; i < 10000; i++)
		rc |= buf_add(&b, "ab", 2);
	ok(rc == 0 && b.len == 20000 && b.cap >= 20000 &&
	    memcmp(b.p + 19998, "ab", 2) == 0, "10000 appends: %zu bytes",
	    b.len);
	ok(buf_printf(&b, "<%d:%s>", 42, "x") == 0 && b.len == 20006 &&
	    memcmp(b.p + 20000, "<42:x>", 6) == 0, "buf_printf appends");
	ok(buf_puts(&b, "end") == 0 && b.len == 20009, "buf_puts");
	ok(buf_reserve(&b, SIZE_MAX) == -ENOMEM && b.err == -ENOMEM,
	    "an impossible reserve fails");
	ok(buf_add(&b, "z", 1) == -ENOMEM && b.len == 20009,
	    "the failure is sticky and keeps the bytes");
	buf_free(&b);
	ok(b.p == NULL && b.len == 0 && b.cap == 0 && b.err == 0,
	    "buf_free zeroes");
	buf_free(&b);
}

static void
test_array(void)
{
	uint64_t	*v = NULL;
	size_t		 cap = 0, i;
	int		 rc = 0;

	for (i = 0; i < 1000; i++) {
		rc |= array_grow(&v, &cap, i + 1, sizeof(*v));
		if (rc == 0)
			v[i] = i;
	}
	ok(rc == 0 && cap >= 1000 && cap < 2048 && v[999] == 999,
	    "array_grow: cap %zu for 1000", cap);
	ok(array_grow(&v, &cap, 10, sizeof(*v)) == 0 && cap >= 1000,
	    "never shrinks");
	ok(array_grow(&v, &cap, SIZE_MAX / 4, sizeof(*v)) == -ENOMEM &&
	    v[999] == 999 && cap >= 1000, "overflow: -ENOMEM, array kept");
	free(v);
}

static void
test_clock(void)
{
	struct timespec	now, after, d;
	int64_t		a, b;

	a = clock_ms();
	b = clock_us();
	ok(a > 0 && b / 1000 >= a, "clock_us and clock_ms share an origin");
	/* Bounded by the clock read before and after, not by a guess at
	 * how long the call takes on this machine. */
	clock_gettime(CLOCK_REALTIME, &now);
	d = clock_deadline(1999);
	clock_gettime(CLOCK_REALTIME, &after);
	ok(d.tv_nsec >= 0 && d.tv_nsec < 1000000000, "deadline normalised");
	a = (int64_t)(d.tv_sec - now.tv_sec) * 1000 +
	    (d.tv_nsec - now.tv_nsec) / 1000000;
	b = (int64_t)(d.tv_sec - after.tv_sec) * 1000 +
	    (d.tv_nsec - after.tv_nsec) / 1000000;
	ok(a >= 1999 && b <= 1999, "deadline 1999 ms after the call: %lld "
	    "after the clock before it, %lld after the one after",
	    (long long)a, (long long)b);
}

static void
test_strmap(void)
{
	struct strmap	m = { 0 };
	char		k[32];
	size_t		v, i;
	int		rc = 0, all = 1;

	ok(strmap_get(&m, "a", &v) == 0, "an empty map has nothing");
	for (i = 0; i < 5000 && rc == 0; i++) {
		snprintf(k, sizeof(k), "key%zu", i);
		rc = strmap_put(&m, k, i);
	}
	for (i = 0; i < 5000; i++) {
		snprintf(k, sizeof(k), "key%zu", i);
		all &= strmap_get(&m, k, &v) == 1 && v == i;
	}
	ok(rc == 0 && all && m.n == 5000, "5000 keys put and found");
	ok(strmap_put(&m, "key7", 70) == 0 && strmap_get(&m, "key7", &v) &&
	    v == 70 && m.n == 5000, "a second put replaces the number");
	ok(strmap_get(&m, "key5000", &v) == 0 && strmap_get(&m, "", &v) == 0,
	    "absent keys are absent");
	strmap_free(&m);
	ok(m.cap == 0 && m.n == 0 && strmap_get(&m, "key1", &v) == 0,
	    "strmap_free empties");
}

static void
test_fs(void)
{
	char		*d = scratch("base"), p[4096];
	struct stat	 st;

	snprintf(p, sizeof(p), "%s/a/b/c", d);
	ok(fs_mkdir_p(p, 1) == 0 && stat(p, &st) != 0 &&
	    snprintf(p, sizeof(p), "%s/a/b", d) > 0 && stat(p, &st) == 0 &&
	    S_ISDIR(st.st_mode), "fs_mkdir_p with parents_only: a/b, not c");
	snprintf(p, sizeof(p), "%s/a/b/c", d);
	ok(fs_mkdir_p(p, 0) == 0 && stat(p, &st) == 0 && S_ISDIR(st.st_mode) &&
	    fs_mkdir_p(p, 0) == 0, "fs_mkdir_p: all of it, twice");
	rmtree(d);
	free(d);
}

int
main(void)
{
	test_hex();
	test_buf();
	test_array();
	test_clock();
	test_strmap();
	test_fs();
	return done();
}
