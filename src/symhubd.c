/*
 * symhubd: the daemon.  Wires config, log, cache, scan and http together
 * and turns signals into actions: SIGTERM/SIGINT stop, SIGHUP reopens the
 * log and rescans.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth.h"
#include "cache/cache.h"
#include "config.h"
#include "elfinfo.h"
#include "fetch.h"
#include "gsymsvc.h"
#include "http.h"
#include "log.h"
#include "scan.h"

#define FLUSH_INTERVAL	5	/* seconds between access flushes/evictions */

struct maint {
	struct cache	*c;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	int		 stop;
};

/* Write recorded accesses and keep the store within its budget. */
static void *
maintain(void *arg)
{
	struct maint	*m = arg;
	struct timespec	 until;
	int		 n;

	pthread_mutex_lock(&m->mu);
	while (!m->stop) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += FLUSH_INTERVAL;
		pthread_cond_timedwait(&m->cv, &m->mu, &until);
		if (m->stop)
			break;
		pthread_mutex_unlock(&m->mu);
		if ((n = cache_flush(m->c, (int64_t)time(NULL))) > 0)
			log_info("evicted %d entries", n);
		else if (n < 0 && n != -EROFS)
			log_warnx("cache flush: %s", strerror(-n));
		pthread_mutex_lock(&m->mu);
	}
	pthread_mutex_unlock(&m->mu);
	return NULL;
}

static struct cache *
open_store(const struct config *cfg)
{
	struct cache_options	 opt = { cfg->cache_max, 0, 0 };
	struct cache		*c;
	int			 rc;

	rc = cache_open(cfg->store, &opt, &c);
	if (rc == -EACCES || rc == -EROFS || rc == -ENOSPC) {
		/* Keep serving what the store has. */
		log_warnx("store %s is not writable (%s): serving it read-only",
		    cfg->store, strerror(-rc));
		opt.readonly = 1;
		rc = cache_open(cfg->store, &opt, &c);
	}
	if (rc < 0)
		fatalx("cannot open store %s: %s", cfg->store, strerror(-rc));
	return c;
}

int
main(int argc, char **argv)
{
	struct config		 cfg;
	struct cache		*c;
	struct scan		*s = NULL;
	struct fetch		*f = NULL;
	struct gsymsvc		*gs = NULL;
	struct auth		*auth = NULL;
	const char		*why;
	unsigned		 line;
	struct http		*h;
	struct cache_stats	 st;
	struct maint		 m;
	pthread_t		 mt;
	sigset_t		 set;
	int			 rc, sig;

	rc = config_parse(&cfg, argc, argv);
	if (rc != 0) {
		config_free(&cfg);
		return rc > 0 ? 0 : 2;
	}
	if (cfg.check_only) {
		config_dump(&cfg, stdout);
		config_free(&cfg);
		return 0;
	}
	if ((rc = log_init("symhubd", cfg.log_file, (int)cfg.verbose)) < 0)
		fprintf(stderr, "symhubd: log file %s: %s\n", cfg.log_file,
		    strerror(-rc));
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
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	c = open_store(&cfg);
	if (cache_stats(c, &st) == 0)
		log_info("store %s: %llu entries, %llu blob bytes; check dropped "
		    "%llu records, removed %llu stray files", cfg.store,
		    (unsigned long long)st.records,
		    (unsigned long long)st.bytes,
		    (unsigned long long)st.check_dropped,
		    (unsigned long long)st.check_removed);

	if (cfg.scan_dirs.n > 0) {
		/*
		 * Listen only once the first pass is done: a client asking
		 * earlier gets "connection refused", which libdebuginfod
		 * retries, instead of a 404 it would cache for 10 minutes.
		 * After a restart unchanged files cost one stat() each.
		 */
		if ((rc = scan_create(c, &cfg, &s)) < 0)
			fatalx("scanner: %s", strerror(-rc));
		if ((rc = scan_pass(s, 0)) < 0)
			log_warnx("first scan: %s", strerror(-rc));
		else
			log_info("first scan: %d files indexed", rc);
		if ((rc = scan_start(s, cfg.rescan)) < 0)
			fatalx("scanner: %s", strerror(-rc));
	}
	m.c = c;
	m.stop = 0;
	pthread_mutex_init(&m.mu, NULL);
	pthread_cond_init(&m.cv, NULL);
	if ((rc = pthread_create(&mt, NULL, maintain, &m)) != 0)
		fatalx("maintenance thread: %s", strerror(rc));

	if (cfg.upstreams.n > 0 && (rc = fetch_create(c, &cfg, &f)) < 0)
		fatalx("upstreams: %s", strerror(-rc));
	if (f != NULL)
		log_info("asking %zu upstream(s) on a miss", cfg.upstreams.n);
	if (cfg.tokens != NULL) {
		rc = auth_load(cfg.tokens, &auth, &why, &line);
		if (rc < 0 && why != NULL)
			fatalx("tokens file %s:%u: %s", cfg.tokens, line, why);
		if (rc < 0)
			fatalx("tokens file %s: %s", cfg.tokens, strerror(-rc));
		log_info("uploads accepted (tokens from %s)", cfg.tokens);
	}
	if ((rc = gsymsvc_create(c, (unsigned)cfg.gsym_workers,
	    (unsigned)cfg.gsym_threads, &gs)) < 0)
		fatalx("gsym workers: %s", strerror(-rc));
	if ((rc = http_start(&cfg, c, s, f, auth, gs, &h)) < 0)
		fatalx("cannot listen on %s: %s", cfg.listen, strerror(-rc));
	log_info("listening on %s (port %u), store %s", cfg.listen,
	    (unsigned)http_port(h), cfg.store);

	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGHUP) {
			log_reopen();
			log_info("SIGHUP: log reopened, rescanning");
			if (s != NULL)
				scan_trigger(s);
			continue;
		}
		log_info("signal %d: stopping", sig);
		break;
	}
	fetch_stop(f);		/* resumes every suspended connection */
	gsymsvc_stop(gs);	/* the same, for conversions */
	http_stop(h);
	fetch_free(f);
	gsymsvc_free(gs);
	auth_free(auth);
	pthread_mutex_lock(&m.mu);
	m.stop = 1;
	pthread_cond_signal(&m.cv);
	pthread_mutex_unlock(&m.mu);
	pthread_join(mt, NULL);
	scan_free(s);
	cache_close(c);
	config_free(&cfg);
	log_info("stopped");
	return 0;
}
