/*
 * cmd_export: `symhub export STORE DIR`, what a store holds as the tree
 * debuginfod clients read through file://, with a manifest.
 */
#ifndef SYMHUB_CMD_EXPORT_H
#define SYMHUB_CMD_EXPORT_H

/* argv[0] is "export".  @return the exit status (symhub(1)). */
int	cmd_export(int argc, char **argv);

#endif
