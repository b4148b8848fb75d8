// SPDX-License-Identifier: GPL-2.0
/*
 * fp: preemptive fixed-priority scheduling of periodic tasks; partitioned-fp
 * is the same on each of several CPUs.
 */
#include "rts.h"

static int fp_pick(const struct rts_sched *s)
{
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
