/* Command-line handling of the grabber. */
#include <linux/videodev2.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "options.h"

static char messages[4096];

/* Parses a NULL-terminated argument list; messages holds what it said. */
static enum options_result parse(struct grabber_options *options, char **args)
{
	static char *argv[32];
	int argc = 0;
	FILE *err = fmemopen(messages, sizeof(messages), "w");

	argv[argc++] = "grabber";
	while (*args != NULL)
		argv[argc++] = *args++;
	argv[argc] = NULL;
	enum options_result result = options_parse(options, argc, argv, err);

	fclose(err);
	return result;
}

#define PARSE(options, ...) parse(options, (char *[]){ __VA_ARGS__, NULL })

static void test_defaults(void)
{
	struct grabber_options o;

	CHECK(parse(&o, (char *[]){ NULL }) == OPTIONS_RUN);
	CHECK_EQ(o.device_count, 1);
	CHECK(strcmp(o.devices[0], "/dev/video0") == 0);
	CHECK_EQ(o.mux, MUX_EPOLL);
	CHECK_EQ(o.frames, 0);
	CHECK(o.output_dir == NULL && !o.raw);
	CHECK_EQ(o.fourcc, 0);
	CHECK(o.width == 0 && o.height == 0 && o.fps == 0);
	CHECK_EQ(o.buffers, DEFAULT_BUFFERS);
	CHECK(strcmp(o.ready_marker, "BOOTLAB READY") == 0);
}

static void test_every_option(void)
{
	struct grabber_options o;

	CHECK(PARSE(&o, "--mux", "select", "--frames", "1000", "--output", "/tmp/f", "--raw",
		    "--format", "UYVY", "--size", "320x180", "--fps", "60", "--buffers", "8",
		    "--ready-marker", "APP UP", "/dev/video2", "/dev/video3") == OPTIONS_RUN);
	CHECK_EQ(o.mux, MUX_SELECT);
	CHECK_EQ(o.frames, 1000);
	CHECK(strcmp(o.output_dir, "/tmp/f") == 0 && o.raw);
	CHECK_EQ(o.fourcc, V4L2_PIX_FMT_UYVY);
	CHECK(o.width == 320 && o.height == 180);
	CHECK_EQ(o.fps, 60);
	CHECK_EQ(o.buffers, 8);
	CHECK(strcmp(o.ready_marker, "APP UP") == 0);
	CHECK_EQ(o.device_count, 2);
	CHECK(strcmp(o.devices[1], "/dev/video3") == 0);

	CHECK(PARSE(&o, "-m", "poll", "-n", "5", "-o", "out", "-f", "RGB3", "-s", "2x2", "-b",
		    "2") == OPTIONS_RUN);
	CHECK_EQ(o.mux, MUX_POLL);
	CHECK_EQ(o.fourcc, V4L2_PIX_FMT_RGB24);
	CHECK_EQ(o.buffers, 2);
}

/* Devices may come before options, as with most GNU tools. */
static void test_order_and_short_fourcc(void)
{
	struct grabber_options o;

	CHECK(PARSE(&o, "/dev/video1", "--frames", "3", "--format", "Y16") == OPTIONS_RUN);
	CHECK_EQ(o.frames, 3);
	CHECK_EQ(o.fourcc, v4l2_fourcc('Y', '1', '6', ' '));
	CHECK(o.device_count == 1 && strcmp(o.devices[0], "/dev/video1") == 0);
}

static void test_help(void)
{
	struct grabber_options o;
	char text[8192];
	FILE *out = fmemopen(text, sizeof(text), "w");

	CHECK(PARSE(&o, "--frames", "2", "--help") == OPTIONS_HELP);
	CHECK(PARSE(&o, "-h") == OPTIONS_HELP);
	options_usage(out);
	fclose(out);
	CHECK(strstr(text, "--mux select|poll|epoll") != NULL);
	CHECK(strstr(text, "YUYV") != NULL);
}

/* Each mistake is refused with a message that names it. */
static void test_mistakes(void)
{
	static const struct {
		char *args[5]; /* NULL-terminated */
		const char *message;
	} cases[] = {
		{ { "--mux", "kqueue" }, "kqueue" },
		{ { "--frames", "-1" }, "--frames" },
		{ { "--frames", "12x" }, "--frames" },
		{ { "--frames", "" }, "--frames" },
		{ { "--size", "640x" }, "--size" },
		{ { "--size", "0x480" }, "--size" },
		{ { "--size", "640" }, "--size" },
		{ { "--size", "12345678901234567890x1" }, "--size" },
		{ { "--format", "ABCDE" }, "--format" },
		{ { "--format", "" }, "--format" },
		{ { "--buffers", "1" }, "--buffers" },
		{ { "--buffers", "33" }, "--buffers" },
		{ { "--fps", "0" }, "--fps" },
		{ { "--ready-marker", "two\nlines" }, "--ready-marker" },
		{ { "--ready-marker", "" }, "--ready-marker" },
		{ { "--raw" }, "--raw needs --output" },
		{ { "--bogus" }, "--bogus" },
		{ { "--frames" }, "--frames" },
		{ { "-o", "d", "/dev/video0", "/tmp/video0" }, "same name" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct grabber_options o;

		messages[0] = '\0';
		enum options_result result = parse(&o, (char **)cases[i].args);

		if (result != OPTIONS_INVALID || strstr(messages, cases[i].message) == NULL) {
			fprintf(stderr, "case %zu (%s): result %d, message '%s'\n", i,
				cases[i].args[0], result, messages);
			check_failures++;
		}
	}
}

static void test_device_stem(void)
{
	CHECK(strcmp(device_stem("/dev/video0"), "video0") == 0);
	CHECK(strcmp(device_stem("video7"), "video7") == 0);
	CHECK(strcmp(device_stem("/dev/v4l/by-id/usb-cam"), "usb-cam") == 0);
}

int main(void)
{
	test_defaults();
	test_every_option();
	test_order_and_short_fourcc();
	test_help();
	test_mistakes();
	test_device_stem();
	return check_summary("test_options");
}
