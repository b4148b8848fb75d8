/* PPM header writing and parsing. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "ppm.h"

static int parses(const char *text, struct ppm_info *info)
{
	return ppm_parse_header((const uint8_t *)text, strlen(text), info) == 0;
}

static void test_header(void)
{
	char header[PPM_HEADER_MAX];
	struct ppm_info info;

	CHECK_EQ(ppm_header(header, 640, 480), 15);
	CHECK(memcmp(header, "P6\n640 480\n255\n", 15) == 0);
	CHECK(ppm_parse_header((const uint8_t *)header, 15, &info) == 0);
	CHECK_EQ(info.width, 640);
	CHECK_EQ(info.height, 480);
	CHECK_EQ(info.maxval, 255);
	CHECK_EQ(info.header_bytes, 15);
	/* The longest header still fits. */
	CHECK(ppm_header(header, 4294967295u, 4294967295u) < PPM_HEADER_MAX);
}

static void test_parse(void)
{
	struct ppm_info info;

	CHECK(parses("P6 # made by hand\n3\t2 # size\n255\n\x01", &info));
	CHECK_EQ(info.width, 3);
	CHECK_EQ(info.height, 2);
	CHECK_EQ(info.header_bytes, 33);
	CHECK(parses("P6\n1 1\n15 ", &info) && info.maxval == 15);

	errno = 0;
	CHECK(!parses("P5\n1 1\n255\n", &info) && errno == EINVAL);
	CHECK(!parses("P6\n1 1\n256\n", &info));
	CHECK(!parses("P6\n1 1\n0\n", &info));
	CHECK(!parses("P6\n1 1\n255", &info)); /* no byte after maxval */
	CHECK(!parses("P6\n1 1\n255x", &info));
	CHECK(!parses("P6\n1\n", &info));
	CHECK(!parses("P6\n-1 1\n255\n", &info));
	CHECK(!parses("P6\n99999999999 1\n255\n", &info));
	CHECK(!parses("P", &info));
	CHECK(!parses("", &info));
}

int main(void)
{
	test_header();
	test_parse();
	return check_summary("test_ppm");
}
