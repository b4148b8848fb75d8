// SPDX-License-Identifier: GPL-2.0
/*
 * fp: preemptive fixed-priority scheduling of periodic tasks; partitioned-fp
 * is the same on each of several CPUs, global-fp over all of them.
 */
#include "rts.h"

static int fp_pick(const struct rts_sched *s, int cpu)
{
	(void)cpu;
	return rts_pick_fp(s, RTS_NONE);
}

const struct rts_policy rts_policy_fp = {
	.name = "fp",
	.pick = fp_pick,
};

const struct rts_policy rts_policy_partitioned_fp = {
	.name = "partitioned-fp",
	.per_cpu = 1,
	.pick = fp_pick,
};

/*
 * global-fp: one run queue over the real-time CPUs; rts_choose() picks
 * once per CPU (each pick skips the tasks chosen already), so the nr_cpus
 * first eligible jobs run, wherever they get a CPU: a job may migrate at
 * any preemption.
 */
const struct rts_policy rts_policy_global_fp = {
	.name = "global-fp",
	.global = 1,
	.pick = fp_pick,
};
