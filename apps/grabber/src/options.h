/* Command line of the grabber. */
#ifndef GRABBER_OPTIONS_H
#define GRABBER_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

#include "mux.h"

#define DEFAULT_READY_MARKER "BOOTLAB READY"
#define DEFAULT_BUFFERS 4
#define MIN_BUFFERS 2
#define MAX_BUFFERS 32

struct grabber_options {
	char *const *devices; /* points into argv, or at the default device */
	size_t device_count;
	enum mux_kind mux;
	unsigned long frames; /* per device; 0 means until SIGINT or SIGTERM */
	const char *output_dir; /* NULL: frames are captured but not saved */
	int raw; /* save the device's bytes instead of PPM */
	uint32_t fourcc; /* 0: keep the device's format if it can be converted */
	uint32_t width; /* 0: keep the device's size */
	uint32_t height;
	unsigned fps; /* 0: keep the device's frame rate */
	unsigned buffers;
	const char *ready_marker;
};

enum options_result { OPTIONS_RUN, OPTIONS_HELP, OPTIONS_INVALID };

/* Parses argv into options; explains a mistake on err. Resets getopt, so
 * it can be called more than once in a process. */
enum options_result options_parse(struct grabber_options *options, int argc, char **argv,
				  FILE *err);

void options_usage(FILE *out);

/* The part of a device path frames are named after: "video0" for
 * "/dev/video0". */
const char *device_stem(const char *path);

#endif
