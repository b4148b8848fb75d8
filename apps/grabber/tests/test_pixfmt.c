/* Pixel format conversion: YUV to RGB against published vectors and an
 * independent floating-point model, byte orders, odd widths and padding. */
#include <errno.h>
#include <linux/videodev2.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pixfmt.h"

/* Converts one YUYV macropixel (both pixels Y) to RGB. */
static void yuyv_pixel(enum yuv_encoding encoding, int full_range, int y, int u, int v,
		       uint8_t rgb[3])
{
	struct frame_layout layout;
	uint8_t src[4] = { (uint8_t)y, (uint8_t)u, (uint8_t)y, (uint8_t)v }, out[6];

	CHECK(frame_layout_init(&layout, V4L2_PIX_FMT_YUYV, 2, 1, 4, encoding, full_range) == 0);
	CHECK(frame_to_rgb24(&layout, src, sizeof(src), out) == 0);
	CHECK(memcmp(out, out + 3, 3) == 0);
	memcpy(rgb, out, 3);
}

struct vector {
	enum yuv_encoding encoding;
	int full_range;
	int y, u, v;
	int r, g, b;
	int tolerance;
};

static const struct vector vectors[] = {
	/* BT.601 limited range: 100% and 75% colour bars as published for
	 * 8-bit video (SMPTE EG 1 / ITU-R BT.801). */
	{ YUV_BT601, 0, 81, 90, 240, 255, 0, 0, 2 },
	{ YUV_BT601, 0, 145, 54, 34, 0, 255, 0, 2 },
	{ YUV_BT601, 0, 41, 240, 110, 0, 0, 255, 2 },
	{ YUV_BT601, 0, 210, 16, 146, 255, 255, 0, 2 },
	{ YUV_BT601, 0, 180, 128, 128, 191, 191, 191, 2 },
	{ YUV_BT601, 0, 162, 44, 142, 191, 191, 0, 2 },
	{ YUV_BT601, 0, 131, 156, 44, 0, 191, 191, 2 },
	{ YUV_BT601, 0, 112, 72, 58, 0, 191, 0, 2 },
	{ YUV_BT601, 0, 84, 184, 198, 191, 0, 191, 2 },
	{ YUV_BT601, 0, 65, 100, 212, 191, 0, 0, 2 },
	{ YUV_BT601, 0, 35, 212, 114, 0, 0, 191, 2 },
	/* BT.709 limited range, 100% primaries. */
	{ YUV_BT709, 0, 63, 102, 240, 255, 0, 0, 2 },
	{ YUV_BT709, 0, 173, 42, 26, 0, 255, 0, 2 },
	{ YUV_BT709, 0, 32, 240, 118, 0, 0, 255, 2 },
	/* Black, white and grey are exact in both ranges. */
	{ YUV_BT601, 0, 16, 128, 128, 0, 0, 0, 0 },
	{ YUV_BT601, 0, 235, 128, 128, 255, 255, 255, 0 },
	{ YUV_BT601, 1, 0, 128, 128, 0, 0, 0, 0 },
	{ YUV_BT601, 1, 255, 128, 128, 255, 255, 255, 0 },
	{ YUV_BT601, 1, 128, 128, 128, 128, 128, 128, 0 },
	/* Codes outside the limited range clamp instead of wrapping. */
	{ YUV_BT601, 0, 0, 128, 128, 0, 0, 0, 0 },
	{ YUV_BT601, 0, 255, 255, 255, 255, 125, 255, 1 },
};

static void test_published_vectors(void)
{
	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		const struct vector *t = &vectors[i];
		uint8_t rgb[3];

		yuyv_pixel(t->encoding, t->full_range, t->y, t->u, t->v, rgb);
		if (abs(rgb[0] - t->r) > t->tolerance || abs(rgb[1] - t->g) > t->tolerance ||
		    abs(rgb[2] - t->b) > t->tolerance) {
			fprintf(stderr, "vector %zu: (%d,%d,%d) gave (%d,%d,%d), expected (%d,%d,%d)\n",
				i, t->y, t->u, t->v, rgb[0], rgb[1], rgb[2], t->r, t->g, t->b);
			check_failures++;
		}
	}
}

static int code(double value)
{
	long rounded = lround(value);

	return rounded < 0 ? 0 : rounded > 255 ? 255 : (int)rounded;
}

/* RGB -> YCbCr by the textbook forward equations in floating point, then
 * back through the grabber: the round trip must land within 2 codes (8-bit
 * YCbCr cannot hold every RGB value exactly). */
static void test_round_trip(void)
{
	static const struct {
		enum yuv_encoding encoding;
		double kr, kb;
	} encodings[] = { { YUV_BT601, 0.299, 0.114 },
			  { YUV_BT709, 0.2126, 0.0722 },
			  { YUV_BT2020, 0.2627, 0.0593 } };

	for (size_t e = 0; e < 3; e++) {
		for (int full_range = 0; full_range <= 1; full_range++) {
			double kr = encodings[e].kr, kb = encodings[e].kb;
			int worst = 0;

			for (int r = 0; r < 256; r += 15) {
				for (int g = 0; g < 256; g += 15) {
					for (int b = 0; b < 256; b += 15) {
						double y = kr * r + (1 - kr - kb) * g + kb * b;
						double pb = (b - y) / (2 * (1 - kb));
						double pr = (r - y) / (2 * (1 - kr));
						double ys = full_range ? y : 16 + y * 219 / 255;
						double cs = full_range ? 1.0 : 224.0 / 255;
						uint8_t rgb[3];

						yuyv_pixel(encodings[e].encoding, full_range,
							   code(ys), code(128 + pb * cs),
							   code(128 + pr * cs), rgb);
						int diff = abs(rgb[0] - r);

						if (abs(rgb[1] - g) > diff)
							diff = abs(rgb[1] - g);
						if (abs(rgb[2] - b) > diff)
							diff = abs(rgb[2] - b);
						if (diff > worst)
							worst = diff;
					}
				}
			}
			if (worst > 2)
				fprintf(stderr, "encoding %zu full %d: worst error %d\n", e, full_range,
					worst);
			CHECK(worst <= 2);
		}
	}
}

/* The four packed 4:2:2 orders carry the same pixels. */
static void test_yuv422_byte_orders(void)
{
	static const struct {
		uint32_t fourcc;
		uint8_t bytes[4];
	} orders[] = {
		{ V4L2_PIX_FMT_YUYV, { 81, 90, 145, 240 } },
		{ V4L2_PIX_FMT_UYVY, { 90, 81, 240, 145 } },
		{ V4L2_PIX_FMT_YVYU, { 81, 240, 145, 90 } },
		{ V4L2_PIX_FMT_VYUY, { 240, 81, 90, 145 } },
	};
	uint8_t reference[6];

	for (size_t i = 0; i < 4; i++) {
		struct frame_layout layout;
		uint8_t rgb[6];

		CHECK(frame_layout_init(&layout, orders[i].fourcc, 2, 1, 4, YUV_BT601, 0) == 0);
		CHECK(frame_to_rgb24(&layout, orders[i].bytes, 4, rgb) == 0);
		if (i == 0)
			memcpy(reference, rgb, 6);
		CHECK(memcmp(rgb, reference, 6) == 0);
	}
	/* Y0 = 81 with U 90 / V 240 is red; Y1 = 145 with the same chroma is
	 * brighter, and the two pixels really differ. */
	CHECK(reference[0] > 240 && reference[1] < 10);
	CHECK(memcmp(reference, reference + 3, 3) != 0);
}

/* Width 3: the last macropixel's second luma byte belongs to no pixel. */
static void test_odd_width(void)
{
	struct frame_layout layout;
	const uint8_t src[8] = { 16, 128, 235, 128, 235, 128, 77, 128 };
	uint8_t rgb[9 + 3];

	memset(rgb, 0xee, sizeof(rgb));
	CHECK(frame_layout_init(&layout, V4L2_PIX_FMT_YUYV, 3, 1, 8, YUV_BT601, 0) == 0);
	CHECK_EQ(pixel_format_row_bytes(layout.format, 3), 8);
	CHECK(frame_to_rgb24(&layout, src, sizeof(src), rgb) == 0);
	const uint8_t black_white_white[9] = { 0, 0, 0, 255, 255, 255, 255, 255, 255 };

	CHECK(memcmp(rgb, black_white_white, 9) == 0);
	CHECK(rgb[9] == 0xee); /* nothing written past width * 3 */
	/* An odd-width RGB24 row is exact too. */
	const uint8_t rgb24[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };

	CHECK(frame_layout_init(&layout, V4L2_PIX_FMT_RGB24, 3, 1, 9, YUV_BT601, 0) == 0);
	CHECK(frame_to_rgb24(&layout, rgb24, sizeof(rgb24), rgb) == 0);
	CHECK(memcmp(rgb, rgb24, 9) == 0);
}

/* Rows start every bytesperline bytes; the padding never shows, and the
 * last row may end without its padding. */
static void test_bytesperline_padding(void)
{
	struct frame_layout layout;
	const uint8_t src[] = {
		10, 20, 30, 40, 50, 60, 0xaa, 0xaa, /* row 0 + 2 bytes of padding */
		70, 80, 90, 100, 110, 120, /* row 1, padding cut off */
	};
	const uint8_t expected[] = { 30, 20, 10, 60, 50, 40, 90, 80, 70, 120, 110, 100 };
	uint8_t rgb[12];

	CHECK(frame_layout_init(&layout, V4L2_PIX_FMT_BGR24, 2, 2, 8, YUV_BT601, 0) == 0);
	CHECK_EQ(frame_layout_min_bytes(&layout), 14);
	CHECK(frame_to_rgb24(&layout, src, sizeof(src), rgb) == 0);
	CHECK(memcmp(rgb, expected, sizeof(expected)) == 0);
	errno = 0;
	CHECK(frame_to_rgb24(&layout, src, sizeof(src) - 1, rgb) == -1 && errno == EINVAL);
}

/* Each 32-bit order and grey land R, G, B in the right place. */
static void test_packed_rgb_orders(void)
{
	static const struct {
		uint32_t fourcc;
		uint8_t pixel[4];
	} cases[] = {
		{ V4L2_PIX_FMT_RGB24, { 1, 2, 3 } },	     { V4L2_PIX_FMT_BGR24, { 3, 2, 1 } },
		{ V4L2_PIX_FMT_RGBX32, { 1, 2, 3, 0 } },    { V4L2_PIX_FMT_RGBA32, { 1, 2, 3, 9 } },
		{ V4L2_PIX_FMT_XBGR32, { 3, 2, 1, 0 } },    { V4L2_PIX_FMT_ABGR32, { 3, 2, 1, 9 } },
		{ V4L2_PIX_FMT_XRGB32, { 0, 1, 2, 3 } },    { V4L2_PIX_FMT_ARGB32, { 9, 1, 2, 3 } },
		{ V4L2_PIX_FMT_BGRX32, { 0, 3, 2, 1 } },    { V4L2_PIX_FMT_BGRA32, { 9, 3, 2, 1 } },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct frame_layout layout;
		const struct pixel_format *format = pixel_format_find(cases[i].fourcc);
		uint8_t rgb[3];

		CHECK(format != NULL);
		CHECK(frame_layout_init(&layout, cases[i].fourcc, 1, 1, format->bytes_per_pixel,
					YUV_BT601, 0) == 0);
		CHECK(frame_to_rgb24(&layout, cases[i].pixel, format->bytes_per_pixel, rgb) == 0);
		if (rgb[0] != 1 || rgb[1] != 2 || rgb[2] != 3) {
			char text[5];

			fourcc_text(cases[i].fourcc, text);
			fprintf(stderr, "%s gave %d,%d,%d\n", text, rgb[0], rgb[1], rgb[2]);
			check_failures++;
		}
	}
	struct frame_layout layout;
	const uint8_t grey[2] = { 7, 200 };
	uint8_t rgb[6];

	CHECK(frame_layout_init(&layout, V4L2_PIX_FMT_GREY, 2, 1, 2, YUV_BT601, 0) == 0);
	CHECK(frame_to_rgb24(&layout, grey, 2, rgb) == 0);
	CHECK(rgb[0] == 7 && rgb[1] == 7 && rgb[2] == 7 && rgb[3] == 200 && rgb[5] == 200);
}

static void test_unusable_layouts(void)
{
	struct frame_layout layout;

	errno = 0;
	CHECK(frame_layout_init(&layout, V4L2_PIX_FMT_NV12, 4, 4, 4, YUV_BT601, 0) == -1 &&
	      errno == EINVAL);
	CHECK(frame_layout_init(&layout, V4L2_PIX_FMT_YUYV, 4, 4, 7, YUV_BT601, 0) == -1);
	CHECK(frame_layout_init(&layout, V4L2_PIX_FMT_YUYV, 0, 4, 8, YUV_BT601, 0) == -1);
	CHECK(frame_layout_init(&layout, V4L2_PIX_FMT_YUYV, 4, 0, 8, YUV_BT601, 0) == -1);
	CHECK(pixel_format_find(V4L2_PIX_FMT_MJPEG) == NULL);
}

static void test_names(void)
{
	char text[5];

	fourcc_text(V4L2_PIX_FMT_YUYV, text);
	CHECK(strcmp(text, "YUYV") == 0);
	fourcc_text(0x01020359, text); /* 'Y', 0x03, 0x02, 0x01 */
	CHECK(strcmp(text, "Y???") == 0);
	CHECK(strstr(pixel_format_list(), "YUYV") != NULL);
	CHECK(strstr(pixel_format_list(), "BGR3") != NULL);
	CHECK(strstr(pixel_format_list(), "GREY") != NULL);
	CHECK(pixel_format_list()[strlen(pixel_format_list()) - 1] != ' ');
}

int main(void)
{
	test_published_vectors();
	test_round_trip();
	test_yuv422_byte_orders();
	test_odd_width();
	test_bytesperline_padding();
	test_packed_rgb_orders();
	test_unusable_layouts();
	test_names();
	return check_summary("test_pixfmt");
}
