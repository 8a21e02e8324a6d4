/*
 * symhubd: the daemon.  Wires config, log, cache, scan and http together
 * and turns signals into actions: SIGTERM/SIGINT stop, SIGHUP reopens the
 * log and rescans, SIGUSR1 only reopens the log (for logrotate).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "base/clock.h"
#include "cache/cache.h"
#include "common/auth.h"
#include "common/elfinfo.h"
#include "bucket.h"
#include "config.h"
#include "fetch.h"
#include "derive.h"
#include "arena.h"
#include "http.h"
#include "log.h"
#include "s3/s3conf.h"
#include "metrics.h"
#include "scan.h"

#define FLUSH_INTERVAL	5	/* seconds between access flushes/evictions */

struct maint {
	struct cache	*c;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	int		 stop;
	uint64_t	 verify_period;		/* seconds; 0: off */
	uint64_t	 verify_rate;		/* bytes/s; 0: by the period */
	unsigned char	 verify_cursor[32];	/* where the pass is */
	uint64_t	 first_failed;		/* cache_stats() last seen */
	int64_t		 quarantine_keep;	/* seconds; 0: forever */
	int64_t		 collected;		/* when quarantine/ was */
};

/*
 * Verify a share of the stored bytes each tick: verify_rate * FLUSH_INTERVAL
 * when set, else so that a pass over all of them takes verify_period
 * seconds, bytes * FLUSH_INTERVAL / period, at least VERIFY_MIN.
 */
#define VERIFY_MIN	((uint64_t)1 << 20)
#define COLLECT_INTERVAL 3600	/* seconds between looks at quarantine/ */

static void
verify_some(struct maint *m, const struct cache_stats *st)
{
	uint64_t	budget, failed = 0;
	int		n;

	if (st->first_failed > m->first_failed)
		log_warnx("verify: %llu stored file(s) no longer matched their "
		    "SHA-256 when first read since the start: moved to "
		    "quarantine/, their entries dropped (fetched again, never "
		    "served)", (unsigned long long)(st->first_failed -
		    m->first_failed));
	m->first_failed = st->first_failed;
	if (m->verify_rate > 0) {
		budget = m->verify_rate * FLUSH_INTERVAL;
	} else if (m->verify_period > 0) {
		budget = st->bytes / m->verify_period * FLUSH_INTERVAL;
		if (budget < VERIFY_MIN)
			budget = VERIFY_MIN;
	} else {
		metrics_set_verify_rate(0);
		return;
	}
	metrics_set_verify_rate(budget / FLUSH_INTERVAL);
	n = cache_verify(m->c, m->verify_cursor, budget, &failed);
	if (n < 0 && n != -EROFS)
		log_warnx("verify: %s", strerror(-n));
	if (failed > 0)
		log_warnx("verify: %llu stored file(s) no longer match their "
		    "SHA-256: moved to quarantine/, their entries dropped "
		    "(fetched again on the next request)",
		    (unsigned long long)failed);
	if (n == 0)
		log_debug("verify: a pass over the store is complete");
}

/* Quarantined files past their grace time go, once an hour. */
static void
collect_quarantine(struct maint *m, int64_t now)
{
	int n;

	if (m->quarantine_keep <= 0 || now - m->collected < COLLECT_INTERVAL)
		return;
	m->collected = now;
	if ((n = cache_quarantine_collect(m->c, now - m->quarantine_keep)) > 0)
		log_info("quarantine: deleted %d file(s) kept there more than "
		    "%lld s", n, (long long)m->quarantine_keep);
	else if (n < 0 && n != -EROFS)
		log_warnx("quarantine: %s", strerror(-n));
}

/* --gsym-ahead: a new debuginfo is converted before anybody asks. */
static void
gsym_ahead(void *ctx, const struct cache_key *key)
{
	int rc;

	if ((rc = derive_gsym_convert(ctx, key->id, key->idlen, NULL,
	    NULL)) < 0 && rc != -ECANCELED)
		log_warnx("gsym ahead: %s", strerror(-rc));
}

/* Write recorded accesses, keep the store within its budget, verify, say
 * how many warnings were dropped, unmap the idle profile buffers. */
static void *
maintain(void *arg)
{
	struct maint		*m = arg;
	struct cache_stats	 st;
	struct timespec		 until;
	int			 n;

	pthread_mutex_lock(&m->mu);
	while (!m->stop) {
		until = clock_deadline(FLUSH_INTERVAL * 1000);
		pthread_cond_timedwait(&m->cv, &m->mu, &until);
		if (m->stop)
			break;
		pthread_mutex_unlock(&m->mu);
		if ((n = cache_flush(m->c, clock_wall_s())) > 0)
			log_info("evicted %d entries", n);
		else if (n < 0 && n != -EROFS)
			log_warnx("cache flush: %s", strerror(-n));
		if (cache_stats(m->c, &st) == 0)
			verify_some(m, &st);
		collect_quarantine(m, clock_wall_s());
		log_flush_dropped();
		/* the profiles' kept buffers, once none came for a tick */
		(void)arena_big_trim();
		pthread_mutex_lock(&m->mu);
	}
	pthread_mutex_unlock(&m->mu);
	return NULL;
}

/*
 * A damaged or lost index is rebuilt from the store's catalog, the old
 * one kept aside: the hub starts with what it held rather than crash in
 * LMDB or start empty (and the log says what happened and what to run).
 */
static int
recover_store(const struct config *cfg)
{
	struct cache_rebuild_report	rep;
	int				rc;

	log_warnx("store %s: the index is damaged or lost; rebuilding it "
	    "from the catalog and blobs (as 'symhub store rebuild %s' does)",
	    cfg->store, cfg->store);
	if ((rc = cache_rebuild(cfg->store, &rep)) < 0) {
		log_warnx("store %s: rebuild failed: %s%s", cfg->store,
		    strerror(-rc), rc == -EBUSY ? " (another process has the "
		    "store open)" : "");
		return rc;
	}
	log_warnx("store %s: rebuilt: %llu records, %llu FileIDs; %llu "
	    "entries without an intact blob, %llu unreadable entries, %llu "
	    "blobs taken back from quarantine, %llu unknown blobs moved to "
	    "quarantine; old index kept as %s", cfg->store,
	    (unsigned long long)rep.records, (unsigned long long)rep.fileids,
	    (unsigned long long)rep.missing,
	    (unsigned long long)rep.bad_entries,
	    (unsigned long long)rep.restored,
	    (unsigned long long)rep.quarantined,
	    rep.moved[0] ? rep.moved : "(none)");
	return 0;
}

static struct cache *
open_store(const struct config *cfg)
{
	struct cache_options	 opt = { cfg->cache_max, 0, 0, 0 };
	struct cache		*c;
	int			 rc;

	rc = cache_open(cfg->store, &opt, &c);
	if (rc == -EUCLEAN && recover_store(cfg) == 0)
		rc = cache_open(cfg->store, &opt, &c);
	if (rc == -EACCES || rc == -EROFS || rc == -ENOSPC) {
		/* Keep serving what the store has. */
		log_warnx("store %s is not writable (%s): serving it read-only",
		    cfg->store, strerror(-rc));
		opt.readonly = 1;
		rc = cache_open(cfg->store, &opt, &c);
	}
	if (rc == -EUCLEAN)
		fatalx("store %s: the index is damaged and could not be "
		    "rebuilt; stop every process using the store and run "
		    "'symhub store rebuild %s'", cfg->store, cfg->store);
	if (rc < 0)
		fatalx("cannot open store %s: %s", cfg->store, strerror(-rc));
	return c;
}

/* After a restart most files are unchanged: say so, rather than "0
 * files indexed" of a store that serves thousands. */
static void
first_scan_said(struct scan *s, int indexed)
{
	struct scan_dir_info	d[64];
	uint64_t		files = 0, changed = 0;
	size_t			n, i;

	n = scan_dirs(s, d, sizeof(d) / sizeof(d[0]));
	for (i = 0; i < n && i < sizeof(d) / sizeof(d[0]); i++) {
		files += d[i].files;
		changed += d[i].changed;
	}
	log_info("first scan: %llu file%s in %zu director%s: %llu new or "
	    "changed (%d indexed), %llu unchanged since the last start",
	    (unsigned long long)files, files == 1 ? "" : "s", n,
	    n == 1 ? "y" : "ies", (unsigned long long)changed, indexed,
	    (unsigned long long)(files - changed));
}

/*
 * What start-up refuses, checked before the store is opened (a long
 * first scan would come before the refusal) and by -n: the address to
 * listen on, bound now; the bucket's keys; the upstreams' header files;
 * the tokens file, loaded into *auth.  With check_only, a port in use is
 * a note, not a refusal: it is often the running hub's, whose
 * configuration is being checked.
 * @return 0, with *fd bound (or -1 with check_only); -1 with one line
 *         naming the thing and the cause in why.
 */
static int
preflight(const struct config *cfg, int check_only, int *fd,
    struct auth **auth, char *why, size_t whylen)
{
	struct upstream_spec	 u;
	struct s3_config	 sc;
	const char		*w;
	char			 cause[384];
	unsigned		 line;
	size_t			 i;
	int			 rc;

	*fd = -1;
	*auth = NULL;
	rc = http_bind(cfg->listen, fd, cause, sizeof(cause));
	if (rc == -EADDRINUSE && check_only) {
		fprintf(stderr, "symhubd: note: cannot listen on %s now: %s\n",
		    cfg->listen, cause);
	} else if (rc < 0) {
		snprintf(why, whylen, "cannot listen on %s: %s", cfg->listen,
		    cause);
		return -1;
	}
	if (check_only && *fd >= 0) {
		close(*fd);
		*fd = -1;
	}
	if (cfg->s3 != NULL && !cfg->offline &&
	    config_s3(cfg, &sc, cause, sizeof(cause)) < 0) {
		snprintf(why, whylen, "bucket %s: %s", cfg->s3, cause);
		goto fail;
	}
	for (i = 0; i < cfg->upstreams.n && !cfg->offline; i++) {
		if (config_parse_upstream(cfg, cfg->upstreams.v[i], &u,
		    &w) < 0)
			continue;	/* config_parse() refused it */
		rc = u.header_file != NULL ? config_header_file(u.header_file,
		    NULL, NULL, cause, sizeof(cause)) : 0;
		if (rc < 0)
			snprintf(why, whylen, "upstream %s: header file %s: %s",
			    u.name, u.header_file, cause);
		config_upstream_free(&u);
		if (rc < 0)
			goto fail;
	}
	if (cfg->tokens != NULL &&
	    (rc = auth_load(cfg->tokens, auth, &w, &line)) < 0) {
		if (w != NULL)
			snprintf(why, whylen, "tokens file %s:%u: %s",
			    cfg->tokens, line, w);
		else
			snprintf(why, whylen, "tokens file %s: %s", cfg->tokens,
			    strerror(-rc));
		goto fail;
	}
	return 0;
fail:
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
	return -1;
}

/* -n: what start-up only warns of, a missing scan directory, is said
 * too, and does not fail the check. */
static int
check_config(const struct config *cfg)
{
	struct auth	*auth;
	struct stat	 st;
	char		 why[512];
	size_t		 i;
	int		 fd;

	if (preflight(cfg, 1, &fd, &auth, why, sizeof(why)) < 0) {
		fprintf(stderr, "symhubd: %s\n", why);
		return 1;
	}
	auth_free(auth);
	for (i = 0; i < cfg->scan_dirs.n; i++) {
		const char *cause = NULL;

		if (stat(cfg->scan_dirs.v[i], &st) != 0)
			cause = strerror(errno);
		else if (!S_ISDIR(st.st_mode))
			cause = strerror(ENOTDIR);
		if (cause != NULL)
			fprintf(stderr, "symhubd: note: scan directory %s: %s "
			    "(start-up goes on; each pass looks for it)\n",
			    cfg->scan_dirs.v[i], cause);
	}
	return 0;
}

/* SIGHUP: the tokens file again, so that a line removed revokes its
 * token for the next request.  A file that does not load leaves the
 * tokens as they were. */
static void
reload_tokens(const struct config *cfg, struct http *h)
{
	struct auth	*a;
	const char	*w;
	unsigned	 line;
	int		 rc;

	if ((rc = auth_load(cfg->tokens, &a, &w, &line)) < 0) {
		if (w != NULL)
			log_warnx("SIGHUP: tokens file %s:%u: %s; the tokens "
			    "stay as they were", cfg->tokens, line, w);
		else
			log_warnx("SIGHUP: tokens file %s: %s; the tokens "
			    "stay as they were", cfg->tokens, strerror(-rc));
		return;
	}
	http_set_auth(h, a);
	log_info("SIGHUP: tokens read again from %s", cfg->tokens);
}

int
main(int argc, char **argv)
{
	struct config		 cfg;
	struct cache		*c;
	struct scan		*s = NULL;
	struct fetch		*f = NULL;
	struct bucket		*bk = NULL;
	struct derive		*dv = NULL;
	struct meta		*meta = NULL;
	struct encode		*enc = NULL;
	struct hot		*hot = NULL;
	struct http_parts	 parts;
	struct auth		*auth = NULL;
	char			 why[512];
	struct http		*h;
	struct cache_stats	 st;
	struct maint		 m;
	pthread_t		 mt;
	sigset_t		 set;
	int			 rc, sig, lfd;

	rc = config_parse(&cfg, argc, argv);
	if (rc != 0) {
		config_free(&cfg);
		return rc > 0 ? 0 : 2;
	}
	if (cfg.check_only) {
		rc = check_config(&cfg);
		if (rc == 0)
			config_dump(&cfg, stdout);
		config_free(&cfg);
		return rc;
	}
	if ((rc = log_init("symhubd", cfg.log_file, (int)cfg.verbose)) < 0)
		fprintf(stderr, "symhubd: log file %s: %s\n", cfg.log_file,
		    strerror(-rc));
	if (preflight(&cfg, 0, &lfd, &auth, why, sizeof(why)) < 0)
		fatalx("%s", why);
	if ((rc = clock_test_init()) < 0)	/* a test build's only */
		fatalx("SYMHUB_TEST_CLOCK: %s", strerror(-rc));
	/*
	 * libdw may consult debuginfod for dwz alt files while we read
	 * DWARF; it must never ask a server (possibly this one) from inside
	 * the server.
	 */
	unsetenv("DEBUGINFOD_URLS");
	if (elfinfo_init() < 0)
		fatalx("libelf is too old");

	/* Signals are taken by sigwait() below, never by other threads. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* Thousands of client connections, and the store's files besides:
	 * take every descriptor the hard limit allows. */
	{
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
		    rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	c = open_store(&cfg);
	cache_set_verify_first(c, cfg.verify_first_max);
	arena_pool_max(cfg.profile_memory_max > SIZE_MAX ? SIZE_MAX :
	    (size_t)cfg.profile_memory_max);
	if (cache_stats(c, &st) == 0 && st.opened_clean) {
		log_info("store %s: %llu entries, %llu blob bytes; closed "
		    "cleanly, not checked", cfg.store,
		    (unsigned long long)st.records,
		    (unsigned long long)st.bytes);
	} else if (cache_stats(c, &st) == 0) {
		log_info("store %s: %llu entries, %llu blob bytes; check dropped "
		    "%llu records, removed %llu tmp files, quarantined %llu "
		    "unindexed blobs", cfg.store,
		    (unsigned long long)st.records,
		    (unsigned long long)st.bytes,
		    (unsigned long long)st.check_dropped,
		    (unsigned long long)st.check_removed,
		    (unsigned long long)st.check_quarantined);
		if (st.check_restored > 0 || st.check_resorted > 0)
			log_warnx("store %s: THE INDEX WAS DAMAGED: %llu "
			    "table(s) out of key order were sorted again, "
			    "%llu record(s) and FileID(s) the catalog lists "
			    "and the index had lost were taken back from it "
			    "(served again, pinned as they were)", cfg.store,
			    (unsigned long long)st.check_resorted,
			    (unsigned long long)st.check_restored);
		if (st.check_dropped > 0 || st.check_quarantined > 0)
			log_warnx("store %s: records were dropped or blobs "
			    "quarantined; if the index was damaged, stop the "
			    "hub and run 'symhub store rebuild %s' to take "
			    "back what the catalog lists", cfg.store,
			    cfg.store);
	}

	if (cfg.scan_dirs.n > 0) {
		/*
		 * Listen only once the first pass is done: a client asking
		 * earlier gets "connection refused", which libdebuginfod
		 * retries, instead of a 404 it would cache for 10 minutes.
		 * After a restart unchanged files cost one stat() each.
		 */
		if ((rc = scan_create(c, &cfg, &s)) < 0)
			fatalx("scanner: %s", strerror(-rc));
	}
	/* Before the first pass, so that --gsym-ahead sees what it finds. */
	if ((rc = derive_create(c, s, (unsigned)cfg.gsym_workers,
	    (unsigned)cfg.gsym_threads, &dv)) < 0)
		fatalx("gsym workers: %s", strerror(-rc));
	if (s != NULL && cfg.gsym_ahead)
		scan_on_debuginfo(s, gsym_ahead, dv);
	if (s != NULL) {
		if ((rc = scan_pass(s, 0)) < 0)
			log_warnx("first scan: %s", strerror(-rc));
		else
			first_scan_said(s, rc);
		if ((rc = scan_start(s, cfg.rescan)) < 0)
			fatalx("scanner: %s", strerror(-rc));
	}
	/* What the store held before (imported, scanned or fetched without
	 * --gsym-ahead): converted in the background, after the first
	 * scan has queued what it found new. */
	if (cfg.gsym_ahead && (rc = derive_gsym_backlog(dv,
	    cfg.cache_max)) < 0)
		log_warnx("gsym backlog: %s", strerror(-rc));
	m.c = c;
	m.stop = 0;
	m.verify_period = cfg.verify_period;
	m.verify_rate = cfg.verify_rate;
	memset(m.verify_cursor, 0, sizeof(m.verify_cursor));
	m.first_failed = 0;
	m.quarantine_keep = cfg.quarantine_keep > INT64_MAX / 2 ? 0 :
	    (int64_t)cfg.quarantine_keep;
	m.collected = 0;
	pthread_mutex_init(&m.mu, NULL);
	pthread_cond_init(&m.cv, NULL);
	if ((rc = pthread_create(&mt, NULL, maintain, &m)) != 0)
		fatalx("maintenance thread: %s", strerror(rc));

	if (cfg.offline) {
		/* No fetch engine, hence no libcurl: nothing connects out. */
		metrics_set_offline(1);
		log_info("offline: no upstream is asked%s",
		    cfg.upstreams.n > 0 ? " (the configured ones are ignored)" :
		    "");
	} else {
		if (cfg.s3 != NULL && (rc = bucket_create(c, &cfg, &bk)) < 0)
			fatalx("bucket: %s", strerror(-rc));
		if (bk != NULL)
			derive_set_bucket(dv, bk);
		if ((cfg.upstreams.n > 0 || bk != NULL) &&
		    (rc = fetch_create(c, &cfg, bk, &f)) < 0)
			fatalx("upstreams: %s", strerror(-rc));
	}
	if (f != NULL && cfg.upstreams.n > 0)
		log_info("asking %zu upstream(s) on a miss%s", cfg.upstreams.n,
		    bk != NULL ? ", after the bucket" : "");
	if (f != NULL && cfg.gsym_ahead)
		fetch_on_debuginfo(f, gsym_ahead, dv);
	if (auth != NULL)
		log_info("uploads accepted (tokens from %s)", cfg.tokens);
	if ((rc = meta_create(c, f, &cfg, &meta)) < 0)
		fatalx("metadata workers: %s", strerror(-rc));
	if ((rc = encode_create(c, s, &cfg, &enc)) < 0)
		fatalx("compression: %s", strerror(-rc));
	parts.c = c;
	parts.s = s;
	parts.f = f;
	parts.auth = auth;
	parts.dv = dv;
	parts.meta = meta;
	parts.enc = enc;
	parts.bucket = bk;
	if ((rc = hot_create(cfg.hot_cache, cfg.hot_file_max, &hot)) < 0)
		fatalx("hot cache: %s", strerror(-rc));
	parts.hot = hot;
	/* lfd now owned by the server. */
	if ((rc = http_start(&cfg, &parts, lfd, &h, why, sizeof(why))) < 0)
		fatalx("cannot listen on %s: %s", cfg.listen, why);
	auth = NULL;	/* the server's now (http_set_auth()) */
	log_info("listening on %s (port %u), store %s", cfg.listen,
	    (unsigned)http_port(h), cfg.store);

	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGHUP || sig == SIGUSR1) {
			/* A failure leaves the old file in use. */
			if ((rc = log_reopen()) < 0)
				log_warnx("%s: cannot reopen the log file %s: %s",
				    sig == SIGHUP ? "SIGHUP" : "SIGUSR1",
				    cfg.log_file, strerror(-rc));
			else if (sig == SIGUSR1)
				log_info("SIGUSR1: log reopened");
			else
				log_info("SIGHUP: log reopened, rescanning");
			if (sig == SIGHUP && s != NULL)
				scan_trigger(s);
			if (sig == SIGHUP && cfg.tokens != NULL)
				reload_tokens(&cfg, h);
			/* What `symhub import` added beside the hub. */
			if (sig == SIGHUP && cfg.gsym_ahead &&
			    (rc = derive_gsym_backlog(dv, cfg.cache_max)) < 0)
				log_warnx("gsym backlog: %s", strerror(-rc));
			continue;
		}
		log_info("signal %d: stopping", sig);
		break;
	}
	fetch_stop(f);		/* resumes every suspended connection */
	derive_stop(dv);	/* the same, for conversions */
	meta_stop(meta);	/* and for /metadata queries */
	encode_stop(enc);	/* and for compressions */
	bucket_stop(bk);	/* and for uploads and deletes */
	http_stop(h);
	meta_free(meta);
	encode_free(enc);
	hot_free(hot);
	fetch_free(f);
	/* After the front: no upload waits on it any more. */
	bucket_free(bk);
	/* The scanner may still hand derive a new debuginfo: stop it first
	 * (derive's workers, which re-read through it, are joined). */
	scan_free(s);
	derive_free(dv);
	auth_free(auth);
	pthread_mutex_lock(&m.mu);
	m.stop = 1;
	pthread_cond_signal(&m.cv);
	pthread_mutex_unlock(&m.mu);
	pthread_join(mt, NULL);
	cache_close(c);
	config_free(&cfg);
	log_info("stopped");
	return 0;
}
