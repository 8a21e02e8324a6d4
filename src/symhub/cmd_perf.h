/*
 * cmd_perf: `symhub perf`, which puts the debug files of every module a
 * perf.data profile names into perf's build-id cache, fetched from a hub,
 * so that `perf report`, `perf script` and `perf annotate` symbolize it
 * also where perf was built without debuginfod.
 */
#ifndef SYMHUB_CMD_PERF_H
#define SYMHUB_CMD_PERF_H

/* argv[0] is "perf".  @return the exit status (symhub(1)). */
int	cmd_perf(int argc, char **argv);

#endif
