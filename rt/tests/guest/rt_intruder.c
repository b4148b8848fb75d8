// SPDX-License-Identifier: GPL-2.0
/*
 * rt_intruder PRIO RUN_US PERIOD_US DURATION_MS: a SCHED_FIFO thread of
 * priority PRIO outside rtsched, on the CPU it is started on, that runs
 * RUN_US of every PERIOD_US for DURATION_MS: what keeps a chosen task
 * from its CPU on a real system (a thread of higher priority, an interrupt
 * thread), for the kept_away scenario.  Exits 0, or 1 with a message.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long arg(const char *s, const char *what)
{
	char *end;
	long long v = strtoll(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v <= 0) {
		fprintf(stderr, "rt_intruder: bad %s: %s\n", what, s);
		exit(1);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct sched_param sp = { 0 };
	long long run, period, end, next;
	struct timespec ts;
	cpu_set_t here;

	if (argc != 5) {
		fprintf(stderr, "usage: rt_intruder PRIO RUN_US PERIOD_US DURATION_MS\n");
		return 1;
	}
	sp.sched_priority = (int)arg(argv[1], "priority");
	run = arg(argv[2], "run time") * 1000;
	period = arg(argv[3], "period") * 1000;
	end = now_ns() + arg(argv[4], "duration") * 1000000;
	if (run >= period) {
		fprintf(stderr, "rt_intruder: run time must be below the period\n");
		return 1;
	}
	CPU_ZERO(&here);
	CPU_SET(sched_getcpu(), &here);
	if (sched_setaffinity(0, sizeof(here), &here) ||
	    sched_setscheduler(0, SCHED_FIFO, &sp)) {
		fprintf(stderr, "rt_intruder: %s\n", strerror(errno));
		return 1;
	}
	for (next = now_ns(); next < end; next += period) {
		ts.tv_sec = next / 1000000000LL;
		ts.tv_nsec = next % 1000000000LL;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		while (now_ns() < next + run)
			;
	}
	return 0;
}
