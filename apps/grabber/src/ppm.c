#include "ppm.h"

#include <errno.h>
#include <stdio.h>

size_t ppm_header(char header[PPM_HEADER_MAX], uint32_t width, uint32_t height)
{
	return (size_t)snprintf(header, PPM_HEADER_MAX, "P6\n%u %u\n255\n", width, height);
}

static int is_space(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Reads one header number after whitespace and comments; pos advances. */
static int parse_number(const uint8_t *data, size_t len, size_t *pos, uint32_t *value)
{
	size_t i = *pos;
	uint64_t n = 0;
	size_t digits = 0;

	while (i < len && (is_space(data[i]) || data[i] == '#')) {
		if (data[i] == '#')
			while (i < len && data[i] != '\n')
				i++;
		else
			i++;
	}
	for (; i < len && data[i] >= '0' && data[i] <= '9'; i++, digits++) {
		n = n * 10 + (uint64_t)(data[i] - '0');
		if (n > UINT32_MAX)
			return -1;
	}
	if (digits == 0)
		return -1;
	*value = (uint32_t)n;
	*pos = i;
	return 0;
}

int ppm_parse_header(const uint8_t *data, size_t len, struct ppm_info *info)
{
	size_t pos = 2;

	if (len < 2 || data[0] != 'P' || data[1] != '6' ||
	    parse_number(data, len, &pos, &info->width) ||
	    parse_number(data, len, &pos, &info->height) ||
	    parse_number(data, len, &pos, &info->maxval) ||
	    info->maxval == 0 || info->maxval > 255 ||
	    /* exactly one whitespace byte separates maxval from the pixels */
	    pos >= len || !is_space(data[pos])) {
		errno = EINVAL;
		return -1;
	}
	info->header_bytes = pos + 1;
	return 0;
}
