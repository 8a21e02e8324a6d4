/*
 * cmd_import: `symhub import DIR STORE`, a tree of `symhub export` loaded
 * into a store, every file verified.
 */
#ifndef SYMHUB_CMD_IMPORT_H
#define SYMHUB_CMD_IMPORT_H

/* argv[0] is "import".  @return the exit status (symhub(1)). */
int	cmd_import(int argc, char **argv);

#endif
