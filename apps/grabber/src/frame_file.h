/* Writing one frame so that its final name only ever holds a whole frame. */
#ifndef GRABBER_FRAME_FILE_H
#define GRABBER_FRAME_FILE_H

#include <sys/uio.h>

/* A frame is a header and pixels; a few parts are all it ever needs. */
#define FRAME_FILE_MAX_PARTS 4

/* Writes the parts, in order, to dir/.name.tmp and renames that to
 * dir/name once every byte is written and the file is closed. On failure
 * the temporary file is removed, errno tells why (ENOSPC, EIO, ...) and
 * no file named name has been created or changed. More than
 * FRAME_FILE_MAX_PARTS parts, or none, fail with EINVAL. */
int frame_file_write(const char *dir, const char *name, const struct iovec *parts,
		     int part_count);

#endif
