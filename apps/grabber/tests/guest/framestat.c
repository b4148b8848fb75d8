/* framestat: one summary line per frame file, small enough to print on a
 * serial console, so a host-side checker can judge frames captured inside
 * the reference device without copying them out. For a PPM:
 *   FRAME name=N bytes=B ppm=WxH maxval=M header=H complete=0|1 fnv1a=X
 *         colours=C mean=R,G,B luma_hist=n0,...,n7 bands=rrggbb,...
 * bands are the mean colours of eight equal vertical bands of the middle
 * row (vivid's default pattern is eight colour bars). Other files get
 *   FRAME name=N bytes=B kind=raw fnv1a=X
 * Exit status 1 when a file cannot be read. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ppm.h"

#define BAND_COUNT 8
#define LUMA_BUCKETS 8

static uint64_t fnv1a(const uint8_t *data, size_t len)
{
	uint64_t hash = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		hash = (hash ^ data[i]) * 0x100000001b3ull;
	return hash;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *file = fopen(path, "rb");
	struct stat st;
	uint8_t *data = NULL;

	if (file == NULL)
		return NULL;
	if (fstat(fileno(file), &st) == 0 && (data = malloc((size_t)st.st_size + 1)) != NULL) {
		*len = fread(data, 1, (size_t)st.st_size, file);
		if (*len != (size_t)st.st_size) {
			free(data);
			data = NULL;
			errno = EIO;
		}
	}
	fclose(file);
	return data;
}

static unsigned long distinct_colours(const uint8_t *rgb, size_t pixels)
{
	uint8_t *seen = calloc(1u << 21, 1); /* one bit per 24-bit colour */
	unsigned long count = 0;

	if (seen == NULL)
		return 0;
	for (size_t i = 0; i < pixels; i++) {
		uint32_t colour = (uint32_t)rgb[i * 3] << 16 | (uint32_t)rgb[i * 3 + 1] << 8 |
				  rgb[i * 3 + 2];

		if (!(seen[colour >> 3] & (1u << (colour & 7)))) {
			seen[colour >> 3] |= (uint8_t)(1u << (colour & 7));
			count++;
		}
	}
	free(seen);
	return count;
}

static void print_ppm_summary(const struct ppm_info *info, const uint8_t *rgb, size_t pixels)
{
	uint64_t sum[3] = { 0, 0, 0 };
	unsigned long hist[LUMA_BUCKETS] = { 0 };

	for (size_t i = 0; i < pixels; i++) {
		const uint8_t *p = rgb + i * 3;
		/* BT.601 luma weights in 1/256ths. */
		unsigned luma = (77u * p[0] + 150u * p[1] + 29u * p[2]) >> 8;

		for (int c = 0; c < 3; c++)
			sum[c] += p[c];
		hist[luma * LUMA_BUCKETS / 256]++;
	}
	printf(" colours=%lu mean=%llu,%llu,%llu luma_hist=", distinct_colours(rgb, pixels),
	       (unsigned long long)(sum[0] / pixels), (unsigned long long)(sum[1] / pixels),
	       (unsigned long long)(sum[2] / pixels));
	for (int b = 0; b < LUMA_BUCKETS; b++)
		printf("%s%lu", b ? "," : "", hist[b]);
	printf(" bands=");

	const uint8_t *row = rgb + (size_t)(info->height / 2) * info->width * 3;

	for (uint32_t band = 0; band < BAND_COUNT; band++) {
		/* The middle half of each band, away from the bars' edges. */
		uint32_t start = (uint32_t)((uint64_t)info->width * (4 * band + 1) / (4 * BAND_COUNT));
		uint32_t end = (uint32_t)((uint64_t)info->width * (4 * band + 3) / (4 * BAND_COUNT));
		uint64_t band_sum[3] = { 0, 0, 0 };

		if (end <= start)
			end = start + 1;
		for (uint32_t x = start; x < end; x++)
			for (int c = 0; c < 3; c++)
				band_sum[c] += row[(size_t)x * 3 + c];
		printf("%s%02x%02x%02x", band ? "," : "", (unsigned)(band_sum[0] / (end - start)),
		       (unsigned)(band_sum[1] / (end - start)), (unsigned)(band_sum[2] / (end - start)));
	}
}

static int summarise(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *name = slash ? slash + 1 : path;
	size_t len;
	uint8_t *data = read_file(path, &len);
	struct ppm_info info;

	if (data == NULL) {
		printf("FRAME name=%s error=%s\n", name, strerror(errno));
		return -1;
	}
	printf("FRAME name=%s bytes=%zu", name, len);
	if (ppm_parse_header(data, len, &info) == 0) {
		size_t pixels = (size_t)info.width * info.height;
		int complete = len == info.header_bytes + pixels * 3;

		printf(" ppm=%ux%u maxval=%u header=%zu complete=%d fnv1a=%016llx", info.width,
		       info.height, info.maxval, info.header_bytes, complete,
		       (unsigned long long)fnv1a(data, len));
		if (complete && pixels > 0)
			print_ppm_summary(&info, data + info.header_bytes, pixels);
	} else {
		printf(" kind=raw fnv1a=%016llx", (unsigned long long)fnv1a(data, len));
	}
	printf("\n");
	free(data);
	return 0;
}

int main(int argc, char **argv)
{
	int status = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: framestat FILE...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++)
		if (summarise(argv[i]) != 0)
			status = 1;
	return status;
}
