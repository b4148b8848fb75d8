#include "frame_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* writev may stop early (a signal, a nearly full disk); carry on from
 * where it stopped until everything is written or it fails. */
static int write_all(int fd, const struct iovec *parts, int part_count)
{
	struct iovec pending[FRAME_FILE_MAX_PARTS];
	struct iovec *next = pending;
	int left = part_count;

	memcpy(pending, parts, sizeof(*parts) * (size_t)part_count);
	while (left > 0) {
		ssize_t written = writev(fd, next, left);

		if (written < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		while (left > 0 && (size_t)written >= next->iov_len) {
			written -= (ssize_t)next->iov_len;
			next++;
			left--;
		}
		if (left > 0) {
			next->iov_base = (char *)next->iov_base + written;
			next->iov_len -= (size_t)written;
		}
	}
	return 0;
}

int frame_file_write(const char *dir, const char *name, const struct iovec *parts,
		     int part_count)
{
	char final_path[PATH_MAX], temp_path[PATH_MAX];

	if (part_count < 1 || part_count > FRAME_FILE_MAX_PARTS) {
		errno = EINVAL;
		return -1;
	}
	if ((size_t)snprintf(final_path, sizeof(final_path), "%s/%s", dir, name) >=
		    sizeof(final_path) ||
	    (size_t)snprintf(temp_path, sizeof(temp_path), "%s/.%s.tmp", dir, name) >=
		    sizeof(temp_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	int fd = open(temp_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		return -1;
	int failed = write_all(fd, parts, part_count);
	int saved_errno = errno;

	/* close() can be the first to report a write error (NFS, quotas). */
	if (close(fd) != 0 && !failed) {
		failed = 1;
		saved_errno = errno;
	}
	if (!failed && rename(temp_path, final_path) != 0) {
		failed = 1;
		saved_errno = errno;
	}
	if (failed) {
		unlink(temp_path);
		errno = saved_errno;
		return -1;
	}
	return 0;
}
