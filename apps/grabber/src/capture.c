#include "capture.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "device.h"
#include "frame_file.h"
#include "ppm.h"
#include "ready.h"

struct grabbed_device {
	struct capture_device device;
	uint8_t *rgb; /* conversion target, width * height * 3 bytes */
	unsigned long frames; /* frames handled (and saved, with --output) */
	unsigned long corrupted; /* frames the driver flagged or cut short */
};

struct capture_state {
	const struct grabber_options *options;
	struct grabbed_device *devices;
	struct mux mux;
	int signal_fd;
	int ready_emitted;
	size_t active_count;
};

/* mux data of the signal descriptor; devices use their own address. */
static char signal_token;

static double seconds_of(const struct timespec *t)
{
	return (double)t->tv_sec + (double)t->tv_nsec / 1e9;
}

static double now_seconds(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return seconds_of(&t);
}

static double cpu_seconds(void)
{
	struct rusage usage;

	getrusage(RUSAGE_SELF, &usage);
	return (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
	       (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

static void emit_ready_line(struct capture_state *state, const struct grabbed_device *grabbed,
			    const struct v4l2_buffer *buffer, const struct timespec *boot,
			    const struct timespec *mono)
{
	char line[READY_LINE_MAX];
	struct ready_event event = {
		.device = grabbed->device.path,
		.sequence = buffer->sequence,
		.boot = *boot,
		.mono = *mono,
		.has_frame_time = (buffer->flags & V4L2_BUF_FLAG_TIMESTAMP_MASK) ==
				  V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC,
		.frame = { buffer->timestamp.tv_sec, buffer->timestamp.tv_usec * 1000L },
	};
	size_t len = ready_line_format(line, state->options->ready_marker, &event);

	ready_line_emit(line, len, "/dev/kmsg");
	state->ready_emitted = 1;
}

static int save_frame(struct capture_state *state, struct grabbed_device *grabbed,
		      const struct v4l2_buffer *buffer)
{
	const struct capture_device *device = &grabbed->device;
	const uint8_t *pixels = device->buffers[buffer->index].start;
	const char *stem = device_stem(device->path);
	char name[NAME_MAX + 1], header[PPM_HEADER_MAX], fourcc[5];
	struct iovec parts[2];
	int part_count;

	if (state->options->raw) {
		fourcc_text(device->format.pixelformat, fourcc);
		snprintf(name, sizeof(name), "%s-%06lu-%ux%u-%s.raw", stem, grabbed->frames,
			 device->format.width, device->format.height, fourcc);
		parts[0] = (struct iovec){ (void *)pixels, buffer->bytesused };
		part_count = 1;
	} else {
		/* is_corrupted() has made sure the frame is long enough. */
		frame_to_rgb24(&device->layout, pixels, buffer->bytesused, grabbed->rgb);
		snprintf(name, sizeof(name), "%s-%06lu.ppm", stem, grabbed->frames);
		parts[0] = (struct iovec){ header,
					   ppm_header(header, device->layout.width,
						      device->layout.height) };
		parts[1] = (struct iovec){ grabbed->rgb, (size_t)device->layout.width *
								 device->layout.height * 3 };
		part_count = 2;
	}
	if (frame_file_write(state->options->output_dir, name, parts, part_count) != 0) {
		fprintf(stderr, "grabber: %s: saving %s/%s: %s\n", device->path,
			state->options->output_dir, name, strerror(errno));
		return -1;
	}
	return 0;
}

/* A frame the driver flagged, or one too short to convert, is counted
 * and dropped rather than saved. */
static int is_corrupted(const struct capture_state *state, const struct grabbed_device *grabbed,
			const struct v4l2_buffer *buffer)
{
	return (buffer->flags & V4L2_BUF_FLAG_ERROR) ||
	       (!state->options->raw && state->options->output_dir != NULL &&
		buffer->bytesused < frame_layout_min_bytes(&grabbed->device.layout));
}

static void finish_device(struct capture_state *state, struct grabbed_device *grabbed)
{
	mux_remove(&state->mux, grabbed->device.fd);
	device_stop(&grabbed->device);
	state->active_count--;
}

/* What the mux said about a descriptor besides "readable", for messages. */
static const char *describe_flags(unsigned flags)
{
	if ((flags & MUX_ERROR) && (flags & MUX_HANGUP))
		return "an error and a hang-up";
	if (flags & MUX_ERROR)
		return "an error";
	return (flags & MUX_HANGUP) ? "a hang-up" : "readable";
}

/* Explains a failed VIDIOC_DQBUF or VIDIOC_QBUF. A device unplugged or
 * unbound between the wake-up and the ioctl fails either one with ENODEV
 * (QBUF when the frame was dequeued just before), and that is the same
 * event for the user whichever ioctl saw it. */
static void report_ioctl_failure(const struct capture_state *state,
				 const struct grabbed_device *grabbed, const char *ioctl_name,
				 unsigned flags)
{
	int error = errno;

	fprintf(stderr, "grabber: %s: ", grabbed->device.path);
	if (error == ENODEV)
		fprintf(stderr, "device removed during capture");
	else
		fprintf(stderr, "%s failed", ioctl_name);
	fprintf(stderr, " (%s; %s after %s reported %s) after %lu frames\n", strerror(error),
		ioctl_name, mux_kind_name(state->options->mux), describe_flags(flags),
		grabbed->frames);
}

/* Dequeues, reports, saves and requeues one frame of a ready device;
 * returns -1 after explaining a failure that ends the capture. */
static int handle_device(struct capture_state *state, struct grabbed_device *grabbed,
			 unsigned flags)
{
	struct capture_device *device = &grabbed->device;
	struct v4l2_buffer buffer;
	struct timespec boot, mono;
	int got = device_dequeue(device, &buffer);

	clock_gettime(CLOCK_BOOTTIME, &boot);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	if (got < 0) {
		report_ioctl_failure(state, grabbed, "VIDIOC_DQBUF", flags);
		return -1;
	}
	if (got == 0) {
		if (flags & (MUX_ERROR | MUX_HANGUP)) {
			fprintf(stderr, "grabber: %s: %s reported %s and there is no frame\n",
				device->path, mux_kind_name(state->options->mux),
				describe_flags(flags));
			return -1;
		}
		return 0; /* woken, but the frame went elsewhere: nothing to do */
	}
	if (is_corrupted(state, grabbed, &buffer)) {
		if (grabbed->corrupted++ == 0)
			fprintf(stderr, "grabber: %s: dropping corrupted frame (%u bytes, flags 0x%x)\n",
				device->path, buffer.bytesused, buffer.flags);
	} else {
		if (!state->ready_emitted)
			emit_ready_line(state, grabbed, &buffer, &boot, &mono);
		if (state->options->output_dir != NULL && save_frame(state, grabbed, &buffer) != 0)
			return -1;
		grabbed->frames++;
	}
	if (device_requeue(device, &buffer) != 0) {
		report_ioctl_failure(state, grabbed, "VIDIOC_QBUF", flags);
		return -1;
	}
	if (state->options->frames != 0 && grabbed->frames == state->options->frames)
		finish_device(state, grabbed);
	return 0;
}

static int setup_signals(struct capture_state *state)
{
	sigset_t stop_signals;

	/* Through a descriptor the mux watches, a signal cannot slip in
	 * between a check of a flag and the wait. Blocked signals are queued
	 * even when their disposition is "ignore", so this also works in a
	 * background job, which a shell starts with SIGINT ignored. */
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGINT);
	sigaddset(&stop_signals, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &stop_signals, NULL) != 0 ||
	    (state->signal_fd = signalfd(-1, &stop_signals, SFD_NONBLOCK | SFD_CLOEXEC)) < 0 ||
	    mux_add(&state->mux, state->signal_fd, &signal_token) != 0) {
		fprintf(stderr, "grabber: cannot watch SIGINT/SIGTERM: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int start_device(struct capture_state *state, struct grabbed_device *grabbed,
			const char *path)
{
	const struct grabber_options *options = state->options;
	struct device_request request = {
		.fourcc = options->fourcc,
		.width = options->width,
		.height = options->height,
		.fps = options->fps,
		.buffers = options->buffers,
		.need_conversion = options->output_dir != NULL && !options->raw,
	};
	struct capture_device *device = &grabbed->device;
	char fourcc[5];

	if (device_start(device, path, &request) != 0)
		return -1;
	state->active_count++;
	if (mux_add(&state->mux, device->fd, grabbed) != 0) {
		fprintf(stderr, "grabber: %s: cannot wait on descriptor %d with %s: %s\n", path,
			device->fd, mux_kind_name(options->mux),
			errno == ERANGE ? "it is not below FD_SETSIZE" : strerror(errno));
		return -1;
	}
	if (request.need_conversion) {
		grabbed->rgb = malloc((size_t)device->format.width * device->format.height * 3);
		if (grabbed->rgb == NULL) {
			fprintf(stderr, "grabber: %s: out of memory\n", path);
			return -1;
		}
	}
	fourcc_text(device->format.pixelformat, fourcc);
	fprintf(stderr, "grabber: %s: %s %ux%u, %u bytes per line, %u buffers, %u/%u s per frame\n",
		path, fourcc, device->format.width, device->format.height,
		device->format.bytesperline, device->buffer_count, device->frame_period.numerator,
		device->frame_period.denominator);
	return 0;
}

/* Waits and dispatches until every device has its frames, a stop signal
 * arrives or something fails; returns the exit status. */
static int run_loop(struct capture_state *state)
{
	size_t max_events = state->options->device_count + 1;
	struct mux_event events[max_events];

	while (state->active_count > 0) {
		int ready = mux_wait(&state->mux, events, max_events, -1);
		int stop = 0;

		if (ready < 0 && errno == EINTR)
			continue; /* e.g. resumed after SIGSTOP */
		if (ready < 0) {
			fprintf(stderr, "grabber: %s: %s\n", mux_kind_name(state->options->mux),
				strerror(errno));
			return 1;
		}
		for (int i = 0; i < ready; i++) {
			if (events[i].data == &signal_token) {
				stop = 1;
				continue;
			}
			if (handle_device(state, events[i].data, events[i].flags) != 0)
				return 1;
		}
		if (stop)
			return 0;
	}
	return 0;
}

static void print_summary(const struct capture_state *state, int status, double seconds,
			  double cpu)
{
	unsigned long frames = 0, corrupted = 0;

	for (size_t i = 0; i < state->options->device_count; i++) {
		frames += state->devices[i].frames;
		corrupted += state->devices[i].corrupted;
	}
	printf("grabber: %s mux=%s devices=%zu frames=%lu corrupted=%lu seconds=%.6f "
	       "cpu_seconds=%.6f\n",
	       status == 0 ? "done" : "failed", mux_kind_name(state->options->mux),
	       state->options->device_count, frames, corrupted, seconds, cpu);
	fflush(stdout);
}

/* Made before any device starts, so a bad directory costs no capture. */
static int prepare_output_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "grabber: cannot create %s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0) {
		fprintf(stderr, "grabber: %s is not a writable directory\n", dir);
		return -1;
	}
	return 0;
}

int capture_run(const struct grabber_options *options)
{
	struct capture_state state = { .options = options, .signal_fd = -1 };
	size_t count = options->device_count;
	int status = 1;

	if (options->output_dir != NULL && prepare_output_dir(options->output_dir) != 0)
		return 1;
	state.devices = calloc(count, sizeof(*state.devices));
	if (state.devices == NULL || mux_init(&state.mux, options->mux, count + 1) != 0) {
		fprintf(stderr, "grabber: %s\n", strerror(errno));
		free(state.devices);
		return 1;
	}
	for (size_t i = 0; i < count; i++)
		state.devices[i].device.fd = -1;
	if (setup_signals(&state) == 0) {
		size_t started = 0;

		while (started < count &&
		       start_device(&state, &state.devices[started], options->devices[started]) == 0)
			started++;
		if (started == count) {
			double start = now_seconds(CLOCK_MONOTONIC), start_cpu = cpu_seconds();

			status = run_loop(&state);
			print_summary(&state, status, now_seconds(CLOCK_MONOTONIC) - start,
				      cpu_seconds() - start_cpu);
		}
	}
	for (size_t i = 0; i < count; i++) {
		device_close(&state.devices[i].device);
		free(state.devices[i].rgb);
	}
	if (state.signal_fd >= 0)
		close(state.signal_fd);
	mux_destroy(&state.mux);
	free(state.devices);
	return status;
}
