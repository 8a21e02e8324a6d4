/*
 * test_log: the log's escaping, its rate limits and its memory of broken
 * things, driven directly into a temporary file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symhubd/log.h"
#include "tap.h"

static char path[] = "/tmp/test_log.XXXXXX";

/* Lines of the log containing needle; the file is emptied after. */
static int
lines(const char *needle, int empty)
{
	char	 line[8192];
	FILE	*fp;
	int	 n = 0;

	if ((fp = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), fp) != NULL)
		if (strstr(line, needle) != NULL)
			n++;
	fclose(fp);
	if (empty && truncate(path, 0) != 0)
		return -1;
	return n;
}

static void
test_escape(void)
{
	log_info("path %s end", "/a\x1b[31m\xc2\x9b\xff\xc3\xa9\\\xe2\x82");
	ok(lines("path /a\\x1b[31m\\xc2\\x9b\\xff\xc3\xa9\\x5c\\xe2\\x82 end",
	    0) == 1, "ESC, a C1 control, 0xff, a backslash and a cut "
	    "sequence escaped; UTF-8 as it is");
	log_info("%s", "\xed\xa0\x80 \xc0\xaf \xf4\x90\x80\x80 \xf0\x9f\x98\x80");
	ok(lines("\\xed\\xa0\\x80 \\xc0\\xaf \\xf4\\x90\\x80\\x80 \xf0\x9f\x98\x80",
	    0) == 1, "a surrogate, an overlong, beyond U+10FFFF escaped; "
	    "an emoji as it is");
	errno = EINVAL;
	log_warn("%s", "x\ny");
	ok(lines("x\\x0ay: Invalid argument", 1) == 1,
	    "a newline escaped, strerror appended");
}

static void
test_limited(void)
{
	char	peer[64];
	int	i, n;

	/* A token comes back every 200 ms: one may, on a slow machine. */
	for (i = 0; i < 100; i++)
		log_limited("cause one", "192.0.2.1", "one %d", i);
	for (i = 0; i < 10; i++)
		log_limited("cause one", "192.0.2.2", "one %d", i);
	n = lines("warning: one ", 0);
	ok(n == LOG_BURST + 10 || n == LOG_BURST + 11,
	    "a burst of %d from one address, all of another's 10 (%d)",
	    LOG_BURST, n);
	log_flush_dropped();
	snprintf(peer, sizeof(peer), "warning: dropped %d warnings like",
	    100 + 10 - n);
	ok(lines(peer, 0) == 1 && lines("\"cause one\" from 192.0.2.1 in ",
	    0) == 1, "the %d dropped, said", 100 + 10 - n);
	ok(lines("192.0.2.2 in", 0) == 0, "nothing said of the other");
	ok(log_dropped_total() == (uint64_t)(110 - n), "counted (%llu)",
	    (unsigned long long)log_dropped_total());
	log_flush_dropped();
	ok(lines("warning: dropped", 1) == 1, "said once");

	/* Many addresses: the bucket of all of them. */
	for (i = 0; i < 1000; i++) {
		snprintf(peer, sizeof(peer), "198.51.100.%d", i);
		log_limited("cause two", peer, "two %d", i);
	}
	n = lines("warning: two ", 0);
	ok(n >= 2 * LOG_ALL_RATE - LOG_BURST - 10 && n <= 2 * LOG_ALL_RATE + 5,
	    "1,000 addresses: what the shared bucket of %d had left (%d)",
	    2 * LOG_ALL_RATE, n);
	log_flush_dropped();
	ok(lines("warning: dropped ", 1) == 17, "16 summaries and the rest "
	    "in one");
}

static void
test_changed(void)
{
	int i, n;

	ok(log_changed("c", "k", 1, 0) == 0, "sound, never broken: nothing");
	ok(log_changed("c", "k", 1, 7) == 1, "broken: log it");
	ok(log_changed("c", "k", 1, 7) == 0, "still the same: nothing");
	ok(log_changed("d", "k", 1, 7) == 1, "another cause: another thing");
	ok(log_changed("c", "k", 1, 8) == 1, "broken otherwise: log it");
	ok(log_changed("c", "k", 1, 0) == 1, "mended: log it");
	ok(log_changed("c", "k", 1, 0) == 0, "still sound: nothing");
	for (i = n = 0; i < LOG_STATES + 1; i++)
		n += log_changed("e", &i, sizeof(i), 1);
	ok(n == LOG_STATES + 1, "%d broken things", LOG_STATES + 1);
	i = LOG_STATES;
	ok(log_changed("e", &i, sizeof(i), 1) == 0, "the last remembered");
	i = 0;
	ok(log_changed("e", &i, sizeof(i), 1) == 1, "the first forgotten");
}

int
main(void)
{
	int fd;

	if ((fd = mkstemp(path)) < 0)
		return 99;
	close(fd);
	if (log_init("test_log", path, 0) != 0)
		return 99;
	test_escape();
	test_limited();
	test_changed();
	unlink(path);
	return done();
}
