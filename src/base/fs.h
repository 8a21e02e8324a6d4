/*
 * fs: small file-system helpers every layer may use.
 */
#ifndef SYMHUB_FS_H
#define SYMHUB_FS_H

#include <stddef.h>

/*
 * Create path and every missing directory above it (mode 0755), as
 * mkdir -p does.  With parents_only, path's last component is left alone
 * (it names a file about to be written).
 * @return 0 (also when they exist), -ENAMETOOLONG, or mkdir's -errno.
 */
int	fs_mkdir_p(const char *path, int parents_only);

/* Write all len bytes of buf to fd (write() again after a short write or
 * EINTR).  @return 0 or -errno. */
int	fs_write_all(int fd, const void *buf, size_t len);

/* fsync() the directory at path, so that a rename or unlink in it is
 * durable.  @return 0 or -errno. */
int	fs_fsync_dir(const char *path);

#endif
