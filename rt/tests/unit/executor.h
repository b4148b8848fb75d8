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
	/* Per CPU (one but under a global policy): its task + 1 (0: none). */
	int on_cpu[RTS_MAX_CPUS];
	unsigned long long on_cpu_job[RTS_MAX_CPUS];
	unsigned long long started[RTS_MAX_TASKS];	/* jobs started */
	/* The CPU (+ 1) a task's job last_job ran on: where it resumes. */
	int last_cpu[RTS_MAX_TASKS];
	unsigned long long last_job[RTS_MAX_TASKS];
};

static inline long long min_time(long long a, long long b)
{
	return a < b ? a : b;
}

/* The job task id is on: its oldest uncompleted one. */
static inline unsigned long long current_job(const struct rts_sched *s, int id)
{
	return s->task[id].completed;
}

/* Does CPU k hold the current job of task id? */
static inline int holds(const struct rts_sched *s, const struct cpu *c, int k,
			int id)
{
	return c->on_cpu[k] == id + 1 &&
	       c->on_cpu_job[k] == current_job(s, id);
}

/*
 * The CPU of each chosen task: a split policy's run[] is by CPU already;
 * otherwise as Linux's real-time class places them and the simulator
 * says: a job that keeps running keeps its CPU; the others, in the
 * policy's order, take the CPU their job last ran on if it is free, else
 * the lowest free one.
 */
static inline void place(const struct rts_sched *s, const struct cpu *c,
			 int *on)
{
	int i, k, id;

	if (s->policy->split) {
		for (k = 0; k < s->nr_cpus; k++)
			on[k] = s->run[k];
		return;
	}
	for (k = 0; k < s->nr_cpus; k++)
		on[k] = RTS_NONE;
	for (i = 0; i < s->nr_cpus && s->run[i] != RTS_NONE; i++)
		for (k = 0; k < s->nr_cpus; k++)
			if (holds(s, c, k, s->run[i]))
				on[k] = s->run[i];
	for (i = 0; i < s->nr_cpus && (id = s->run[i]) != RTS_NONE; i++) {
		for (k = 0; k < s->nr_cpus && on[k] != id; k++)
			;
		if (k < s->nr_cpus)
			continue;
		k = c->last_cpu[id] - 1;
		if (k < 0 || c->last_job[id] != current_job(s, id) ||
		    on[k] != RTS_NONE)
			for (k = 0; on[k] != RTS_NONE; k++)
				;
		on[k] = id;
	}
}

/*
 * The job events of the switches to on[] (a task per CPU), at s->now.  A
 * job's CPU is in c->on_cpu when its event is emitted (cpu_of()).
 */
static inline void job_switch(struct rts_sched *s, struct cpu *c, const int *on)
{
	unsigned long long job;
	int k, prev;

	/* Preemptions first: a job may start on the CPU another one left. */
	for (k = 0; k < s->nr_cpus; k++) {
		prev = c->on_cpu[k] - 1;
		if (prev == RTS_NONE || (prev == on[k] && holds(s, c, k, prev)))
			continue;
		if (s->task[prev].completed <= c->on_cpu_job[k])
			rts_emit(s, s->now, RTS_EV_PREEMPT, prev,
				 s->task[prev].p.server, c->on_cpu_job[k], 0);
		c->on_cpu[k] = 0;
	}
	for (k = 0; k < s->nr_cpus; k++) {
		if (on[k] == RTS_NONE || c->on_cpu[k])
			continue;
		job = current_job(s, on[k]);
		c->on_cpu[k] = on[k] + 1;
		c->on_cpu_job[k] = job;
		c->last_cpu[on[k]] = k + 1;
		c->last_job[on[k]] = job;
		rts_emit(s, s->now, c->started[on[k]] > job ? RTS_EV_RESUME :
			 RTS_EV_START, on[k], s->task[on[k]].p.server, job, 0);
		c->started[on[k]] = job + 1;
	}
}

/* The CPU task id is on, or 0. */
static inline int cpu_of(const struct rts_sched *s, const struct cpu *c, int id)
{
	int k;

	for (k = 0; k < s->nr_cpus; k++)
		if (c->on_cpu[k] == id + 1)
			return k;
	return 0;
}

/*
 * Run the schedule from the current time to until: the chosen tasks run
 * (one per CPU; a split policy's CPUs may idle between them), each job for
 * its wcet (or forever, spinning).
 */
static inline void execute(struct rts_sched *s, struct cpu *c, long long until)
{
	int on[RTS_MAX_CPUS], done[RTS_MAX_CPUS];
	int i, n, run;

	while (s->now < until) {
		long long step;

		rts_choose(s);
		step = min_time(rts_next_event(s), until) - s->now;
		place(s, c, on);
		if (c->job_events)
			job_switch(s, c, on);
		for (i = 0; i < s->nr_cpus; i++) {
			run = s->run[i];
			if (run == RTS_NONE)
				continue;
			if (c->left[run] == 0)
				c->left[run] = s->task[run].p.wcet;
			if (!c->spin[run])
				step = min_time(step, c->left[run]);
		}
		for (i = 0, n = 0; i < s->nr_cpus; i++) {
			struct rts_task *t;

			run = s->run[i];
			if (run == RTS_NONE)
				continue;
			t = &s->task[run];

			c->ran_task[run] += step;
			if (t->p.server != RTS_NONE)
				c->ran_server[t->p.server] += step;
			if (c->spin[run])
				continue;
			c->left[run] -= step;
			if (c->left[run] == 0)
				done[n++] = run;
		}
		/* Jobs that end now complete before now's deadline checks. */
		if (n)
			rts_complete_all(s, done, n, s->now + step);
		else
			rts_advance(s, s->now + step);
	}
}

#endif /* EXECUTOR_H */
