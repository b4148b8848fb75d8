// SPDX-License-Identifier: GPL-2.0
/*
 * edf: preemptive earliest-deadline-first; task priorities are ignored.
 * partitioned-edf is the same on each of several CPUs.
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
