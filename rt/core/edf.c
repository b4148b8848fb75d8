// SPDX-License-Identifier: GPL-2.0
/* edf: preemptive earliest-deadline-first; task priorities are ignored. */
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
