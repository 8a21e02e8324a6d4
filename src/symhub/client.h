/*
 * client: the upload client behind `symhub upload`.
 *
 * Planning: files are read with elfinfo and turned into (build-id, kind)
 * items, a debuginfo for a file with DWARF or a symbol table, an
 * executable for a file with code.  Running: for each item the hub is
 * asked first (HEAD /buildid/ID/KIND, its X-Symhub-Quality against the
 * local file's), and only a better file is sent (PUT, streamed from the
 * file, never read into memory), at most opts.jobs transfers at once on one
 * libcurl multi handle.
 *
 * With opts.sources, every debuginfo planned also plans its sources: the
 * files its DWARF names (elfinfo_sources()), read from this machine when
 * its build-id's other files are done and sent as one bundle
 * (common/srcbundle.h) to PUT /buildid/ID/sources; a file that cannot be
 * read is reported ("unread") and left out.
 *
 * Unlike the library-like modules this one reports: one line per (file,
 * kind) to opts.out (failures to opts.err), in the format of symhub(1),
 * and a progress bar to opts.err when asked.  The token is never printed.
 */
#ifndef SYMHUB_CLIENT_H
#define SYMHUB_CLIENT_H

#include <stddef.h>
#include <stdio.h>

struct client_opts {
	const char	*url;		/* the hub, "http://host:8002" */
	const char	*token;		/* bearer token; NULL: none */
	int		 jobs;		/* transfers at once, >= 1 */
	int		 force;		/* no HEAD; PUT ?force=1 */
	int		 dry_run;	/* HEAD only; report what would go */
	int		 quiet;		/* failures only, no progress bar */
	int		 progress;	/* a progress bar for files > 1 MiB */
	int		 sources;	/* --sources: each debuginfo's source
					 * files too, as one bundle (PUT
					 * /buildid/ID/sources, after it) */
	int		 private;	/* --private: X-Symhub-Private: 1 */
	FILE		*out;		/* report lines and the summary */
	FILE		*err;		/* failure lines and the progress bar */
};

/* What became of the items, for the summary and the exit status. */
struct client_counts {
	unsigned	stored;		/* 201: the hub had nothing */
	unsigned	replaced;	/* 200: a worse copy was replaced */
	unsigned	same;		/* 200: the hub had these very bytes */
	unsigned	skipped;	/* as good there already (HEAD or 409),
					 * duplicates, files with nothing to
					 * send (not ELF, no build-id) */
	unsigned	would;		/* dry run: would be sent */
	unsigned	failed;		/* refused, invalid, transport errors,
					 * unreadable files */
	unsigned	src_files;	/* source files put in bundles */
	unsigned	src_unread;	/* source files the DWARF names that
					 * could not be read here (no
					 * failure: listed, not sent) */
	unsigned long long src_bytes;	/* bytes of the bundles sent */
};

struct client;

/*
 * Make a client.  The strings in o are copied; o->out and o->err are
 * borrowed and must stay open until client_free().  Initialises libcurl.
 * @return 0 and *out (free with client_free()); -EINVAL for a URL not
 *         http:// or https://, or an empty token or one with blanks or
 *         control characters; -ENAMETOOLONG for a URL over 4096 bytes;
 *         -ENOMEM; -EIO when libcurl cannot be initialised.
 */
int	client_create(const struct client_opts *o, struct client **out);

/* Free a client, wiping its copy of the token.  Accepts NULL. */
void	client_free(struct client *c);

/*
 * Plan the upload of one deployed binary and the file with its symbols:
 * dbg as debuginfo when it has DWARF or a symbol table, exe as executable;
 * both PUTs carry exe's FileID.  Nothing is planned on failure.
 * @param dbg   NULL: exe itself, whose lack of symbols is then no error
 *              (only the executable is sent, and a skipped line says so).
 * @param msg   on failure, receives one line for the user (naming both
 *              build-ids when they differ).
 * @return 0; -ENOENT/-EACCES/... when a file cannot be read; -ENOEXEC not
 *         ELF; -ENODATA no build-id; -EXDEV the build-ids differ;
 *         -ENOTSUP exe has no code or dbg has no symbols; -ENOMEM.
 */
int	client_add_pair(struct client *c, const char *exe, const char *dbg,
	    char *msg, size_t msglen);

/*
 * Plan a file, or every regular file under a directory (recursively,
 * symbolic links below path not followed; path itself is followed).
 * Files that are not ELF or have no build-id are reported as skipped;
 * unreadable ones as failed.  When several files give the same (build-id,
 * kind), the best (elfinfo_score()) is kept, the first one found on a
 * tie, and the others are reported as duplicates when client_run() starts.
 * @return 0, or -ENOMEM (what was planned so far stays).
 */
int	client_add_path(struct client *c, const char *path);

/*
 * Ask, send and report everything planned.  Call once.
 * @param counts  set to what became of everything since client_create(),
 *                what client_add_*() reported included, also on failure.
 * @return 0 once every item has a result (failures are in counts), or
 *         -ENOMEM / -EIO when libcurl could not be set up.
 */
int	client_run(struct client *c, struct client_counts *counts);

#endif
