// SPDX-License-Identifier: GPL-2.0
/*
 * rt_checks MODE: the kernel must refuse bad requests.  Raw ioctls are
 * used so that the kernel's checks are tested, not the library's.
 * Prints "PASS name" or "FAIL name: ..." per check; exits 1 on a failure.
 *   noplugin  no plugin loaded: RUN gives ENODEV
 *   fp        the fp plugin is loaded
 *   hsf       the hsf-fp plugin is loaded, no servers yet
 *   unpriv    run without CAP_SYS_NICE: EPERM
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "rt.h"
#include "rtsched_uapi.h"

static int fd, failed;

static void expect(const char *name, unsigned long cmd, void *arg, int err)
{
	int ret = ioctl(fd, cmd, arg);
	int got = ret ? errno : 0;

	if (got == err) {
		printf("PASS %s\n", name);
	} else {
		printf("FAIL %s: expected %s, got %s\n", name, strerror(err),
		       strerror(got));
		failed = 1;
	}
}

static struct rtsched_task_args task(int id, int server)
{
	struct rtsched_task_args a = {
		.id = id, .server = server, .prio = 1, .period_us = 10000,
		.wcet_us = 1000, .deadline_us = 10000,
	};
	return a;
}

static void check_task_args(int server)
{
	struct rtsched_task_args a;

	a = task(1, server);
	a.period_us = 0;
	expect("zero period", RTSCHED_IOC_RESERVE, &a, EINVAL);
	a = task(1, server);
	a.wcet_us = 20000;
	a.deadline_us = 10000;
	expect("wcet > deadline", RTSCHED_IOC_RESERVE, &a, EINVAL);
	a = task(1, server);
	a.deadline_us = 20000;
	expect("deadline > period", RTSCHED_IOC_RESERVE, &a, EINVAL);
	a = task(1, server);
	a.prio = 100;
	expect("priority 100", RTSCHED_IOC_RESERVE, &a, EINVAL);
	a.prio = -1;
	expect("priority -1", RTSCHED_IOC_RESERVE, &a, EINVAL);
	a = task(256, server);
	expect("task id 256", RTSCHED_IOC_RESERVE, &a, EINVAL);
	a = task(1, server);
	a.period_us = ~0ULL;
	expect("huge period", RTSCHED_IOC_RUN, &a, EINVAL);
	a = task(1, server);
	a.flags = 0x80;
	expect("unknown flags", RTSCHED_IOC_RUN, &a, EINVAL);
	a = task(7, server);
	a.flags = RTSCHED_USE_RESERVATION;
	expect("run unreserved id", RTSCHED_IOC_RUN, &a, ENOENT);
	a = task(1, server);
	expect("reserve", RTSCHED_IOC_RESERVE, &a, 0);
	expect("duplicate task id", RTSCHED_IOC_RESERVE, &a, EINVAL);
	expect("run duplicate id", RTSCHED_IOC_RUN, &a, EINVAL);
	expect("wait without run", RTSCHED_IOC_WAIT, NULL, EINVAL);
	expect("exit without run", RTSCHED_IOC_EXIT, NULL, EINVAL);
	expect("bad pointer", RTSCHED_IOC_RUN, (void *)16, EFAULT);
	expect("unknown ioctl", _IO(RTSCHED_IOC_MAGIC, 99), NULL, ENOTTY);
	expect("clear", RTSCHED_IOC_CLEAR, NULL, 0);
}

static struct rtsched_server_args server(int id, int budget)
{
	struct rtsched_server_args s = {
		.id = id, .prio = 1, .period_us = 10000, .budget_us = budget,
	};
	return s;
}

int main(int argc, char **argv)
{
	struct rtsched_server_args s;
	struct rtsched_task_args a;
	const char *mode = argc > 1 ? argv[1] : "";

	fd = open(RTSCHED_DEVICE, O_RDWR);
	if (fd < 0) {
		perror(RTSCHED_DEVICE);
		return 1;
	}
	if (!strcmp(mode, "noplugin")) {
		a = task(1, RTSCHED_NO_SERVER);
		expect("run without plugin", RTSCHED_IOC_RUN, &a, ENODEV);
		s = server(0, 1000);
		expect("server without plugin", RTSCHED_IOC_CREATE_SERVER,
		       &s, ENODEV);
	} else if (!strcmp(mode, "fp")) {
		s = server(0, 1000);
		expect("server under fp", RTSCHED_IOC_CREATE_SERVER, &s,
		       EINVAL);
		a = task(1, 0);
		expect("task with server under fp", RTSCHED_IOC_RESERVE, &a,
		       EINVAL);
		check_task_args(RTSCHED_NO_SERVER);
	} else if (!strcmp(mode, "hsf")) {
		s = server(0, 20000);
		expect("budget > period", RTSCHED_IOC_CREATE_SERVER, &s,
		       EINVAL);
		s = server(0, 0);
		expect("zero budget", RTSCHED_IOC_CREATE_SERVER, &s, EINVAL);
		s = server(64, 1000);
		expect("server id 64", RTSCHED_IOC_CREATE_SERVER, &s, EINVAL);
		s = server(0, 1000);
		s.prio = 100;
		expect("server priority 100", RTSCHED_IOC_CREATE_SERVER, &s,
		       EINVAL);
		s = server(0, 1000);
		s.period_us = 0;
		expect("zero server period", RTSCHED_IOC_CREATE_SERVER, &s,
		       EINVAL);
		a = task(1, 5);
		expect("unknown server", RTSCHED_IOC_RESERVE, &a, EINVAL);
		a = task(1, RTSCHED_NO_SERVER);
		expect("no server under hsf-fp", RTSCHED_IOC_RESERVE, &a,
		       EINVAL);
		s = server(0, 1000);
		expect("create server", RTSCHED_IOC_CREATE_SERVER, &s, 0);
		expect("duplicate server id", RTSCHED_IOC_CREATE_SERVER, &s,
		       EINVAL);
		check_task_args(0);
	} else if (!strcmp(mode, "unpriv")) {
		s = server(0, 1000);
		expect("unprivileged server", RTSCHED_IOC_CREATE_SERVER, &s,
		       EPERM);
		a = task(1, RTSCHED_NO_SERVER);
		expect("unprivileged reserve", RTSCHED_IOC_RESERVE, &a, EPERM);
		expect("unprivileged run", RTSCHED_IOC_RUN, &a, EPERM);
		expect("unprivileged clear", RTSCHED_IOC_CLEAR, NULL, EPERM);
		if (rt_init() || rt_set_period(10) || rt_set_wcet(1) ||
		    rt_run(0) != -EPERM) {
			printf("FAIL library run: %s\n", rt_last_error());
			failed = 1;
		} else {
			printf("PASS library run: %s\n", rt_last_error());
		}
	} else {
		fprintf(stderr, "usage: rt_checks noplugin|fp|hsf|unpriv\n");
		return 2;
	}
	return failed;
}
