/* The line that says the application is ready: the first frame is in. */
#ifndef GRABBER_READY_H
#define GRABBER_READY_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define READY_LINE_MAX 512

struct ready_event {
	const char *device;
	uint32_t sequence; /* the driver's frame sequence number */
	struct timespec boot; /* CLOCK_BOOTTIME when the frame was dequeued */
	struct timespec mono; /* CLOCK_MONOTONIC, read right after boot */
	int has_frame_time;
	struct timespec frame; /* driver time stamp, CLOCK_MONOTONIC */
};

/* "MARKER first-frame device=... seq=N t_boot=S t_mono=S [t_frame=S]\n";
 * returns the length, truncated to fit line. */
size_t ready_line_format(char line[READY_LINE_MAX], const char *marker,
			 const struct ready_event *event);

/* Writes the line to stdout at once and, when it can be opened for
 * writing, to kmsg_path, where the kernel stamps it like a printk. */
void ready_line_emit(const char *line, size_t len, const char *kmsg_path);

#endif
