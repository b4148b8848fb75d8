#include "pixfmt.h"

#include <errno.h>
#include <linux/videodev2.h>
#include <math.h>
#include <string.h>

static const struct pixel_format formats[] = {
	{ V4L2_PIX_FMT_YUYV, PIXEL_PACKED_YUV422, 2, { 0, 1, 3 } },
	{ V4L2_PIX_FMT_UYVY, PIXEL_PACKED_YUV422, 2, { 1, 0, 2 } },
	{ V4L2_PIX_FMT_YVYU, PIXEL_PACKED_YUV422, 2, { 0, 3, 1 } },
	{ V4L2_PIX_FMT_VYUY, PIXEL_PACKED_YUV422, 2, { 1, 2, 0 } },
	{ V4L2_PIX_FMT_RGB24, PIXEL_PACKED_RGB, 3, { 0, 1, 2 } },
	{ V4L2_PIX_FMT_BGR24, PIXEL_PACKED_RGB, 3, { 2, 1, 0 } },
	{ V4L2_PIX_FMT_RGBX32, PIXEL_PACKED_RGB, 4, { 0, 1, 2 } },
	{ V4L2_PIX_FMT_RGBA32, PIXEL_PACKED_RGB, 4, { 0, 1, 2 } },
	{ V4L2_PIX_FMT_XBGR32, PIXEL_PACKED_RGB, 4, { 2, 1, 0 } },
	{ V4L2_PIX_FMT_ABGR32, PIXEL_PACKED_RGB, 4, { 2, 1, 0 } },
	{ V4L2_PIX_FMT_XRGB32, PIXEL_PACKED_RGB, 4, { 1, 2, 3 } },
	{ V4L2_PIX_FMT_ARGB32, PIXEL_PACKED_RGB, 4, { 1, 2, 3 } },
	{ V4L2_PIX_FMT_BGRX32, PIXEL_PACKED_RGB, 4, { 3, 2, 1 } },
	{ V4L2_PIX_FMT_BGRA32, PIXEL_PACKED_RGB, 4, { 3, 2, 1 } },
	{ V4L2_PIX_FMT_GREY, PIXEL_PACKED_RGB, 1, { 0, 0, 0 } },
};

#define FORMAT_COUNT (sizeof(formats) / sizeof(formats[0]))

const struct pixel_format *pixel_format_find(uint32_t fourcc)
{
	for (size_t i = 0; i < FORMAT_COUNT; i++)
		if (formats[i].fourcc == fourcc)
			return &formats[i];
	return NULL;
}

const char *pixel_format_list(void)
{
	static char list[FORMAT_COUNT * 5];

	if (list[0] == '\0') {
		for (size_t i = 0; i < FORMAT_COUNT; i++) {
			fourcc_text(formats[i].fourcc, &list[i * 5]);
			list[i * 5 + 4] = ' ';
		}
		list[sizeof(list) - 1] = '\0';
	}
	return list;
}

void fourcc_text(uint32_t fourcc, char text[5])
{
	for (int i = 0; i < 4; i++) {
		unsigned char c = (fourcc >> (8 * i)) & 0xff;
		text[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	text[4] = '\0';
}

size_t pixel_format_row_bytes(const struct pixel_format *format, uint32_t width)
{
	if (format->family == PIXEL_PACKED_YUV422)
		return ((size_t)width + 1) / 2 * 4;
	return (size_t)width * format->bytes_per_pixel;
}

static int32_t fixed(double value)
{
	return (int32_t)lround(value * 65536.0);
}

/* Derived from the encoding's luma weights Kr and Kb, so every encoding
 * goes through the same arithmetic. */
void yuv_coefficients_init(struct yuv_coefficients *yuv, enum yuv_encoding encoding,
			   int full_range)
{
	double kr = 0.299, kb = 0.114;

	if (encoding == YUV_BT709) {
		kr = 0.2126;
		kb = 0.0722;
	} else if (encoding == YUV_BT2020) {
		kr = 0.2627;
		kb = 0.0593;
	}
	double kg = 1.0 - kr - kb;
	/* Limited range spans 219 codes of luma and 224 of chroma. */
	double luma_scale = full_range ? 1.0 : 255.0 / 219.0;
	double chroma_scale = full_range ? 1.0 : 255.0 / 224.0;

	yuv->luma_offset = full_range ? 0 : 16;
	yuv->luma = fixed(luma_scale);
	yuv->red_from_v = fixed(chroma_scale * 2.0 * (1.0 - kr));
	yuv->green_from_u = fixed(chroma_scale * 2.0 * kb * (1.0 - kb) / kg);
	yuv->green_from_v = fixed(chroma_scale * 2.0 * kr * (1.0 - kr) / kg);
	yuv->blue_from_u = fixed(chroma_scale * 2.0 * (1.0 - kb));
}

int frame_layout_init(struct frame_layout *layout, uint32_t fourcc, uint32_t width,
		      uint32_t height, uint32_t bytesperline, enum yuv_encoding encoding,
		      int full_range)
{
	const struct pixel_format *format = pixel_format_find(fourcc);

	if (format == NULL || width == 0 || height == 0 ||
	    bytesperline < pixel_format_row_bytes(format, width)) {
		errno = EINVAL;
		return -1;
	}
	layout->format = format;
	layout->width = width;
	layout->height = height;
	layout->bytesperline = bytesperline;
	yuv_coefficients_init(&layout->yuv, encoding, full_range);
	return 0;
}

size_t frame_layout_min_bytes(const struct frame_layout *layout)
{
	return (size_t)layout->bytesperline * (layout->height - 1) +
	       pixel_format_row_bytes(layout->format, layout->width);
}

/* 16.16 fixed point to a byte; negative values are tested before the
 * shift so that no negative number is shifted. */
static uint8_t to_byte(int32_t value)
{
	if (value <= 0)
		return 0;
	value >>= 16;
	return value > 255 ? 255 : (uint8_t)value;
}

static void yuv_to_rgb(const struct yuv_coefficients *yuv, int y, int u, int v, uint8_t *rgb)
{
	int32_t luma = yuv->luma * (y - yuv->luma_offset) + (1 << 15);
	int32_t du = u - 128, dv = v - 128;

	rgb[0] = to_byte(luma + yuv->red_from_v * dv);
	rgb[1] = to_byte(luma - yuv->green_from_u * du - yuv->green_from_v * dv);
	rgb[2] = to_byte(luma + yuv->blue_from_u * du);
}

static void yuv422_row_to_rgb24(const struct frame_layout *layout, const uint8_t *row,
				uint8_t *rgb)
{
	const uint8_t *off = layout->format->offset;

	for (uint32_t x = 0; x < layout->width; x += 2) {
		const uint8_t *macropixel = row + (size_t)x * 2;
		int u = macropixel[off[1]], v = macropixel[off[2]];

		yuv_to_rgb(&layout->yuv, macropixel[off[0]], u, v, rgb + (size_t)x * 3);
		if (x + 1 < layout->width)
			yuv_to_rgb(&layout->yuv, macropixel[off[0] + 2], u, v,
				   rgb + (size_t)(x + 1) * 3);
	}
}

static void packed_rgb_row_to_rgb24(const struct frame_layout *layout, const uint8_t *row,
				    uint8_t *rgb)
{
	const struct pixel_format *format = layout->format;

	for (uint32_t x = 0; x < layout->width; x++) {
		const uint8_t *pixel = row + (size_t)x * format->bytes_per_pixel;

		for (int c = 0; c < 3; c++)
			rgb[(size_t)x * 3 + c] = pixel[format->offset[c]];
	}
}

int frame_to_rgb24(const struct frame_layout *layout, const uint8_t *src, size_t src_len,
		   uint8_t *rgb)
{
	if (src_len < frame_layout_min_bytes(layout)) {
		errno = EINVAL;
		return -1;
	}
	for (uint32_t y = 0; y < layout->height; y++) {
		const uint8_t *row = src + (size_t)y * layout->bytesperline;
		uint8_t *out = rgb + (size_t)y * layout->width * 3;

		if (layout->format->family == PIXEL_PACKED_YUV422)
			yuv422_row_to_rgb24(layout, row, out);
		else
			packed_rgb_row_to_rgb24(layout, row, out);
	}
	return 0;
}
