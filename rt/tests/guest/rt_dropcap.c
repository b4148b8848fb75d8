// SPDX-License-Identifier: GPL-2.0
/*
 * rt_dropcap PROGRAM [ARGS]: run PROGRAM without CAP_SYS_NICE, even as
 * root (busybox has no setpriv).  Dropping it from the bounding set keeps
 * exec from granting it back.
 */
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: rt_dropcap PROGRAM [ARGS]\n");
		return 2;
	}
	if (prctl(PR_CAPBSET_DROP, CAP_SYS_NICE, 0, 0, 0) ||
	    syscall(SYS_capget, &hdr, data)) {
		perror("rt_dropcap");
		return 1;
	}
	i = CAP_TO_INDEX(CAP_SYS_NICE);
	data[i].effective &= ~CAP_TO_MASK(CAP_SYS_NICE);
	data[i].permitted &= ~CAP_TO_MASK(CAP_SYS_NICE);
	data[i].inheritable &= ~CAP_TO_MASK(CAP_SYS_NICE);
	if (syscall(SYS_capset, &hdr, data)) {
		perror("rt_dropcap");
		return 1;
	}
	execvp(argv[1], argv + 1);
	perror("rt_dropcap: exec");
	return 127;
}
