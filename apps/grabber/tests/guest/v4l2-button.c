/* v4l2-button: presses a button control of a V4L2 device by its name, e.g.
 *   v4l2-button /dev/video1 Disconnect
 * vivid's "Disconnect" button unregisters that instance's nodes the way a
 * removed USB camera would, so the guest test can remove a device under
 * each mux mode (unbinding the driver removes every vivid instance at
 * once). Exit status 1 when the control is missing or refused. */
#include <errno.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct v4l2_queryctrl query = { .id = V4L2_CTRL_FLAG_NEXT_CTRL };
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: v4l2-button DEVICE CONTROL-NAME\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "v4l2-button: cannot open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	while (ioctl(fd, VIDIOC_QUERYCTRL, &query) == 0) {
		if (query.type == V4L2_CTRL_TYPE_BUTTON &&
		    strcmp((const char *)query.name, argv[2]) == 0) {
			struct v4l2_control press = { .id = query.id, .value = 1 };
			int status = ioctl(fd, VIDIOC_S_CTRL, &press) == 0 ? 0 : 1;

			if (status != 0)
				fprintf(stderr, "v4l2-button: %s: %s\n", argv[2], strerror(errno));
			close(fd);
			return status;
		}
		query.id |= V4L2_CTRL_FLAG_NEXT_CTRL;
	}
	fprintf(stderr, "v4l2-button: %s has no button named '%s'\n", argv[1], argv[2]);
	close(fd);
	return 1;
}
