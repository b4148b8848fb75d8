// SPDX-License-Identifier: GPL-2.0
/*
 * A periodic task written against the library API, for guest scenarios.
 *   rt_periodic [-i ID] [-s SERVER] [-p PRIO] [-T PERIOD_US] [-C WCET_US]
 *               [-D DEADLINE_US] [-o START_US] [-n JOBS] [-x]
 * -n 0 runs forever; -x spins forever inside the first job (overload).
 * If the plugin is unloaded under it, it reports its scheduling policy
 * (0 = SCHED_OTHER) and exits 3.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"

static unsigned long long cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000ULL + ts.tv_nsec / 1000;
}

static int die(const char *what, int err)
{
	if (err == -ENODEV) {
		printf("rt_periodic pid=%d detached policy=%d\n", getpid(),
		       sched_getscheduler(0));
		return 3;
	}
	fprintf(stderr, "rt_periodic: %s: %s\n", what, rt_last_error());
	return 1;
}

int main(int argc, char **argv)
{
	unsigned long long period = 10000, wcet = 1000, deadline = 0;
	unsigned long long start = 0, jobs = 10, j, t0;
	int id = -1, server = RT_NO_SERVER, prio = 0, spin = 0, opt, err;

	while ((opt = getopt(argc, argv, "i:s:p:T:C:D:o:n:x")) != -1) {
		switch (opt) {
		case 'i': id = atoi(optarg); break;
		case 's': server = atoi(optarg); break;
		case 'p': prio = atoi(optarg); break;
		case 'T': period = strtoull(optarg, NULL, 0); break;
		case 'C': wcet = strtoull(optarg, NULL, 0); break;
		case 'D': deadline = strtoull(optarg, NULL, 0); break;
		case 'o': start = strtoull(optarg, NULL, 0); break;
		case 'n': jobs = strtoull(optarg, NULL, 0); break;
		case 'x': spin = 1; break;
		default: return 2;
		}
	}
	err = rt_init();
	if (!err)
		err = rt_set_period_us(period);
	if (!err)
		err = rt_set_wcet_us(wcet);
	if (!err && deadline)
		err = rt_set_deadline_us(deadline);
	if (!err)
		err = rt_set_priority(prio);
	if (!err)
		err = rt_set_server(server);
	if (!err && id >= 0)
		err = rt_set_id(id);
	if (!err)
		err = rt_run_us(start);
	if (err)
		return die("setup", err);
	for (j = 0; !jobs || j < jobs; j++) {
		t0 = cpu_us();
		while (spin || cpu_us() - t0 < wcet)
			;
		err = rt_wait_for_period();
		if (err)
			return die("rt_wait_for_period", err);
	}
	printf("rt_periodic id=%d jobs=%llu done\n", rt_task_id(), j);
	return rt_exit() ? die("rt_exit", -errno) : 0;
}
