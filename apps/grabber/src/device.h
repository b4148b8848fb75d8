/* One V4L2 capture device streaming into mmap'ed driver buffers. */
#ifndef GRABBER_DEVICE_H
#define GRABBER_DEVICE_H

#include <linux/videodev2.h>
#include <stddef.h>
#include <stdint.h>

#include "pixfmt.h"

struct device_request {
	uint32_t fourcc; /* 0: the device's current format, if usable */
	uint32_t width; /* 0: the device's current size */
	uint32_t height;
	unsigned fps; /* 0: the device's current rate */
	unsigned buffers;
	int need_conversion; /* the pixels will be converted to RGB24 */
};

struct mapped_buffer {
	void *start;
	size_t length;
};

struct capture_device {
	const char *path;
	int fd;
	struct v4l2_pix_format format; /* as negotiated */
	struct v4l2_fract frame_period; /* seconds per frame; 0/0 when unknown */
	struct frame_layout layout; /* valid when need_conversion was set */
	struct mapped_buffer *buffers;
	unsigned buffer_count;
	int streaming;
};

/* Opens path, negotiates the format, maps buffers and starts streaming.
 * Explains any failure on stderr and returns -1, leaving nothing open. */
int device_start(struct capture_device *device, const char *path,
		 const struct device_request *request);

/* Dequeues a filled buffer: 1 and *buffer set, 0 when none is ready yet,
 * -1 with errno (ENODEV when the device is gone). */
int device_dequeue(struct capture_device *device, struct v4l2_buffer *buffer);

/* Gives a dequeued buffer back to the driver. */
int device_requeue(struct capture_device *device, struct v4l2_buffer *buffer);

/* Stops streaming; safe to call more than once and on a device that has
 * gone away. */
void device_stop(struct capture_device *device);

/* Stops streaming, unmaps the buffers and closes the device. */
void device_close(struct capture_device *device);

#endif
