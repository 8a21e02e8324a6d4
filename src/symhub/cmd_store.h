/*
 * cmd_store: the CLI's `symhub store` commands, on a store directory
 * (symhubd --store): rebuild its index from the catalog, verify its blobs.
 */
#ifndef SYMHUB_STORE_H
#define SYMHUB_STORE_H

/* argv[0] is "store".  @return the process exit status. */
int	cmd_store(int argc, char **argv);

#endif
