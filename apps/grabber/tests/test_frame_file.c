/* Frames are written whole under their final name, or not at all. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "frame_file.h"

static char dir[] = "/tmp/test_frame_file.XXXXXX";

static long file_size(const char *name)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Files in dir, hidden temporary ones included. */
static int entries(void)
{
	DIR *d = opendir(dir);
	int count = 0;

	for (struct dirent *e; (e = readdir(d)) != NULL;)
		count += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return count;
}

static void test_write(void)
{
	static char pixels[100000];
	struct iovec parts[2] = { { "P6\n1 1\n255\n", 11 }, { pixels, sizeof(pixels) } };
	char path[256], content[16];

	CHECK(frame_file_write(dir, "a.ppm", parts, 2) == 0);
	CHECK_EQ(file_size("a.ppm"), 11 + sizeof(pixels));
	CHECK_EQ(entries(), 1);
	snprintf(path, sizeof(path), "%s/a.ppm", dir);
	FILE *f = fopen(path, "rb");

	CHECK(fread(content, 1, 11, f) == 11 && memcmp(content, "P6\n1 1\n255\n", 11) == 0);
	fclose(f);
}

/* A write that fails half way (here: the file size limit, which fails
 * like a full disk does) leaves the earlier frame and no new file. */
static void test_failed_write_leaves_nothing(void)
{
	static char pixels[200000];
	struct iovec part = { pixels, sizeof(pixels) };
	struct rlimit saved, limit;

	getrlimit(RLIMIT_FSIZE, &saved);
	limit = saved;
	limit.rlim_cur = 50000;
	signal(SIGXFSZ, SIG_IGN);
	CHECK(setrlimit(RLIMIT_FSIZE, &limit) == 0);
	errno = 0;
	int result = frame_file_write(dir, "b.ppm", &part, 1);
	int saved_errno = errno;

	setrlimit(RLIMIT_FSIZE, &saved);
	CHECK(result == -1);
	CHECK_EQ(saved_errno, EFBIG);
	CHECK_EQ(file_size("b.ppm"), -1);
	CHECK_EQ(file_size(".b.ppm.tmp"), -1);
	CHECK_EQ(file_size("a.ppm"), 11 + 100000);
	CHECK_EQ(entries(), 1);
}

/* A frame that cannot be written does not touch an older file of its name. */
static void test_failed_replace_keeps_old_file(void)
{
	static char pixels[200000];
	struct iovec small = { "old", 3 }, big = { pixels, sizeof(pixels) };
	struct rlimit saved, limit;

	CHECK(frame_file_write(dir, "c.ppm", &small, 1) == 0);
	getrlimit(RLIMIT_FSIZE, &saved);
	limit = saved;
	limit.rlim_cur = 1000;
	CHECK(setrlimit(RLIMIT_FSIZE, &limit) == 0);
	CHECK(frame_file_write(dir, "c.ppm", &big, 1) == -1);
	setrlimit(RLIMIT_FSIZE, &saved);
	CHECK_EQ(file_size("c.ppm"), 3);
}

static void test_bad_arguments(void)
{
	struct iovec part = { "x", 1 }, many[FRAME_FILE_MAX_PARTS + 1];

	for (int i = 0; i <= FRAME_FILE_MAX_PARTS; i++)
		many[i] = part;
	errno = 0;
	CHECK(frame_file_write("/nonexistent/dir", "d.ppm", &part, 1) == -1 && errno == ENOENT);
	errno = 0;
	CHECK(frame_file_write(dir, "d.ppm", &part, 0) == -1 && errno == EINVAL);
	CHECK(frame_file_write(dir, "d.ppm", many, FRAME_FILE_MAX_PARTS + 1) == -1);
	CHECK(frame_file_write(dir, "d.ppm", many, FRAME_FILE_MAX_PARTS) == 0);
	CHECK_EQ(file_size("d.ppm"), FRAME_FILE_MAX_PARTS);
}

static void remove_dir(void)
{
	const char *names[] = { "a.ppm", "b.ppm", "c.ppm", "d.ppm", ".b.ppm.tmp", ".c.ppm.tmp" };
	char path[256];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

int main(void)
{
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_write();
	test_failed_write_leaves_nothing();
	test_failed_replace_keeps_old_file();
	test_bad_arguments();
	CHECK_EQ(entries(), 3);
	remove_dir();
	return check_summary("test_frame_file");
}
