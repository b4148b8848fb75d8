#include "device.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

/* Room for the fourccs a device offers, for messages. */
#define OFFERED_LIST_MAX 256

static int xioctl(int fd, unsigned long request, void *arg)
{
	int result;

	do
		result = ioctl(fd, request, arg);
	while (result < 0 && errno == EINTR);
	return result;
}

/* Space-separated fourccs from VIDIOC_ENUM_FMT; returns the first one the
 * grabber can convert, or 0. */
static uint32_t offered_formats(int fd, char list[OFFERED_LIST_MAX])
{
	struct v4l2_fmtdesc desc = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	uint32_t first_convertible = 0;
	size_t len = 0;

	list[0] = '\0';
	for (; xioctl(fd, VIDIOC_ENUM_FMT, &desc) == 0; desc.index++) {
		if (first_convertible == 0 && pixel_format_find(desc.pixelformat))
			first_convertible = desc.pixelformat;
		if (len + 6 <= OFFERED_LIST_MAX) {
			fourcc_text(desc.pixelformat, list + len);
			len += 4;
			list[len++] = ' ';
			list[len] = '\0';
		}
	}
	return first_convertible;
}

static int check_capabilities(const struct capture_device *device)
{
	struct v4l2_capability cap;

	if (xioctl(device->fd, VIDIOC_QUERYCAP, &cap) != 0) {
		if (errno == ENOTTY)
			fprintf(stderr, "grabber: %s: not a V4L2 device\n", device->path);
		else
			fprintf(stderr, "grabber: %s: VIDIOC_QUERYCAP: %s\n", device->path,
				strerror(errno));
		return -1;
	}
	uint32_t caps = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps
								  : cap.capabilities;

	if (!(caps & V4L2_CAP_VIDEO_CAPTURE)) {
		fprintf(stderr, "grabber: %s: not a single-planar video capture device%s\n",
			device->path,
			(caps & V4L2_CAP_VIDEO_CAPTURE_MPLANE) ? " (multi-planar is not supported)"
								: "");
		return -1;
	}
	if (!(caps & V4L2_CAP_STREAMING)) {
		fprintf(stderr, "grabber: %s: does not support streaming I/O\n", device->path);
		return -1;
	}
	return 0;
}

static enum yuv_encoding encoding_of(const struct v4l2_pix_format *pix)
{
	unsigned encoding = pix->ycbcr_enc;

	if (encoding == V4L2_YCBCR_ENC_DEFAULT)
		encoding = V4L2_MAP_YCBCR_ENC_DEFAULT(pix->colorspace);
	switch (encoding) {
	case V4L2_YCBCR_ENC_709:
	case V4L2_YCBCR_ENC_XV709:
		return YUV_BT709;
	case V4L2_YCBCR_ENC_BT2020:
	case V4L2_YCBCR_ENC_BT2020_CONST_LUM:
		return YUV_BT2020;
	default:
		return YUV_BT601;
	}
}

static int is_full_range(const struct v4l2_pix_format *pix, const struct pixel_format *format)
{
	unsigned quantization = pix->quantization;

	if (quantization == V4L2_QUANTIZATION_DEFAULT)
		quantization = V4L2_MAP_QUANTIZATION_DEFAULT(
			format->family == PIXEL_PACKED_RGB, pix->colorspace,
			V4L2_MAP_YCBCR_ENC_DEFAULT(pix->colorspace));
	return quantization == V4L2_QUANTIZATION_FULL_RANGE;
}

/* The format to ask for, or 0 to keep the current one; -1 when nothing
 * the device offers can be used. */
static int64_t wanted_format(const struct capture_device *device,
			     const struct device_request *request, uint32_t current)
{
	char offered[OFFERED_LIST_MAX], text[5];

	if (!request->need_conversion)
		return request->fourcc;
	if (request->fourcc != 0 && pixel_format_find(request->fourcc) == NULL) {
		fourcc_text(request->fourcc, text);
		fprintf(stderr,
			"grabber: %s: pixel format %s cannot be converted to PPM "
			"(convertible: %s); use --raw to save it as it is\n",
			device->path, text, pixel_format_list());
		return -1;
	}
	if (request->fourcc != 0 || pixel_format_find(current))
		return request->fourcc;
	uint32_t convertible = offered_formats(device->fd, offered);

	if (convertible == 0) {
		fprintf(stderr,
			"grabber: %s: offers no pixel format that converts to PPM "
			"(offers: %s); use --raw\n",
			device->path, offered);
		return -1;
	}
	return convertible;
}

static int negotiate_format(struct capture_device *device, const struct device_request *request)
{
	struct v4l2_format format = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_pix_format *pix = &format.fmt.pix;
	char offered[OFFERED_LIST_MAX], text[5];

	if (xioctl(device->fd, VIDIOC_G_FMT, &format) != 0) {
		fprintf(stderr, "grabber: %s: VIDIOC_G_FMT: %s\n", device->path, strerror(errno));
		return -1;
	}
	int64_t wanted = wanted_format(device, request, pix->pixelformat);

	if (wanted < 0)
		return -1;
	if (wanted != 0 || request->width != 0) {
		if (wanted != 0)
			pix->pixelformat = (uint32_t)wanted;
		if (request->width != 0) {
			pix->width = request->width;
			pix->height = request->height;
		}
		pix->bytesperline = 0; /* let the driver choose its padding */
		if (xioctl(device->fd, VIDIOC_S_FMT, &format) != 0) {
			fprintf(stderr, "grabber: %s: VIDIOC_S_FMT: %s\n", device->path,
				strerror(errno));
			return -1;
		}
		/* Drivers answer an unknown format with one of theirs. */
		if (wanted != 0 && pix->pixelformat != (uint32_t)wanted) {
			offered_formats(device->fd, offered);
			fourcc_text((uint32_t)wanted, text);
			fprintf(stderr, "grabber: %s: does not offer pixel format %s (offers: %s)\n",
				device->path, text, offered);
			return -1;
		}
		if (request->width != 0 &&
		    (pix->width != request->width || pix->height != request->height))
			fprintf(stderr, "grabber: %s: asked for %ux%u, the device gives %ux%u\n",
				device->path, request->width, request->height, pix->width,
				pix->height);
	}
	device->format = *pix;
	if (request->need_conversion) {
		const struct pixel_format *converted = pixel_format_find(pix->pixelformat);

		if (frame_layout_init(&device->layout, pix->pixelformat, pix->width, pix->height,
				      pix->bytesperline, encoding_of(pix),
				      is_full_range(pix, converted)) != 0) {
			fprintf(stderr, "grabber: %s: unusable layout %ux%u, %u bytes per line\n",
				device->path, pix->width, pix->height, pix->bytesperline);
			return -1;
		}
	}
	return 0;
}

/* Records the frame period and, when fps is not 0, asks for 1/fps first.
 * A rate the device cannot take is not fatal: frames still come. */
static void negotiate_frame_rate(struct capture_device *device, unsigned fps)
{
	struct v4l2_streamparm parm = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
	struct v4l2_fract *period = &parm.parm.capture.timeperframe;

	if (xioctl(device->fd, VIDIOC_G_PARM, &parm) != 0 ||
	    !(parm.parm.capture.capability & V4L2_CAP_TIMEPERFRAME)) {
		if (fps != 0)
			fprintf(stderr, "grabber: %s: cannot set the frame rate\n", device->path);
		return;
	}
	if (fps != 0) {
		*period = (struct v4l2_fract){ 1, fps };
		if (xioctl(device->fd, VIDIOC_S_PARM, &parm) != 0)
			fprintf(stderr, "grabber: %s: VIDIOC_S_PARM: %s\n", device->path,
				strerror(errno));
		else if (period->numerator * fps != period->denominator)
			fprintf(stderr, "grabber: %s: asked for %u fps, the device gives %u/%u\n",
				device->path, fps, period->denominator, period->numerator);
	}
	device->frame_period = *period;
}

static int map_buffers(struct capture_device *device, unsigned count)
{
	struct v4l2_requestbuffers request = {
		.count = count,
		.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
		.memory = V4L2_MEMORY_MMAP,
	};

	if (xioctl(device->fd, VIDIOC_REQBUFS, &request) != 0) {
		fprintf(stderr, "grabber: %s: mmap streaming: %s\n", device->path, strerror(errno));
		return -1;
	}
	/* With one buffer the driver would have nothing to fill while the
	 * grabber holds it. */
	if (request.count < 2) {
		fprintf(stderr, "grabber: %s: got %u buffer(s), need at least 2\n", device->path,
			request.count);
		return -1;
	}
	device->buffers = calloc(request.count, sizeof(*device->buffers));
	if (device->buffers == NULL) {
		fprintf(stderr, "grabber: %s: out of memory\n", device->path);
		return -1;
	}
	for (unsigned i = 0; i < request.count; i++) {
		struct v4l2_buffer buffer = {
			.index = i,
			.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
			.memory = V4L2_MEMORY_MMAP,
		};

		if (xioctl(device->fd, VIDIOC_QUERYBUF, &buffer) != 0) {
			fprintf(stderr, "grabber: %s: VIDIOC_QUERYBUF: %s\n", device->path,
				strerror(errno));
			return -1;
		}
		void *start = mmap(NULL, buffer.length, PROT_READ, MAP_SHARED, device->fd,
				   buffer.m.offset);

		if (start == MAP_FAILED) {
			fprintf(stderr, "grabber: %s: mmap: %s\n", device->path, strerror(errno));
			return -1;
		}
		device->buffers[i] = (struct mapped_buffer){ start, buffer.length };
		device->buffer_count = i + 1;
		if (xioctl(device->fd, VIDIOC_QBUF, &buffer) != 0) {
			fprintf(stderr, "grabber: %s: VIDIOC_QBUF: %s\n", device->path,
				strerror(errno));
			return -1;
		}
	}
	return 0;
}

int device_start(struct capture_device *device, const char *path,
		 const struct device_request *request)
{
	enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	*device = (struct capture_device){ .path = path };
	device->fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (device->fd < 0) {
		fprintf(stderr, "grabber: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (check_capabilities(device) != 0 || negotiate_format(device, request) != 0)
		goto fail;
	negotiate_frame_rate(device, request->fps);
	if (map_buffers(device, request->buffers) != 0)
		goto fail;
	if (xioctl(device->fd, VIDIOC_STREAMON, &type) != 0) {
		fprintf(stderr, "grabber: %s: VIDIOC_STREAMON: %s\n", path, strerror(errno));
		goto fail;
	}
	device->streaming = 1;
	return 0;
fail:
	device_close(device);
	return -1;
}

int device_dequeue(struct capture_device *device, struct v4l2_buffer *buffer)
{
	*buffer = (struct v4l2_buffer){
		.type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
		.memory = V4L2_MEMORY_MMAP,
	};
	if (xioctl(device->fd, VIDIOC_DQBUF, buffer) == 0)
		return 1;
	return errno == EAGAIN ? 0 : -1;
}

int device_requeue(struct capture_device *device, struct v4l2_buffer *buffer)
{
	return xioctl(device->fd, VIDIOC_QBUF, buffer);
}

void device_stop(struct capture_device *device)
{
	enum v4l2_buf_type type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	if (device->streaming) {
		xioctl(device->fd, VIDIOC_STREAMOFF, &type);
		device->streaming = 0;
	}
}

void device_close(struct capture_device *device)
{
	device_stop(device);
	for (unsigned i = 0; i < device->buffer_count; i++)
		munmap(device->buffers[i].start, device->buffers[i].length);
	free(device->buffers);
	device->buffers = NULL;
	device->buffer_count = 0;
	if (device->fd >= 0)
		close(device->fd);
	device->fd = -1;
}
