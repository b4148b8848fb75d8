#include "options.h"

#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "number.h"
#include "pixfmt.h"

static char default_device[] = "/dev/video0";
static char *const default_devices[] = { default_device };

void options_usage(FILE *out)
{
	fprintf(out,
		"usage: grabber [OPTION]... [DEVICE]...\n"
		"Capture frames from V4L2 devices (default /dev/video0) with mmap streaming,\n"
		"all devices in one event loop.\n"
		"\n"
		"  -m, --mux select|poll|epoll  how to wait for frames (default epoll)\n"
		"  -n, --frames N               stop after N frames per device\n"
		"                               (default 0: until SIGINT or SIGTERM)\n"
		"  -o, --output DIR             save frames in DIR as DEVICE-NNNNNN.ppm\n"
		"                               (default: capture without saving)\n"
		"  -r, --raw                    save the device's bytes unconverted, as\n"
		"                               DEVICE-NNNNNN-WxH-FOURCC.raw\n"
		"  -f, --format FOURCC          ask the device for this pixel format\n"
		"  -s, --size WxH               ask the device for this frame size\n"
		"      --fps N                  ask the device for N frames per second\n"
		"  -b, --buffers N              driver buffers per device, %d..%d (default %d)\n"
		"      --ready-marker TEXT      text that starts the ready line\n"
		"                               (default \"%s\")\n"
		"  -h, --help                   show this help\n"
		"\n"
		"When the first frame is dequeued, one line goes to stdout and to\n"
		"/dev/kmsg (when writable):\n"
		"  TEXT first-frame device=DEV seq=N t_boot=S t_mono=S [t_frame=S]\n"
		"t_boot is CLOCK_BOOTTIME and t_mono CLOCK_MONOTONIC, in seconds; t_frame is\n"
		"the driver's capture time stamp when it is monotonic.\n"
		"PPM output converts: %s\n"
		"Exit status: 0 done or stopped by a signal, 1 capture or save failed,\n"
		"2 bad command line.\n",
		MIN_BUFFERS, MAX_BUFFERS, DEFAULT_BUFFERS, DEFAULT_READY_MARKER,
		pixel_format_list());
}

const char *device_stem(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static int parse_size(const char *text, uint32_t *width, uint32_t *height)
{
	char width_text[16];
	const char *x = strchr(text, 'x');
	unsigned long w, h;

	if (x == NULL || (size_t)(x - text) >= sizeof(width_text))
		return -1;
	memcpy(width_text, text, (size_t)(x - text));
	width_text[x - text] = '\0';
	if (parse_unsigned(width_text, 1, 65535, &w) || parse_unsigned(x + 1, 1, 65535, &h))
		return -1;
	*width = (uint32_t)w;
	*height = (uint32_t)h;
	return 0;
}

/* One to four printable characters; short codes are padded with spaces,
 * as V4L2 spells them ("Y16 "). */
static int parse_fourcc(const char *text, uint32_t *fourcc)
{
	size_t len = strlen(text);

	if (len == 0 || len > 4)
		return -1;
	*fourcc = 0;
	for (size_t i = 0; i < 4; i++) {
		unsigned char c = i < len ? (unsigned char)text[i] : ' ';

		if (c < 0x20 || c >= 0x7f)
			return -1;
		*fourcc |= (uint32_t)c << (8 * i);
	}
	return 0;
}

static int check_device_stems(const struct grabber_options *options, FILE *err)
{
	for (size_t i = 0; i < options->device_count; i++) {
		for (size_t j = i + 1; j < options->device_count; j++) {
			if (strcmp(device_stem(options->devices[i]),
				   device_stem(options->devices[j])) == 0) {
				fprintf(err,
					"grabber: %s and %s would write frames under the same "
					"name\n",
					options->devices[i], options->devices[j]);
				return -1;
			}
		}
	}
	return 0;
}

enum { OPT_FPS = 256, OPT_READY_MARKER };

static const struct option long_options[] = {
	{ "mux", required_argument, NULL, 'm' },
	{ "frames", required_argument, NULL, 'n' },
	{ "output", required_argument, NULL, 'o' },
	{ "raw", no_argument, NULL, 'r' },
	{ "format", required_argument, NULL, 'f' },
	{ "size", required_argument, NULL, 's' },
	{ "fps", required_argument, NULL, OPT_FPS },
	{ "buffers", required_argument, NULL, 'b' },
	{ "ready-marker", required_argument, NULL, OPT_READY_MARKER },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

#define STRINGIFY(x) #x
#define TEXT_OF(x) STRINGIFY(x)

/* Applies one option; returns 0, or -1 after explaining on err. */
static int apply_option(struct grabber_options *options, int option, const char *arg,
			FILE *err)
{
	const char *problem = NULL;
	unsigned long number = 0;

	switch (option) {
	case 'm':
		if (mux_kind_from_name(arg, &options->mux) != 0)
			problem = "--mux must be select, poll or epoll";
		break;
	case 'n':
		if (parse_unsigned(arg, 0, ULONG_MAX, &options->frames) != 0)
			problem = "--frames needs a whole number";
		break;
	case 'o':
		options->output_dir = arg;
		break;
	case 'r':
		options->raw = 1;
		break;
	case 'f':
		if (parse_fourcc(arg, &options->fourcc) != 0)
			problem = "--format needs a fourcc such as YUYV";
		break;
	case 's':
		if (parse_size(arg, &options->width, &options->height) != 0)
			problem = "--size needs WIDTHxHEIGHT such as 640x480";
		break;
	case OPT_FPS:
		if (parse_unsigned(arg, 1, 1000, &number) != 0)
			problem = "--fps needs a number from 1 to 1000";
		options->fps = (unsigned)number;
		break;
	case 'b':
		if (parse_unsigned(arg, MIN_BUFFERS, MAX_BUFFERS, &number) != 0)
			problem = "--buffers needs a number from " TEXT_OF(MIN_BUFFERS) " to " TEXT_OF(
				MAX_BUFFERS);
		options->buffers = (unsigned)number;
		break;
	case OPT_READY_MARKER:
		/* The marker is matched line by line in console logs. */
		if (arg[0] == '\0' || strpbrk(arg, "\r\n") != NULL)
			problem = "--ready-marker must be one non-empty line";
		options->ready_marker = arg;
		break;
	default:
		fprintf(err, "Try 'grabber --help'.\n");
		return -1;
	}
	if (problem != NULL) {
		fprintf(err, "grabber: %s, not '%s'\n", problem, arg);
		return -1;
	}
	return 0;
}

enum options_result options_parse(struct grabber_options *options, int argc, char **argv,
				  FILE *err)
{
	int option;

	*options = (struct grabber_options){
		.mux = MUX_EPOLL,
		.buffers = DEFAULT_BUFFERS,
		.ready_marker = DEFAULT_READY_MARKER,
	};
	optind = 0; /* glibc: 0 restarts scanning from scratch */
	opterr = 0; /* messages go to err, not to stderr */
	while ((option = getopt_long(argc, argv, "m:n:o:rf:s:b:h", long_options, NULL)) != -1) {
		if (option == 'h')
			return OPTIONS_HELP;
		if (option == '?' || option == ':') {
			fprintf(err, "grabber: unknown option or missing value: %s\n",
				argv[optind - 1]);
			option = 0;
		}
		if (apply_option(options, option, optarg, err) != 0)
			return OPTIONS_INVALID;
	}
	if (optind < argc) {
		options->devices = argv + optind;
		options->device_count = (size_t)(argc - optind);
	} else {
		options->devices = default_devices;
		options->device_count = 1;
	}
	if (options->raw && options->output_dir == NULL) {
		fprintf(err, "grabber: --raw needs --output DIR\n");
		return OPTIONS_INVALID;
	}
	return check_device_stems(options, err) == 0 ? OPTIONS_RUN : OPTIONS_INVALID;
}
