// SPDX-License-Identifier: GPL-2.0
/*
 * rt_jitter fp|fifo PERIOD_US JOBS [LABEL]: release jitter of a periodic task,
 * as (time the task is back in user space) - (planned release).
 *   fp    the task runs under the rtsched fp plugin (rt_wait_for_period)
 *   fifo  plain SCHED_FIFO at the framework's priority with an absolute
 *         clock_nanosleep() loop: what Linux gives without the framework
 * Prints one line: "jitter mode=M n=N median_ns=.. p99_ns=.. max_ns=..",
 * M the LABEL if given (the same mode measured beside something else).
 *
 * rt_jitter status: what any user may do beside the real-time work; drops
 * to nobody and reads the scheduler's status (rt_status()) in a loop until
 * killed.
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "rt.h"
#include "rt_internal.h"

#define FIFO_PRIO	50	/* rtsched's default task priority */

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* The scheduler's status, into tables as large as it has. */
static int read_status(struct rtsched_status *st)
{
	static struct rtsched_server_status sv[RTS_MAX_SERVERS];
	static struct rtsched_task_status ts[RTS_MAX_TASKS];

	return rt_status(st, sv, ts);
}

static int run_fp(long long period_ns, long long *lat, int jobs)
{
	struct rtsched_status st;
	long long epoch, start;
	int j;

	if (rt_init() || rt_set_period_us(period_ns / 1000) ||
	    rt_set_wcet_us(period_ns / 10000) || rt_run(0))
		goto fail;
	start = now_ns();
	/* The common start is known only once rt_run() has set it. */
	if (read_status(&st))
		goto fail;
	epoch = (long long)st.epoch_ns;
	lat[0] = start - epoch;
	for (j = 1; j < jobs; j++) {
		if (rt_wait_for_period())
			goto fail;
		lat[j] = now_ns() - (epoch + j * period_ns);
	}
	return rt_exit();
fail:
	fprintf(stderr, "rt_jitter: %s\n", rt_last_error());
	return 1;
}

static int run_fifo(long long period_ns, long long *lat, int jobs)
{
	struct sched_param sp = { .sched_priority = FIFO_PRIO };
	struct timespec ts;
	long long next;
	int j;

	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		perror("rt_jitter: sched_setscheduler");
		return 1;
	}
	next = now_ns() + 10 * period_ns;
	for (j = 0; j < jobs; j++, next += period_ns) {
		ts.tv_sec = next / 1000000000LL;
		ts.tv_nsec = next % 1000000000LL;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		lat[j] = now_ns() - next;
	}
	return 0;
}

static int read_status_as_nobody(void)
{
	struct rtsched_status st;

	if (setgid(65534) || setuid(65534)) {
		perror("rt_jitter: dropping to nobody");
		return 1;
	}
	if (rt_init())
		goto fail;
	while (!read_status(&st))
		;
fail:
	fprintf(stderr, "rt_jitter: %s\n", rt_last_error());
	return 1;
}

int main(int argc, char **argv)
{
	long long period_ns, *lat;
	int jobs, err;

	if (argc == 2 && !strcmp(argv[1], "status"))
		return read_status_as_nobody();
	if ((argc != 4 && argc != 5) ||
	    (strcmp(argv[1], "fp") && strcmp(argv[1], "fifo"))) {
		fprintf(stderr,
			"usage: rt_jitter fp|fifo PERIOD_US JOBS [LABEL] | status\n");
		return 2;
	}
	period_ns = atoll(argv[2]) * 1000;
	jobs = atoi(argv[3]);
	lat = calloc(jobs, sizeof(*lat));
	if (!lat || jobs < 2 || period_ns <= 0)
		return 2;
	mlockall(MCL_CURRENT | MCL_FUTURE);
	err = !strcmp(argv[1], "fp") ? run_fp(period_ns, lat, jobs) :
				       run_fifo(period_ns, lat, jobs);
	if (err)
		return 1;
	qsort(lat, jobs, sizeof(*lat), cmp);
	printf("jitter mode=%s n=%d median_ns=%lld p99_ns=%lld max_ns=%lld\n",
	       argc == 5 ? argv[4] : argv[1], jobs, lat[jobs / 2], lat[jobs * 99 / 100],
	       lat[jobs - 1]);
	return 0;
}
