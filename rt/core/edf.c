// SPDX-License-Identifier: GPL-2.0
/*
 * edf: preemptive earliest-deadline-first; task priorities are ignored.
 * partitioned-edf is the same on each of several CPUs, global-edf over all
 * of them.
 */
#include "rts.h"

static int edf_pick(const struct rts_sched *s)
{
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
