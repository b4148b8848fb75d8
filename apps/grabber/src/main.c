/* grabber: V4L2 frame grabber for boot-time measurement. */
#include <stdio.h>

#include "capture.h"
#include "options.h"

int main(int argc, char **argv)
{
	struct grabber_options options;

	switch (options_parse(&options, argc, argv, stderr)) {
	case OPTIONS_HELP:
		options_usage(stdout);
		return 0;
	case OPTIONS_INVALID:
		return 2;
	case OPTIONS_RUN:
		break;
	}
	return capture_run(&options);
}
