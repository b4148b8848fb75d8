// SPDX-License-Identifier: GPL-2.0
/*
 * edf: preemptive earliest-deadline-first; task priorities are ignored.
 * partitioned-edf is the same on each of several CPUs, global-edf over all
 * of them; semi-partitioned-edf per CPU over the parts of split tasks.
 */
#include "rts.h"

static int edf_pick(const struct rts_sched *s, int cpu)
{
	(void)cpu;
	return rts_pick_edf(s, RTS_NONE);
}

const struct rts_policy rts_policy_edf = {
	.name = "edf",
	.tasks_by_deadline = 1,
	.pick = edf_pick,
};

const struct rts_policy rts_policy_partitioned_edf = {
	.name = "partitioned-edf",
	.tasks_by_deadline = 1,
	.per_cpu = 1,
	.pick = edf_pick,
};

/*
 * global-edf: one run queue over the real-time CPUs; rts_choose() picks
 * once per CPU (each pick skips the tasks chosen already), so the nr_cpus
 * first eligible jobs run, wherever they get a CPU: a job may migrate at
 * any preemption.
 */
const struct rts_policy rts_policy_global_edf = {
	.name = "global-edf",
	.tasks_by_deadline = 1,
	.global = 1,
	.pick = edf_pick,
};

/*
 * semi-partitioned-edf: EDF on each CPU over the parts placed there (C=D
 * splitting: docs/rt-analysis.md).  One scheduler over the real-time CPUs,
 * so that a split job moves from its first CPU to its second at the
 * instant its first part ends, with no other CPU's lock involved; pick()
 * fills run[cpu] with the earliest part deadline among the jobs whose
 * current part is on cpu.
 */
static int semi_pick(const struct rts_sched *s, int cpu)
{
	const struct rts_task *t;
	int best = RTS_NONE;
	int i, k;

	rts_for_each_running(s, k, i) {
		t = &s->task[i];
		if (!rts_candidate(t, RTS_NONE) || rts_part_cpu(t) != cpu)
			continue;
		if (best == RTS_NONE || rts_part_deadline(t) <
					rts_part_deadline(&s->task[best]))
			best = i;
	}
	return best;
}

/* The first instant a chosen job ends its first part, or RTS_NEVER. */
static long long semi_next_event(const struct rts_sched *s)
{
	const struct rts_task *t;
	long long end, first = RTS_NEVER;
	int i, k;

	rts_for_each_running(s, k, i) {
		t = &s->task[i];
		if (!t->chosen || !rts_pending(t) || !t->p.split ||
		    rts_in_second_part(t))
			continue;
		end = s->chosen_since + t->p.split - t->executed;
		if (end < first)
			first = end;
	}
	return first;
}

const struct rts_policy rts_policy_semi_partitioned_edf = {
	.name = "semi-partitioned-edf",
	.tasks_by_deadline = 1,
	.split = 1,
	.pick = semi_pick,
	.next_event = semi_next_event,
};
