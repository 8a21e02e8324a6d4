/*
 * cleanmark: what a clean close left, so the next open can skip the
 * check.  Private to cache/ and its unit tests.
 *
 * The open-time check (check.c) walks every page of the index and every
 * record, and lists every blob: work proportional to the store.  It is
 * there for what a crash or a hand may leave: a damaged index, a blob
 * renamed in but never indexed, a blob removed behind the engine's back.
 * After a clean close none of that is there, unless something changed the
 * files since: so the last process to close the store writes index/clean,
 * the identity (device, inode, size, mtime and ctime in ns) of data.mdb,
 * of blobs/ and of every blobs/xx, and an open that finds them all the
 * same trusts the store as it was left.  A write, a truncation, a file
 * added to or removed from blobs/ changes an mtime or a ctime (ctime
 * cannot be set back by hand), so any of them sends the open through the
 * whole check.  What it does not see: bytes that rot in place, without a
 * write that stamps a time: in a blob (the size check when it is opened,
 * the hash at its first open, cache_set_verify_first(), and
 * cache_verify() find that), or in data.mdb (the skipped probe would
 * have; remove the mark to have it run).
 */
#ifndef SYMHUB_CACHE_CLEANMARK_H
#define SYMHUB_CACHE_CLEANMARK_H

/*
 * Write dir/index/clean for the store as it is now (data.mdb closed):
 * written to a temporary name, fsynced, renamed, the directory fsynced;
 * not before the clock has passed the times it records (milliseconds on
 * a file system with coarse timestamps).
 * @return 0 or -errno (-EAGAIN: the clock did not move on; no mark).
 */
int	cleanmark_write(const char *dir);

/*
 * Is dir/index/clean there, well formed, and does every identity in it
 * match the files now?
 * @return 1 yes, 0 no (no mark, or anything differs), -errno.
 */
int	cleanmark_valid(const char *dir);

/*
 * Remove dir/index/clean (and fsync the directory), before the first
 * write of an open that trusted it: a crash from then on must send the
 * next open through the check.
 * @return 0 (also when there was none) or -errno.
 */
int	cleanmark_remove(const char *dir);

#endif
