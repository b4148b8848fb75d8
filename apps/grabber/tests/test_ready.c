/* The ready line: its text, and that it reaches stdout and the kernel log. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "ready.h"

static void test_format(void)
{
	char line[READY_LINE_MAX];
	struct ready_event event = {
		.device = "/dev/video0",
		.sequence = 7,
		.boot = { 1, 234567891 },
		.mono = { 12, 5000 },
	};
	size_t len = ready_line_format(line, "BOOTLAB READY", &event);

	CHECK(strcmp(line, "BOOTLAB READY first-frame device=/dev/video0 seq=7 t_boot=1.234567 "
			   "t_mono=12.000005\n") == 0);
	CHECK_EQ(len, strlen(line));

	event.has_frame_time = 1;
	event.frame = (struct timespec){ 0, 999999999 };
	ready_line_format(line, "APP", &event);
	CHECK(strstr(line, "APP first-frame ") == line);
	CHECK(strstr(line, " t_frame=0.999999\n") != NULL);
}

/* An absurdly long device name is cut, but the line still ends in one
 * newline and fits the buffer. */
static void test_truncation(void)
{
	char line[READY_LINE_MAX], device[2 * READY_LINE_MAX];
	struct ready_event event = { .device = device, .has_frame_time = 1 };

	memset(device, 'd', sizeof(device) - 1);
	device[sizeof(device) - 1] = '\0';
	size_t len = ready_line_format(line, "M", &event);

	CHECK_EQ(len, READY_LINE_MAX - 1);
	CHECK_EQ(strlen(line), len);
	CHECK(line[len - 1] == '\n');
}

static size_t read_all(const char *path, char *buffer, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t got = read(fd, buffer, size - 1);

	close(fd);
	buffer[got > 0 ? got : 0] = '\0';
	return got > 0 ? (size_t)got : 0;
}

static void test_emit(void)
{
	char out_path[] = "/tmp/test_ready_out.XXXXXX", kmsg_path[] = "/tmp/test_ready_kmsg.XXXXXX";
	int out = mkstemp(out_path), kmsg = mkstemp(kmsg_path);
	int saved_stdout = dup(STDOUT_FILENO);
	const char line[] = "BOOTLAB READY first-frame device=x\n";
	char text[256];

	close(kmsg);
	fflush(stdout);
	dup2(out, STDOUT_FILENO);
	ready_line_emit(line, strlen(line), kmsg_path);
	/* No kernel log to write to is not an error. */
	ready_line_emit(line, strlen(line), "/nonexistent/kmsg");
	dup2(saved_stdout, STDOUT_FILENO);
	close(saved_stdout);
	close(out);

	read_all(out_path, text, sizeof(text));
	CHECK(strncmp(text, line, strlen(line)) == 0);
	CHECK_EQ(strlen(text), 2 * strlen(line));
	read_all(kmsg_path, text, sizeof(text));
	CHECK(strcmp(text, line) == 0);
	unlink(out_path);
	unlink(kmsg_path);
}

int main(void)
{
	test_format();
	test_truncation();
	test_emit();
	return check_summary("test_ready");
}
