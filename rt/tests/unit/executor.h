/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tiny executor that plays the CPU for the policy core on the host: it
 * runs whatever the policy picks and completes a job after its wcet (or
 * never, for a task told to spin).  Shared by the unit tests and by
 * core_replay, which the Python tests compare with the simulator.
 */
#ifndef EXECUTOR_H
#define EXECUTOR_H

#include "rts.h"

/* Executor state, all zero to start. */
struct cpu {
	long long left[RTS_MAX_TASKS];	/* work left in the current job */
	int spin[RTS_MAX_TASKS];	/* never completes */
	long long ran_task[RTS_MAX_TASKS];
	long long ran_server[RTS_MAX_SERVERS];
	/* With job_events, emit start/preempt/resume as the recorder does. */
	int job_events;
	int on_cpu;			/* task on the CPU + 1; 0: none */
	unsigned long long on_cpu_job;
	unsigned long long started[RTS_MAX_TASKS];	/* jobs started */
};

static inline long long min_time(long long a, long long b)
{
	return a < b ? a : b;
}

/* The job events of a switch from c->on_cpu to task run, at s->now. */
static inline void job_switch(struct rts_sched *s, struct cpu *c, int run)
{
	unsigned long long job = run == RTS_NONE ? 0 : s->task[run].completed;
	int prev = c->on_cpu - 1;

	if (prev == run && (run == RTS_NONE || job == c->on_cpu_job))
		return;
	if (prev != RTS_NONE && s->task[prev].completed <= c->on_cpu_job)
		rts_emit(s, s->now, RTS_EV_PREEMPT, prev, s->task[prev].p.server,
			 c->on_cpu_job, 0);
	if (run != RTS_NONE) {
		rts_emit(s, s->now, c->started[run] > job ? RTS_EV_RESUME :
			 RTS_EV_START, run, s->task[run].p.server, job, 0);
		c->started[run] = job + 1;
	}
	c->on_cpu = run + 1;
	c->on_cpu_job = job;
}

/* Run the schedule from the current time to until. */
static inline void execute(struct rts_sched *s, struct cpu *c, long long until)
{
	while (s->now < until) {
		int run = rts_choose(s);
		long long step = min_time(rts_next_event(s), until) - s->now;
		struct rts_task *t;

		if (c->job_events)
			job_switch(s, c, run);
		if (run == RTS_NONE) {
			rts_advance(s, s->now + step);
			continue;
		}
		t = &s->task[run];
		if (c->left[run] == 0)
			c->left[run] = t->p.wcet;
		if (!c->spin[run])
			step = min_time(step, c->left[run]);
		c->ran_task[run] += step;
		if (t->p.server != RTS_NONE)
			c->ran_server[t->p.server] += step;
		if (!c->spin[run])
			c->left[run] -= step;
		/* A job that ends now completes before now's deadline checks. */
		if (!c->spin[run] && c->left[run] == 0)
			rts_complete(s, run, s->now + step);
		else
			rts_advance(s, s->now + step);
	}
}

#endif /* EXECUTOR_H */
