/*
 * cli: what several symhub commands share in reading their arguments.
 */
#ifndef SYMHUB_CLI_H
#define SYMHUB_CLI_H

#define CLI_JOBS_MAX	64

/*
 * Parse a -j/--jobs argument: a decimal number from 1 to CLI_JOBS_MAX.
 * @return 0 with *jobs set, or -EINVAL.
 */
int	cli_jobs(const char *arg, int *jobs);

/*
 * Call file for every regular file under dir, recursively, in name order
 * (so that a run is repeatable).  Symbolic links, devices and sockets
 * below dir are neither followed nor reported (a tree of libraries has
 * many links); dir itself is followed.  Entries that cannot be read go
 * to fail with their errno, and the walk goes on.
 * @return 0; file's first negative result; -ENOMEM.
 */
int	cli_walk(const char *dir, int (*file)(void *ctx, const char *path),
	    void (*fail)(void *ctx, const char *path, int errnum), void *ctx);

#endif
