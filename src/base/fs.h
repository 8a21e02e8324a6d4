/*
 * fs: small file-system helpers every layer may use.
 */
#ifndef SYMHUB_FS_H
#define SYMHUB_FS_H

/*
 * Create path and every missing directory above it (mode 0755), as
 * mkdir -p does.  With parents_only, path's last component is left alone
 * (it names a file about to be written).
 * @return 0 (also when they exist), -ENAMETOOLONG, or mkdir's -errno.
 */
int	fs_mkdir_p(const char *path, int parents_only);

#endif
