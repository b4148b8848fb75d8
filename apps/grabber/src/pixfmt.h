/* Pixel formats the grabber can turn into RGB24, and the conversion itself. */
#ifndef GRABBER_PIXFMT_H
#define GRABBER_PIXFMT_H

#include <stddef.h>
#include <stdint.h>

enum pixel_family {
	PIXEL_PACKED_RGB, /* one pixel = bytes_per_pixel bytes holding R, G, B */
	PIXEL_PACKED_YUV422, /* two pixels = Y0 and Y1 sharing one U and one V */
};

struct pixel_format {
	uint32_t fourcc;
	enum pixel_family family;
	uint8_t bytes_per_pixel;
	/* Packed RGB: byte offsets of R, G, B within a pixel.
	 * Packed YUV 4:2:2: byte offsets of Y0, U, V within a 4-byte
	 * macropixel; Y1 always sits two bytes after Y0. */
	uint8_t offset[3];
};

/* YCbCr to R'G'B' in 16.16 fixed point, for one encoding and range. */
struct yuv_coefficients {
	int32_t luma_offset;
	int32_t luma;
	int32_t red_from_v;
	int32_t green_from_u;
	int32_t green_from_v;
	int32_t blue_from_u;
};

enum yuv_encoding { YUV_BT601, YUV_BT709, YUV_BT2020 };

struct frame_layout {
	const struct pixel_format *format;
	uint32_t width;
	uint32_t height;
	uint32_t bytesperline;
	struct yuv_coefficients yuv; /* used by the YUV family only */
};

/* The format with this fourcc, or NULL when it cannot be converted. */
const struct pixel_format *pixel_format_find(uint32_t fourcc);

/* Space-separated fourccs of every convertible format, for messages. */
const char *pixel_format_list(void);

/* Writes the fourcc as printable text (4 characters + NUL). */
void fourcc_text(uint32_t fourcc, char text[5]);

/* Bytes one row of pixels occupies, without driver padding. */
size_t pixel_format_row_bytes(const struct pixel_format *format, uint32_t width);

void yuv_coefficients_init(struct yuv_coefficients *yuv, enum yuv_encoding encoding,
			   int full_range);

/* Fills layout; fails with EINVAL when the format is not convertible, a
 * dimension is zero or bytesperline is shorter than one row. */
int frame_layout_init(struct frame_layout *layout, uint32_t fourcc, uint32_t width,
		      uint32_t height, uint32_t bytesperline, enum yuv_encoding encoding,
		      int full_range);

/* Smallest buffer that holds a frame: padding after the last row may be
 * missing. */
size_t frame_layout_min_bytes(const struct frame_layout *layout);

/* Converts one frame into width * height * 3 bytes of RGB24 at rgb.
 * Fails with EINVAL when src_len is below frame_layout_min_bytes(). */
int frame_to_rgb24(const struct frame_layout *layout, const uint8_t *src, size_t src_len,
		   uint8_t *rgb);

#endif
