// SPDX-License-Identifier: GPL-2.0
/*
 * rt_dropcap PROGRAM [ARGS]: run PROGRAM without the capabilities rtsched
 * checks (CAP_SYS_NICE for real-time work, CAP_PERFMON and CAP_SYS_ADMIN
 * for reading the trace), even as root (busybox has no setpriv).
 * Dropping them from the bounding set keeps exec from granting them back.
 */
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const int dropped[] = { CAP_SYS_NICE, CAP_PERFMON, CAP_SYS_ADMIN };

int main(int argc, char **argv)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	unsigned int i, k;

	if (argc < 2) {
		fprintf(stderr, "usage: rt_dropcap PROGRAM [ARGS]\n");
		return 2;
	}
	for (i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++) {
		if (prctl(PR_CAPBSET_DROP, dropped[i], 0, 0, 0)) {
			perror("rt_dropcap");
			return 1;
		}
	}
	if (syscall(SYS_capget, &hdr, data)) {
		perror("rt_dropcap");
		return 1;
	}
	for (i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++) {
		k = CAP_TO_INDEX(dropped[i]);
		data[k].effective &= ~CAP_TO_MASK(dropped[i]);
		data[k].permitted &= ~CAP_TO_MASK(dropped[i]);
		data[k].inheritable &= ~CAP_TO_MASK(dropped[i]);
	}
	if (syscall(SYS_capset, &hdr, data)) {
		perror("rt_dropcap");
		return 1;
	}
	execvp(argv[1], argv + 1);
	perror("rt_dropcap: exec");
	return 127;
}
