/* Binary PPM (P6, maxval 255): the header the grabber writes and a parser
 * for it, shared by the tests and the guest-side frame summary tool. */
#ifndef GRABBER_PPM_H
#define GRABBER_PPM_H

#include <stddef.h>
#include <stdint.h>

/* Longest header ppm_header() writes: "P6\n" + two 10-digit numbers. */
#define PPM_HEADER_MAX 32

struct ppm_info {
	uint32_t width;
	uint32_t height;
	uint32_t maxval;
	size_t header_bytes; /* offset of the first pixel byte */
};

/* Writes "P6\n<width> <height>\n255\n" into header; returns its length. */
size_t ppm_header(char header[PPM_HEADER_MAX], uint32_t width, uint32_t height);

/* Parses a P6 header (comments allowed); fails with EINVAL on anything
 * else, including a maxval other than 1..255. */
int ppm_parse_header(const uint8_t *data, size_t len, struct ppm_info *info);

#endif
