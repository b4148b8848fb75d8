#include "ready.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

size_t ready_line_format(char line[READY_LINE_MAX], const char *marker,
			 const struct ready_event *event)
{
	/* Microseconds, as printk stamps have, so the two line up. */
	int len = snprintf(line, READY_LINE_MAX,
			   "%s first-frame device=%s seq=%u t_boot=%lld.%06ld t_mono=%lld.%06ld",
			   marker, event->device, event->sequence, (long long)event->boot.tv_sec,
			   event->boot.tv_nsec / 1000, (long long)event->mono.tv_sec,
			   event->mono.tv_nsec / 1000);

	if (event->has_frame_time && len < READY_LINE_MAX)
		len += snprintf(line + len, (size_t)(READY_LINE_MAX - len), " t_frame=%lld.%06ld",
				(long long)event->frame.tv_sec, event->frame.tv_nsec / 1000);
	if (len >= READY_LINE_MAX - 1)
		len = READY_LINE_MAX - 2;
	line[len++] = '\n';
	line[len] = '\0';
	return (size_t)len;
}

static void write_fully(int fd, const char *text, size_t len)
{
	while (len > 0) {
		ssize_t written = write(fd, text, len);

		if (written < 0 && errno == EINTR)
			continue;
		if (written <= 0)
			return;
		text += written;
		len -= (size_t)written;
	}
}

void ready_line_emit(const char *line, size_t len, const char *kmsg_path)
{
	/* Straight to the descriptor: stdio would hold the line back when
	 * stdout is a pipe or a file. */
	fflush(stdout);
	write_fully(STDOUT_FILENO, line, len);

	int kmsg = open(kmsg_path, O_WRONLY | O_CLOEXEC);

	if (kmsg >= 0) {
		/* One write is one kernel log record. */
		if (write(kmsg, line, len) < 0)
			perror("grabber: writing the ready line to the kernel log");
		close(kmsg);
	}
}
