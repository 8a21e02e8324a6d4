/*
 * cmd_prefetch: `symhub prefetch`, which makes a hub fetch and keep the
 * debug files of build-ids, ELF files, directories and core files.
 */
#ifndef SYMHUB_CMD_PREFETCH_H
#define SYMHUB_CMD_PREFETCH_H

/* argv[0] is "prefetch".  @return the exit status (symhub(1)). */
int	cmd_prefetch(int argc, char **argv);

#endif
